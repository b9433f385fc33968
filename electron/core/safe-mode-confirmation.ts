/**
 * Leaving the ledger's safe mode is a loosening: while it lasts every tool asks first, even those
 * set to Always Allow, and leaving it lets those run without asking again. Like every other
 * loosening it happens only when a person confirms it in main's native dialog (the
 * ApprovalPrompter); the renderer can ask for the dialog, never leave safe mode on its own.
 */
import { argumentLines, argumentText } from '../../shared/argument-words';
import { WardenError } from '../../shared/result';
import type { Handlers } from './dispatch';
import type { ApprovalPreview, ApprovalPrompter } from './ports';

/** The dialog's text: what safe mode is, what leaving it does, and the reason that will be recorded. */
export function leaveSafeModePreview(reason: string, breaks: number): ApprovalPreview {
  const found = breaks === 1 ? '1 break in its hash chain' : `${breaks} breaks in its hash chain`;
  return {
    operationId: 'leave-safe-mode',
    title: 'Leave safe mode?',
    detail:
      `Warden's activity log failed verification when it started (${found}; the damaged file was kept aside). ` +
      'In safe mode every tool asks before it runs, even those set to Always Allow. ' +
      'Leaving safe mode means Always Allow rules run tools without asking again. Your reason is recorded in the log.',
    argumentsJson: JSON.stringify({ action: 'leave safe mode', reason }, null, 2),
    argumentsText: argumentText(argumentLines({ action: 'leave safe mode', reason }, undefined, { maxValue: Infinity })),
    serverLabel: 'every server',
    accountLabel: 'every account',
    toolName: 'every tool set to Always Allow',
  };
}

/**
 * `ledger:acknowledge-safe-mode` that, while safe mode is on, proceeds only when the prompter
 * (main's native dialog; deny-all without one) answers approve.
 */
export function confirmLeavingSafeMode(
  acknowledge: Handlers['ledger:acknowledge-safe-mode'],
  deps: { prompter: ApprovalPrompter; safeMode: () => boolean; breaks: () => number },
): Handlers['ledger:acknowledge-safe-mode'] {
  return async (request) => {
    if (deps.safeMode() && (await deps.prompter.prompt(leaveSafeModePreview(request.reason, deps.breaks()))) !== 'approve') {
      throw new WardenError('NOT_CONFIRMED', 'Leaving safe mode was not confirmed in the dialog; Warden stays in safe mode and every tool keeps asking');
    }
    return acknowledge(request);
  };
}
