/**
 * Exactly one result per tool call: what the model is told, and what the chat card shows, for
 * every way a call can end. The words are fixed here so the model and the person read the same
 * facts, and the model's final answer can be grounded in the recorded status.
 */
import type { ChatCallStatus } from '../../../shared/contract/chat';
import { OBSERVED_OUTCOME_WORDS, observedOutcome } from '../../../shared/domain/observation';
import type { OperationSnapshot } from '../gate/gate';
import { STOPPED_READS_ONLY } from '../gate/reads-only';
import { sanitizeForDisplay } from '../text/sanitize';
import { resultText, wrapUntrusted } from './untrusted';

/** Texts the model receives: one wording for each ending, so every provider hears the same facts. */
export const MODEL_TEXT = {
  notPermitted: 'Error: this tool is not permitted.',
  declined: 'Error: the user declined this action.',
  expired: 'Error: the approval expired; nothing ran.',
  cancelled: 'Error: the call was cancelled before it ran; nothing ran.',
  invalidated: 'Error: the tool or its arguments changed before the call could run; nothing ran.',
  stoppedReadsOnly: 'Error: the call was stopped while it ran. The tool only reads, so nothing changed; there is no result.',
  outcomeUnknown:
    'The request was sent to the server, but no answer is known: the action may or may not have happened. ' +
    'Do not claim it succeeded or failed; tell the user the outcome is unknown (they can check it and record what they learn in Warden\'s Recovery view).',
} as const;

/** A call's end as the chat records it. */
export interface CallOutcome {
  status: ChatCallStatus;
  why: string;
  modelResult: string;
  isError: boolean;
  resultText: string;
  flagged: boolean;
  flags: string[];
  truncated: boolean;
}

const plain = (status: ChatCallStatus, why: string, modelResult: string): CallOutcome => ({
  status,
  why,
  modelResult,
  isError: true,
  resultText: '',
  flagged: false,
  flags: [],
  truncated: false,
});

/**
 * The outcome of a call from the gate's final snapshot of its operation.
 *
 * `refusal` marks a call the loop refused before the policy (not offered, a cap): the gate
 * recorded it as denied with the loop's reason.
 */
export function outcomeOf(op: OperationSnapshot, options: { cap?: number; skipped?: boolean } = {}): CallOutcome {
  const outcome = claimedOutcomeOf(op, options);
  const observed = observationText(op);
  return observed === null ? outcome : { ...outcome, modelResult: `${observed}\n\n${outcome.modelResult}` };
}

/** Most characters of Warden's observation a model is given (the ledger keeps all of it). */
const OBSERVATION_CHARS = 4_000;

/**
 * What Warden itself saw the call do, as the model is told it before the server's own words:
 * the outcome in four words, who looked, what was seen, and how far that reaches. Null when the
 * call was not observed. Why first and apart: the server's sentence is a claim by the component
 * being checked; the model must not ground its answer in it when Warden saw otherwise.
 */
function observationText(op: OperationSnapshot): string | null {
  const o = op.observation;
  if (!o) return null;
  const four = observedOutcome(op.state, o);
  const verdict = four ? `Outcome as Warden recorded it: ${OBSERVED_OUTCOME_WORDS[four]}.` : 'Warden recorded what it saw.';
  const warn =
    four === 'observed_different'
      ? ' What Warden saw differs from what was approved or claimed: do not tell the user it was done as asked; tell them what Warden saw.'
      : four === 'outcome_unknown'
        ? ' Do not claim it succeeded or failed.'
        : '';
  // Names in it come from the disk (a server may choose them): cleaned like server text and capped.
  const seen = sanitizeForDisplay(o.summary);
  const capped = seen.length > OBSERVATION_CHARS ? `${seen.slice(0, OBSERVATION_CHARS)}… [cut]` : seen;
  return `[Warden's own observation] ${verdict}${warn}\n${o.source}: ${capped}\nScope: ${o.scope}.`;
}

/** The outcome from what the server said (or why nothing was sent), before any observation. */
function claimedOutcomeOf(op: OperationSnapshot, options: { cap?: number; skipped?: boolean }): CallOutcome {
  const labels = { server: op.labels.server, tool: op.identity.toolName };
  switch (op.state) {
    case 'succeeded':
    case 'failed': {
      if (op.result) {
        const wrapped = wrapUntrusted(resultText(op.result), labels, options.cap);
        return {
          status: op.result.isError ? 'failed' : 'succeeded',
          why: op.result.isError ? 'The tool reported an error' : 'The tool call succeeded',
          modelResult: op.result.isError ? `The tool reported an error:\n${wrapped.content}` : wrapped.content,
          isError: op.result.isError,
          resultText: wrapped.shown,
          flagged: wrapped.flagged,
          flags: wrapped.flags,
          truncated: wrapped.truncated,
        };
      }
      const error = op.error ?? { code: 'FAILED', message: op.reason };
      if (error.code === STOPPED_READS_ONLY) return plain('stopped', op.reason, MODEL_TEXT.stoppedReadsOnly);
      if (error.code === 'TOOL_CALL_FAILED') {
        // The server's own error text: untrusted like any server text.
        const wrapped = wrapUntrusted(error.message, labels, options.cap);
        return { ...plain('failed', 'The server answered with an error', `The server answered with an error:\n${wrapped.content}`), resultText: wrapped.shown, flagged: wrapped.flagged, flags: wrapped.flags, truncated: wrapped.truncated };
      }
      return plain('failed', op.reason, `Error: the call was not sent to the server (${error.code === 'CANCELLED' ? 'cancelled' : 'it could not be sent'}); nothing ran.`);
    }
    case 'denied':
      return plain(options.skipped ? 'skipped' : 'not_permitted', op.reason, options.skipped ? `Error: not run: ${op.reason}.` : MODEL_TEXT.notPermitted);
    case 'validation_failed':
      return plain('invalid', op.reason, `Error: ${op.reason.replace(/^Invalid arguments: /, 'invalid arguments: ')}. Nothing ran.`);
    case 'rejected':
      return plain('declined', op.reason, MODEL_TEXT.declined);
    case 'expired':
      return plain('expired', op.reason, MODEL_TEXT.expired);
    case 'invalidated':
      return plain('cancelled', op.reason, MODEL_TEXT.invalidated);
    case 'cancelled':
      return plain('cancelled', op.reason, MODEL_TEXT.cancelled);
    case 'outcome_unknown':
      return { ...plain('outcome_unknown', op.reason, MODEL_TEXT.outcomeUnknown), isError: true };
    case 'awaiting_approval':
      return plain('awaiting_approval', op.reason, MODEL_TEXT.expired);
    case 'approved':
    case 'executing':
      return plain('running', op.reason, MODEL_TEXT.outcomeUnknown);
    case 'proposed':
      return plain('deciding', op.reason, MODEL_TEXT.cancelled);
  }
}

/** True for a chat status after which nothing more happens to the call. */
export function isFinalStatus(status: ChatCallStatus): boolean {
  return status !== 'deciding' && status !== 'awaiting_approval' && status !== 'running';
}
