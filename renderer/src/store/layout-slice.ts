/**
 * How the frame is laid out: whether the sidebar is collapsed to icons, and whether the status
 * bar shows its developer details. Pure UI state, remembered in the window's localStorage (it is
 * not a secret and main has no use for it).
 */
import type { SliceCreator } from './types';

/** The person's choice for the sidebar; `auto` collapses it only while the window is narrow. */
export type SidebarPreference = 'auto' | 'expanded' | 'collapsed';

/** Below this width the sidebar collapses on its own (unless the person chose otherwise). */
export const NARROW_WINDOW_QUERY = '(max-width: 959px)';

/** The part of `Storage` the slice uses (localStorage in the app, a map in tests). */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

const SIDEBAR_KEY = 'warden.sidebar';
const DETAILS_KEY = 'warden.status-details';
const WELCOME_KEY = 'warden.welcome';

/** Whether the sidebar is drawn collapsed for this preference and window width. */
export function isSidebarCollapsed(preference: SidebarPreference, narrowWindow: boolean): boolean {
  return preference === 'collapsed' || (preference === 'auto' && narrowWindow);
}

/**
 * The preference after the person presses the sidebar toggle: always the opposite of what they
 * see now, and explicit from then on, so the window width no longer overrides their choice.
 */
export function toggledSidebarPreference(preference: SidebarPreference, narrowWindow: boolean): SidebarPreference {
  return isSidebarCollapsed(preference, narrowWindow) ? 'expanded' : 'collapsed';
}

/** A stored preference, or `auto` for anything missing or unknown (a stale or edited value). */
export function parseSidebarPreference(raw: string | null): SidebarPreference {
  return raw === 'expanded' || raw === 'collapsed' ? raw : 'auto';
}

export interface LayoutSlice {
  sidebarPreference: SidebarPreference;
  /** True while the window is narrower than `NARROW_WINDOW_QUERY`'s width. */
  narrowWindow: boolean;
  /** Whether the status bar shows version, platform, start time and journal counts. */
  statusDetailsOpen: boolean;
  /** Whether the person dismissed the first-run welcome in Chat (remembered). */
  welcomeDismissed: boolean;
  /** A Settings section to bring into view when Settings opens (e.g. Models from the welcome), or null. */
  settingsSection: string | null;
  toggleSidebar(): void;
  toggleStatusDetails(): void;
  dismissWelcome(): void;
  /** Opens Settings at one section. */
  openSettingsAt(section: string): void;
  /** Called by Settings once it has shown the requested section. */
  settingsSectionShown(): void;
  /** Follows the window's width for the `auto` sidebar; returns the unsubscribe function. */
  watchWindowWidth(): () => void;
}

/** The browser's localStorage when there is one (not in Node unit tests, nor if storage is blocked). */
function defaultStorage(): KeyValueStorage | null {
  try {
    return (globalThis as { localStorage?: KeyValueStorage }).localStorage ?? null;
  } catch {
    return null;
  }
}

/** The part of `MediaQueryList` the slice uses (declared here: the Node typecheck has no DOM types). */
interface MediaQuery {
  readonly matches: boolean;
  addEventListener(type: 'change', listener: () => void): void;
  removeEventListener(type: 'change', listener: () => void): void;
}

/** The browser's matchMedia for the narrow-window query, or null outside a browser. */
function narrowQuery(): MediaQuery | null {
  const match = (globalThis as { matchMedia?: (q: string) => MediaQuery }).matchMedia;
  return typeof match === 'function' ? match.call(globalThis, NARROW_WINDOW_QUERY) : null;
}

/**
 * Creates the layout slice.
 *
 * Why remembered: a person who collapses the sidebar or opens the details expects to find them so
 * the next time the window opens. Storage failures only lose that memory, never the layout.
 */
export const createLayoutSlice: SliceCreator<LayoutSlice> = ({ storage }) => (set, get) => {
  const store = storage === undefined ? defaultStorage() : storage;
  const read = (key: string): string | null => {
    try {
      return store?.getItem(key) ?? null;
    } catch {
      return null;
    }
  };
  const write = (key: string, value: string) => {
    try {
      store?.setItem(key, value);
    } catch {
      /* the layout still changes; it is only not remembered */
    }
  };
  return {
    sidebarPreference: parseSidebarPreference(read(SIDEBAR_KEY)),
    narrowWindow: narrowQuery()?.matches ?? false,
    statusDetailsOpen: read(DETAILS_KEY) === 'open',
    welcomeDismissed: read(WELCOME_KEY) === 'dismissed',
    settingsSection: null,
    toggleSidebar() {
      const next = toggledSidebarPreference(get().sidebarPreference, get().narrowWindow);
      write(SIDEBAR_KEY, next);
      set({ sidebarPreference: next });
    },
    toggleStatusDetails() {
      const open = !get().statusDetailsOpen;
      write(DETAILS_KEY, open ? 'open' : 'closed');
      set({ statusDetailsOpen: open });
    },
    dismissWelcome() {
      write(WELCOME_KEY, 'dismissed');
      set({ welcomeDismissed: true });
    },
    openSettingsAt(section) {
      set({ settingsSection: section });
      get().navigate('settings');
    },
    settingsSectionShown() {
      set({ settingsSection: null });
    },
    watchWindowWidth() {
      const query = narrowQuery();
      if (!query) return () => {};
      const update = () => set({ narrowWindow: query.matches });
      update();
      query.addEventListener('change', update);
      return () => query.removeEventListener('change', update);
    },
  };
};
