/**
 * Stand-in for main's native server-change dialog (test code only, never shipped). A core without
 * a confirmer refuses every server change, so tests and the browser test host that add servers as
 * a person would pass this one: it answers as a person pressing Save (keeping secret-looking values
 * in the keychain) and records what the dialog would have shown.
 */
import type { ServerChangeConfirmer, ServerChangeSummary } from '../../electron/core/settings/server-confirmation';

/** Every summary the stand-in "showed", in order (shared by the cores of one test process). */
export const confirmedServerChanges: ServerChangeSummary[] = [];

/** Confirms every server change, as a person pressing Save would. */
export const confirmEveryServerChange: ServerChangeConfirmer = async (summary) => {
  confirmedServerChanges.push(summary);
  return true;
};
