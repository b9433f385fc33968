/**
 * The core's Appearance port over Electron's `nativeTheme`: the theme preference becomes
 * `nativeTheme.themeSource`, so Chromium answers `prefers-color-scheme` in the page, and native
 * menus and dialogs follow it; `updated` tells the core when the drawn theme may have changed
 * (the OS switched while the preference is "system").
 */
import { nativeTheme } from 'electron';
import type { Appearance } from '../core/appearance/theme';

export const nativeAppearance: Appearance = {
  apply(preference) {
    if (nativeTheme.themeSource !== preference) nativeTheme.themeSource = preference;
  },
  isDark: () => nativeTheme.shouldUseDarkColors,
  onChange(listener) {
    nativeTheme.on('updated', listener);
    return () => {
      nativeTheme.off('updated', listener);
    };
  },
};
