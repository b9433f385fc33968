/**
 * Execution: the one place a tool call leaves Warden. It runs only after `executing` is durable,
 * and maps how the call ended (answer, error, abort, never sent) to the operation's final state.
 */
import { journalEntry } from '../../../shared/domain/journal-events';
import type { OperationState } from '../../../shared/domain/operations';
import type { JournalEntry } from '../ports';
import { isCallNotSent, outcomeOf } from './call-outcome';
import { STOPPED_READS_ONLY, STOPPED_READS_ONLY_WORDS } from './reads-only';
import type { Operation, TransitionExtra } from './operation';
import type { CallObserver, CallWatch, ObservedCall, ObservedEnding, ToolExecutor } from './ports';
import { capErrorMessage, capToolResult } from './result-cap';
import type { JournalOrder } from './retention';

/** The gate's transition of this operation (applied in memory, returning its record). */
export type Move = (to: OperationState, reason: string, extra: TransitionExtra) => JournalEntry;

/** Longest Warden looks at a call's targets before sending it, or after it ended, before going on without. */
export const OBSERVE_WITHIN_MS = 5_000;

/**
 * Sends the call, applies the transition that says how it ended, and appends its record (and,
 * when the call was observed, the observation after it).
 *
 * The observer's `watch` is asked synchronously; a call nothing can be observed of pays nothing
 * more. The ending is decided from the call alone, then what Warden saw is read, then both are
 * applied and journaled: the snapshot everyone is handed when the call settles (the chat, which
 * tells the model) carries the observation with the outcome.
 */
export async function sendCall(op: Operation, executor: ToolExecutor, maxResultBytes: number, move: Move, journal: JournalOrder, observe?: ObserveStep): Promise<void> {
  const signal = op.abort!.signal;
  let ending: Ending;
  let watch: CallWatch | null = null;
  if (signal.aborted) {
    const why = reasonOf(signal.reason);
    ending = ['failed', `Not sent: ${why}`, { error: { code: 'CANCELLED', message: why } }];
  } else {
    watch = observe?.observer.watch(observe.call()) ?? null;
    if (watch) await within(watch.before(), undefined);
    try {
      const raw = await executor.call(
        { serverId: op.identity.serverId, accountId: op.identity.accountId, toolName: op.identity.toolName },
        op.args,
        { signal, operationId: op.id },
      );
      const result = capToolResult(raw, maxResultBytes);
      const to = outcomeOf({ ok: true, isError: result.isError });
      ending = [to, to === 'failed' ? 'The tool reported an error' : 'The tool call succeeded', { result }];
    } catch (error) {
      const message = capErrorMessage(signal.aborted ? reasonOf(signal.reason) : error instanceof Error ? error.message : String(error));
      const to = outcomeOf({ ok: false, error, aborted: signal.aborted });
      ending = isCallNotSent(error)
        ? ['failed', `Not sent: ${message}`, { error: { code: 'NOT_SENT', message } }]
        : signal.aborted && op.readsOnly
          ? // Stopped mid-call, but the tool only reads (readsOnly in reads-only.ts): whatever the
            // server did changed nothing, so there is nothing to check and no outcome to settle.
            ['failed', `${message}. ${STOPPED_READS_ONLY_WORDS}`, { error: { code: 'STOPPED_READS_ONLY' satisfies typeof STOPPED_READS_ONLY, message } }]
          : to === 'failed'
            ? ['failed', `The server answered with an error: ${message}`, { error: { code: 'TOOL_CALL_FAILED', message } }]
            : // CANCELLED means nothing was sent; a call stopped after it left may have happened.
              // A stopped call's reason leads with who or what stopped it (the person, a revoked
              // permission, Warden quitting): that is what happened, in the words it was given.
              ['outcome_unknown', signal.aborted ? `${message}: the server may have acted` : `The call failed after it was sent: the server may have acted (${message})`, {
                error: { code: 'OUTCOME_UNKNOWN', message },
              }];
      // A call that never left did nothing to observe.
      if (isCallNotSent(error)) watch = null;
    }
  }
  const [to, reason, extra] = ending;
  // The call has ended: nothing can stop it any more while its effect is read.
  op.abort = null;
  const observation = watch ? await within(watch.after(to as ObservedEnding), null) : null;
  if (observation) op.observation = deepFreeze(observation);
  const outcome = move(to, reason, extra);
  // The outcome is decided; only its record is left. A journal that fails now leaves `executing`
  // as the last durable record, which recovery turns into outcome_unknown (never a resend).
  journal.append(observation ? [outcome, journalEntry('op.observation', observation)] : [outcome]).catch((error: unknown) => {
    console.error(`gate: the outcome of operation ${op.id} (${op.state}) could not be journaled`, error);
  });
}

/** How a call ended, before it is applied. */
type Ending = [OperationState, string, TransitionExtra];

/** The observer and the call as it is shown it (built only when asked). */
export interface ObserveStep {
  observer: CallObserver;
  call: () => ObservedCall;
}

/** `work`'s answer, or `fallback` once OBSERVE_WITHIN_MS passed: a slow disk never holds a call. */
async function within<T>(work: Promise<T>, fallback: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), OBSERVE_WITHIN_MS);
    timer.unref?.();
  });
  try {
    return await Promise.race([work.catch(() => fallback), late]);
  } finally {
    clearTimeout(timer);
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function reasonOf(reason: unknown): string {
  return reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'aborted';
}
