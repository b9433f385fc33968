/**
 * Settings: a cache of `settings:get`, refreshed on `settings:changed`, the preference changes the
 * person makes, and the last activity-log check (`ledger:verify`).
 *
 * Main owns every value. A change that makes Warden ask less (lifting the Disabled default) is
 * confirmed in main's native dialog; if the person says no there, the refusal is kept here as an
 * error with its code and the cache is re-read, so the page shows what is really in force.
 */
import type { ThemePreference, ThemeState } from '../../../shared/contract/app';
import type { LedgerCheck, SettingsChange, SettingsView } from '../../../shared/contract/settings';
import { toShownError, unwrap, type ShownError } from '../api';
import type { SliceCreator } from './types';

export interface SettingsSlice {
  settings: SettingsView | null;
  settingsError: ShownError | null;
  /** True while a change waits for main (and possibly its confirmation dialog). */
  settingsSaving: boolean;
  /** The last activity-log check, or null before the first. */
  ledgerCheck: LedgerCheck | null;
  ledgerCheckError: ShownError | null;
  ledgerChecking: boolean;
  /** The theme preference and whether Warden is drawn dark now (main applies it through nativeTheme). */
  theme: ThemeState | null;
  /** Re-reads settings:get. Never throws; failures land in `settingsError`. */
  refreshSettings(): Promise<void>;
  /** Follows `settings:changed`; returns the unsubscribe function. */
  watchSettings(): () => void;
  /** Changes preferences; resolves true when main applied them, false (with `settingsError`) otherwise. */
  changeSettings(change: SettingsChange): Promise<boolean>;
  /** Stores the theme preference; main applies it to the whole app. Failures land in `settingsError`. */
  setTheme(preference: ThemePreference): Promise<void>;
  /** Runs ledger:verify; the result (or the failure) lands in `ledgerCheck` / `ledgerCheckError`. */
  verifyLedger(): Promise<void>;
  /** True while a request to leave safe mode waits for main's confirmation dialog. */
  safeModeLeaving: boolean;
  safeModeError: ShownError | null;
  /** True once the person left safe mode in this window: the damage is still in the log. */
  safeModeAcknowledged: boolean;
  /**
   * Asks main to leave safe mode with the person's reason (main confirms it in its native dialog);
   * resolves true when safe mode is over. Failures, including "not confirmed", land in `safeModeError`.
   */
  leaveSafeMode(reason: string): Promise<boolean>;
}

/** Creates the settings slice. */
export const createSettingsSlice: SliceCreator<SettingsSlice> = ({ api }) => (set, get) => ({
  settings: null,
  settingsError: null,
  settingsSaving: false,
  ledgerCheck: null,
  ledgerCheckError: null,
  ledgerChecking: false,
  safeModeLeaving: false,
  safeModeError: null,
  safeModeAcknowledged: false,
  theme: null,
  async refreshSettings() {
    try {
      const [settings, theme] = await Promise.all([unwrap(api().settings.get({})), unwrap(api().theme.get({}))]);
      set({ settings, theme });
    } catch (error) {
      set({ settingsError: toShownError(error) });
    }
  },
  watchSettings() {
    try {
      const w = api();
      const offs = [w.settings.onChanged(() => void get().refreshSettings()), w.theme.onChanged((theme) => set({ theme }))];
      return () => offs.forEach((off) => off());
    } catch (error) {
      set({ settingsError: toShownError(error) });
      return () => {};
    }
  },
  async setTheme(preference) {
    set({ settingsError: null });
    try {
      set({ theme: await unwrap(api().theme.set({ preference })) });
    } catch (error) {
      set({ settingsError: toShownError(error) });
    }
  },
  async changeSettings(change) {
    set({ settingsSaving: true, settingsError: null });
    try {
      set({ settings: await unwrap(api().settings.set(change)) });
      return true;
    } catch (error) {
      // Re-read first, then show the failure, so the page shows what is really in force.
      await get().refreshSettings();
      set({ settingsError: toShownError(error) });
      return false;
    } finally {
      set({ settingsSaving: false });
    }
  },
  async verifyLedger() {
    set({ ledgerChecking: true, ledgerCheckError: null });
    try {
      set({ ledgerCheck: await unwrap(api().ledger.verify({})) });
    } catch (error) {
      set({ ledgerCheckError: toShownError(error) });
    } finally {
      set({ ledgerChecking: false });
    }
  },
  async leaveSafeMode(reason) {
    set({ safeModeLeaving: true, safeModeError: null });
    try {
      await unwrap(api().ledger.acknowledgeSafeMode({ reason }));
      set({ safeModeAcknowledged: true });
      // The status bar, banner and this page follow core:status.
      await get().refreshStatus();
      return true;
    } catch (error) {
      set({ safeModeError: toShownError(error) });
      return false;
    } finally {
      set({ safeModeLeaving: false });
    }
  },
});
