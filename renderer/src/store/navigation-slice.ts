/**
 * Which view the app frame shows, and the commands main sends from the application menu and
 * from notifications (`app:command`): show a view, start a new chat, open settings.
 *
 * A command only moves the frame: it carries no data a view would act on, so a command can
 * never approve, reject or run anything.
 */
import type { AppCommand } from '../../../shared/contract/app';
import type { SliceCreator } from './types';

/** Every view of the app frame, in navigation order. */
export const VIEW_IDS = ['chat', 'servers', 'permissions', 'approvals', 'activity', 'recovery', 'settings'] as const;
export type ViewId = (typeof VIEW_IDS)[number];

export interface NavigationSlice {
  view: ViewId;
  /** Opens a view; unknown ids are ignored so a stale link cannot blank the frame. */
  navigate(view: ViewId): void;
  /** Counts "New Chat" requests; the Chat view starts a conversation when it changes. */
  newChatRequests: number;
  /** A short note about a command this version cannot carry out, until dismissed or the next navigation. */
  navigationNotice: string | null;
  dismissNavigationNotice(): void;
  /** Carries out one command from main; anything it does not know is ignored. */
  runAppCommand(command: AppCommand): void;
  /** Follows `app:command` for the window's lifetime; returns an unsubscribe. */
  watchAppCommands(): () => void;
}

const isView = (view: unknown): view is ViewId => typeof view === 'string' && (VIEW_IDS as readonly string[]).includes(view);

/**
 * Creates the navigation slice, starting on Chat.
 *
 * Why a slice and not component state: other slices (approvals, recovery) and main's menu and
 * notifications send the person to a view, e.g. "3 calls waiting" → Approvals.
 */
export const createNavigationSlice: SliceCreator<NavigationSlice> = ({ api }) => (set, get) => ({
  view: 'chat',
  newChatRequests: 0,
  navigationNotice: null,
  navigate(view) {
    if (isView(view)) set({ view, navigationNotice: null });
  },
  dismissNavigationNotice() {
    set({ navigationNotice: null });
  },
  runAppCommand(command) {
    switch (command?.type) {
      case 'show-view':
        get().navigate(command.view as ViewId);
        return;
      case 'new-chat':
        set({ view: 'chat', navigationNotice: null, newChatRequests: get().newChatRequests + 1 });
        return;
      case 'open-settings':
        get().navigate('settings');
        return;
      default:
        return;
    }
  },
  watchAppCommands() {
    try {
      return api().app.onCommand((command) => get().runAppCommand(command));
    } catch {
      // Without a bridge there are no commands to follow (the core slice reports NOT_CONNECTED).
      return () => {};
    }
  },
});
