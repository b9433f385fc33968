/**
 * The permission matrix (server × account × tool): a cache of `permissions:matrix`, refreshed on
 * `permissions:changed` and whenever a connection's tools change.
 */
import type { MatrixRow } from '../../../shared/contract/permissions';
import type { PermissionMode } from '../../../shared/domain/operations';
import { toShownError, unwrap, type ShownError } from '../api';
import type { SliceCreator } from './types';

export interface PermissionsSlice {
  matrix: MatrixRow[];
  configErrors: string[];
  permissionsError: ShownError | null;
  /** Re-reads the whole matrix (search is applied in the view, so typing needs no round trip). */
  refreshMatrix(): Promise<void>;
  watchPermissions(): () => void;
  /**
   * Sets one tool's mode for one account. Loosening (Always Allow, lifting Disabled) is confirmed
   * by the person in main's native dialog; a "not confirmed" answer is reported, not thrown.
   */
  setToolMode(row: Pick<MatrixRow, 'serverId' | 'accountId' | 'toolName'>, mode: PermissionMode): Promise<void>;
  /** Removes one rule (back to the default); lifting a Disabled is confirmed in main's dialog. */
  revokeRule(ruleId: string): Promise<void>;
}

/**
 * Creates the permissions slice.
 *
 * Why re-read after setting: the effective decision depends on every layer (organization, safe
 * mode, pins), which only main computes.
 */
export const createPermissionsSlice: SliceCreator<PermissionsSlice> = ({ api }) => (set, get) => ({
  matrix: [],
  configErrors: [],
  permissionsError: null,
  async refreshMatrix() {
    try {
      const { rows, configErrors } = await unwrap(api().permissions.matrix({ conversationId: null }));
      set({ matrix: rows, configErrors, permissionsError: null });
    } catch (error) {
      set({ permissionsError: toShownError(error) });
    }
  },
  watchPermissions() {
    try {
      const w = api();
      const offs = [
        w.permissions.onChanged(() => void get().refreshMatrix()),
        w.connections.onToolsChanged(() => void get().refreshMatrix()),
        w.connections.onStatusChanged(() => void get().refreshMatrix()),
      ];
      return () => offs.forEach((off) => off());
    } catch (error) {
      set({ permissionsError: toShownError(error) });
      return () => {};
    }
  },
  async setToolMode({ serverId, accountId, toolName }, mode) {
    let failure: ShownError | null = null;
    try {
      await unwrap(api().permissions.set({ scope: 'tool', serverId, accountId, toolName, mode }));
    } catch (error) {
      failure = toShownError(error);
    }
    await get().refreshMatrix();
    // Shown after the re-read, so a "not confirmed in the dialog" stays visible.
    if (failure) set({ permissionsError: failure });
  },
  async revokeRule(ruleId) {
    let failure: ShownError | null = null;
    try {
      await unwrap(api().permissions.revoke({ ruleId }));
    } catch (error) {
      failure = toShownError(error);
    }
    await get().refreshMatrix();
    if (failure) set({ permissionsError: failure });
  },
});
