/**
 * The theme preference (system / light / dark): stored in settings, applied through the host's
 * Appearance port, served on `theme:get` / `theme:set`, announced on `theme:changed`.
 *
 * Main's Appearance sets Electron's `nativeTheme.themeSource`, so Chromium reflects the choice in
 * `prefers-color-scheme` inside the page and in native menus and dialogs; the renderer never
 * decides the theme on its own. Without a host (tests, the browser test host) "system" means light.
 */
import type { ThemePreference, ThemeState } from '../../../shared/contract/app';
import type { CoreEvents } from '../events';
import type { SettingsRepository } from '../settings/settings-repository';

/** What the host does with the preference (main: Electron's nativeTheme). */
export interface Appearance {
  /** Makes the whole app follow `preference` from now on. */
  apply(preference: ThemePreference): void;
  /** Whether the app is drawn dark right now (the OS decides while the preference is "system"). */
  isDark(): boolean;
  /** Calls `listener` whenever the drawn theme may have changed (e.g. the OS switched); returns an unsubscribe. */
  onChange(listener: () => void): () => void;
}

/** The `theme:*` handlers plus the current state, for the host's window background. */
export interface ThemeModule {
  handlers: {
    'theme:get': (request: Record<string, never>) => ThemeState;
    'theme:set': (request: { preference: ThemePreference }) => ThemeState;
  };
  state(): ThemeState;
  dispose(): void;
}

/**
 * Builds the theme module and applies the stored preference at once, so the host can create its
 * window in the right colours (no white flash before a dark page paints).
 */
export function createThemeModule(options: { settings: SettingsRepository; events: CoreEvents; appearance?: Appearance }): ThemeModule {
  const { settings, events, appearance } = options;
  const preference = (): ThemePreference => settings.get().preferences.theme ?? 'system';
  const state = (): ThemeState => ({ preference: preference(), dark: appearance ? appearance.isDark() : preference() === 'dark' });

  appearance?.apply(preference());
  let last = JSON.stringify(state());
  // One event per real change, however many times the host reports one (nativeTheme repeats itself).
  const announceIfChanged = () => {
    const next = state();
    const text = JSON.stringify(next);
    if (text === last) return;
    last = text;
    events.emit('theme:changed', next);
  };
  const offAppearance = appearance?.onChange(announceIfChanged) ?? (() => {});
  // A settings reset (or any other writer) changes the preference too: follow it.
  const offSettings = settings.onChange(() => {
    appearance?.apply(preference());
    announceIfChanged();
  });

  return {
    handlers: {
      'theme:get': () => state(),
      'theme:set': ({ preference: next }) => {
        // Written first: if the settings file cannot take it, the app keeps the theme it had.
        settings.update((draft) => {
          draft.preferences.theme = next;
        });
        return state();
      },
    },
    state,
    dispose: () => {
      offAppearance();
      offSettings();
    },
  };
}
