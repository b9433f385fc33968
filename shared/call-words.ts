/**
 * Why a tool call ran (or did not), and how it ended, as two separate sentences a person reads:
 * "You approved it in Warden’s dialog." and "Done." — never a state code such as `succeeded`.
 *
 * The reason comes from the facts the gate recorded: the policy's decision (its own reason, which
 * starts with the outcome — "Allowed: …", "Disabled: …", "Asks: …" — and is turned into the cause
 * here), whether a person approved it, and how a person or the gate ended it. Pure, so the core
 * (chat cards) and the window (Approvals) say the same thing in the same words.
 */
import type { DecisionRecord } from './domain/journal-events';
import type { OperationState } from './domain/operations';

/** The facts of one call the words are written from (an operation as the gate or the window holds it). */
export interface CallFacts {
  state: OperationState;
  decision: DecisionRecord | null;
  approvedByUser: boolean;
  /** Why it is in its current state, as the gate recorded it. */
  reason: string;
}

/** The leads the policy writes before its reason, each with the cause it stands for. */
const LEADS: ReadonlyArray<[RegExp, string]> = [
  [/^Asks(?: in this conversation)?: /, 'Warden asks because '],
  [/^Allowed(?: in this conversation)?: /, 'It ran without asking because '],
  [/^Disabled(?: in this conversation)?: /, 'Refused because '],
];

/** A clause as a sentence: a full stop at the end unless it has one. */
const sentence = (text: string) => `${text}${/[.!?]$/.test(text) ? '' : '.'}`;

/**
 * The policy's reason as one sentence that says the cause once: "Asks: you set Ask for X" becomes
 * "Warden asks because you set Ask for X.", "Disabled: you set Disabled for X" becomes "Refused
 * because you set Disabled for X."; a reason without such a lead ("Blocked by your organization")
 * is kept as it is.
 */
export function decisionSentence(reason: string): string {
  for (const [lead, cause] of LEADS) if (lead.test(reason)) return sentence(`${cause}${reason.replace(lead, '')}`);
  return sentence(reason);
}

/**
 * The day a person set the rule that decided, as a sentence of its own ("Set on Tuesday, December
 * 1."; the year too when it is not this one), or '' when Warden does not know it. Formatted where
 * it is read, in the computer's own time zone.
 */
export function setOnDay(setAt: number | null | undefined, now: number = Date.now()): string {
  if (typeof setAt !== 'number' || !Number.isFinite(setAt)) return '';
  const day = new Date(setAt);
  const sameYear = day.getFullYear() === new Date(now).getFullYear();
  return `Set on ${new Intl.DateTimeFormat('en', { weekday: 'long', month: 'long', day: 'numeric', ...(sameYear ? {} : { year: 'numeric' }) }).format(day)}.`;
}

/** The decision's reason, then the day its rule was set when known. */
function decidedBecause(decision: DecisionRecord): string {
  const day = setOnDay(decision.ruleSetAt);
  return day ? `${decisionSentence(decision.reason)} ${day}` : decisionSentence(decision.reason);
}

/** Why Warden asks before a call, in one sentence ("Warden asks because you set Ask for all tools of Files."). */
export function whyWardenAsks(reason: string | undefined): string {
  return decisionSentence(reason && /^Asks/.test(reason) ? reason : `Asks: ${reason || 'approval is required'}`);
}

/**
 * Why the call ran or did not: the reason, never the outcome. "You approved it in Warden’s
 * dialog.", "It ran without asking because you set Always Allow for X. Set on Tuesday, December 1.",
 * "Refused because you set Disabled for X.", "You denied it in Warden’s dialog.", "Nobody approved it in time."
 */
export function callReason(call: CallFacts): string {
  if (call.approvedByUser) return 'You approved it in Warden’s dialog.';
  switch (call.state) {
    case 'rejected':
      return /^Denied in the approval dialog/.test(call.reason) ? 'You denied it in Warden’s dialog.' : sentence(call.reason.replace(/^Rejected by you/, 'You rejected it in Approvals'));
    case 'expired':
      return 'Nobody approved it in time.';
    case 'validation_failed':
      return sentence(`Its arguments do not fit the tool’s inputs (${call.reason.replace(/^Invalid arguments: /, '')})`);
    case 'cancelled':
    case 'invalidated':
      return sentence(call.reason);
    case 'denied':
      // Refused by the chat (a name it never offered) where a rule refuses it too: both reasons.
      if (call.decision && call.reason && call.reason !== call.decision.reason) return `${decidedBecause(call.decision)} ${sentence(call.reason)}`;
      return call.decision ? decidedBecause(call.decision) : sentence(call.reason);
    default:
      return call.decision ? decidedBecause(call.decision) : call.reason ? sentence(call.reason) : '';
  }
}

/** How the call ended, or where it is now: "Done.", "Failed: …", "Outcome unknown: …", "Nothing ran." */
export function callOutcome(call: Pick<CallFacts, 'state' | 'reason'>): string {
  switch (call.state) {
    case 'proposed':
      return 'Being decided.';
    case 'awaiting_approval':
      return 'Waiting for your approval; nothing has run.';
    case 'approved':
    case 'executing':
      return 'Running.';
    case 'succeeded':
      return 'Done: the server answered.';
    case 'failed':
      // The gate's reason is a sentence of its own ("The tool reported an error"): it continues this one.
      return sentence(`Failed: ${call.reason.replace(/^[A-Z](?=[a-z])/, (c) => c.toLowerCase())}`);
    case 'outcome_unknown':
      return 'Outcome unknown: it was sent and no answer came back (see Recovery).';
    case 'denied':
    case 'validation_failed':
    case 'rejected':
    case 'expired':
    case 'invalidated':
    case 'cancelled':
      return 'Nothing ran.';
  }
}
