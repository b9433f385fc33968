/**
 * The permission matrix (server × account × tool): a cache of `permissions:matrix`, refreshed on
 * `permissions:changed` and whenever a connection's tools change.
 */
import type { MatrixRow, MatrixServer, PermissionChange } from '../../../shared/contract/permissions';
import type { PermissionMode } from '../../../shared/domain/operations';
import { toShownError, unwrap, type ShownError } from '../api';
import type { SliceCreator } from './types';

/**
 * Rows asked for first when the matrix is loaded for the first time: more than any window shows,
 * few enough to arrive at once; the whole matrix follows in a second request.
 */
const FIRST_SCREEN = 200;

/** One step that puts a mode back: set a mode again, or remove the rule a change created. */
export type UndoStep = { set: PermissionChange } | { revoke: string };

/** What the last change did, in words, and how to put it back. */
export interface LastChange {
  message: string;
  undo: UndoStep[] | null;
}

export interface PermissionsSlice {
  matrix: MatrixRow[];
  /** Every configured server and account (connected or not), when the core sends them. */
  matrixServers: MatrixServer[] | null;
  /** How many rows the whole matrix has; more than `matrix.length` until it has all arrived. */
  matrixTotal: number;
  /** False while only the first screen of a large matrix is here (search then waits for the rest). */
  matrixComplete: boolean;
  /** The last change made in the Permissions view, for its "what happened / Undo" line. */
  lastChange: LastChange | null;
  /**
   * Applies mode changes (one or many): a change that makes Warden ask less is confirmed in main's
   * native dialog, all together. Says what it did, with an Undo.
   */
  applyChanges(changes: PermissionChange[], words: string): Promise<boolean>;
  /** Puts back what the last change did (an undo that asks less is confirmed natively, too). */
  undoLastChange(): Promise<void>;
  /** Sets the line under the toolbar (e.g. what switching the active account cancelled). */
  say(message: string): void;
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
  matrixServers: null,
  matrixTotal: 0,
  matrixComplete: false,
  lastChange: null,
  configErrors: [],
  permissionsError: null,
  async refreshMatrix() {
    try {
      // The first time, a first screen of rows comes ahead of the whole matrix (see FIRST_SCREEN).
      if (get().matrix.length === 0 && get().matrixServers === null) {
        const first = await unwrap(api().permissions.matrix({ conversationId: null, limit: FIRST_SCREEN }));
        const partial = (first.total ?? first.rows.length) > first.rows.length;
        set({ matrix: first.rows, matrixServers: first.servers ?? null, matrixTotal: first.total ?? first.rows.length, matrixComplete: !partial, configErrors: first.configErrors, permissionsError: null });
        if (!partial) return;
      }
      const { rows, servers, configErrors } = await unwrap(api().permissions.matrix({ conversationId: null }));
      set({ matrix: rows, matrixServers: servers ?? null, matrixTotal: rows.length, matrixComplete: true, configErrors, permissionsError: null });
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
    if (failure) set(failedChange(failure, `the change to ${toolName}`));
  },
  async applyChanges(changes, words) {
    let failure: ShownError | null = null;
    let undo: UndoStep[] | null = null;
    try {
      const { results } = await unwrap(api().permissions.setMany({ changes }));
      // Put back in reverse order: each rule gets its old mode, or goes if there was none.
      undo = results
        .map((r, i): UndoStep => (r.oldMode ? { set: { ...changes[i]!, mode: r.oldMode } } : { revoke: r.ruleId }))
        .reverse();
    } catch (error) {
      failure = toShownError(error);
    }
    await get().refreshMatrix();
    if (failure) {
      set(failedChange(failure, words));
      return false;
    }
    set({ lastChange: { message: `Done: ${words}.`, undo } });
    return true;
  },
  async undoLastChange() {
    const steps = get().lastChange?.undo;
    if (!steps) return;
    let failure: ShownError | null = null;
    try {
      const sets = steps.flatMap((s) => ('set' in s ? [s.set] : []));
      if (sets.length === 1) await unwrap(api().permissions.set(sets[0]!));
      else if (sets.length > 1) await unwrap(api().permissions.setMany({ changes: sets }));
      for (const s of steps) if ('revoke' in s) await unwrap(api().permissions.revoke({ ruleId: s.revoke }));
    } catch (error) {
      failure = toShownError(error);
    }
    await get().refreshMatrix();
    if (failure) set({ permissionsError: failure, lastChange: { message: 'The undo did not happen; nothing changed.', undo: null } });
    else set({ lastChange: { message: 'Undone: the earlier modes are back.', undo: null } });
  },
  say(message) {
    set({ lastChange: { message, undo: null } });
  },
  async revokeRule(ruleId) {
    let failure: ShownError | null = null;
    try {
      await unwrap(api().permissions.revoke({ ruleId }));
    } catch (error) {
      failure = toShownError(error);
    }
    await get().refreshMatrix();
    if (failure) set(failedChange(failure, 'removing the rule'));
  },
});

/**
 * What the view says after a change failed, once: cancelling Warden's own dialog is the person's
 * choice (nothing changed), never an error or a refusal by the rules; anything else is an error.
 */
function failedChange(failure: ShownError, words: string): Pick<PermissionsSlice, 'permissionsError' | 'lastChange'> {
  if (failure.code === 'NOT_CONFIRMED') return { permissionsError: null, lastChange: { message: `Nothing changed: you cancelled ${words} in Warden’s dialog.`, undo: null } };
  return { permissionsError: failure, lastChange: null };
}
