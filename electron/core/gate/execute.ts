/**
 * Execution: the one place a tool call leaves Warden. It runs only after `executing` is durable,
 * and maps how the call ended (answer, error, abort, never sent) to the operation's final state.
 */
import type { OperationState } from '../../../shared/domain/operations';
import type { JournalEntry } from '../ports';
import { isCallNotSent, outcomeOf } from './call-outcome';
import { STOPPED_READS_ONLY, STOPPED_READS_ONLY_WORDS } from './reads-only';
import type { Operation, TransitionExtra } from './operation';
import type { ToolExecutor } from './ports';
import { capErrorMessage, capToolResult } from './result-cap';
import type { JournalOrder } from './retention';

/** The gate's transition of this operation (applied in memory, returning its record). */
export type Move = (to: OperationState, reason: string, extra: TransitionExtra) => JournalEntry;

/** Sends the call, applies the transition that says how it ended, and appends its record. */
export async function sendCall(op: Operation, executor: ToolExecutor, maxResultBytes: number, move: Move, journal: JournalOrder): Promise<void> {
  const signal = op.abort!.signal;
  let outcome: JournalEntry;
  if (signal.aborted) {
    const why = reasonOf(signal.reason);
    outcome = move('failed', `Not sent: ${why}`, { error: { code: 'CANCELLED', message: why } });
  } else {
    try {
      const raw = await executor.call(
        { serverId: op.identity.serverId, accountId: op.identity.accountId, toolName: op.identity.toolName },
        op.args,
        { signal, operationId: op.id },
      );
      const result = capToolResult(raw, maxResultBytes);
      const to = outcomeOf({ ok: true, isError: result.isError });
      outcome = move(to, to === 'failed' ? 'The tool reported an error' : 'The tool call succeeded', { result });
    } catch (error) {
      const message = capErrorMessage(signal.aborted ? reasonOf(signal.reason) : error instanceof Error ? error.message : String(error));
      const to = outcomeOf({ ok: false, error, aborted: signal.aborted });
      outcome = isCallNotSent(error)
        ? move('failed', `Not sent: ${message}`, { error: { code: 'NOT_SENT', message } })
        : signal.aborted && op.readsOnly
          ? // Stopped mid-call, but the tool only reads (readsOnly in reads-only.ts): whatever the
            // server did changed nothing, so there is nothing to check and no outcome to settle.
            move('failed', `${message}. ${STOPPED_READS_ONLY_WORDS}`, { error: { code: 'STOPPED_READS_ONLY' satisfies typeof STOPPED_READS_ONLY, message } })
          : to === 'failed'
            ? move('failed', `The server answered with an error: ${message}`, { error: { code: 'TOOL_CALL_FAILED', message } })
            : // CANCELLED means nothing was sent; a call stopped after it left may have happened.
              // A stopped call's reason leads with who or what stopped it (the person, a revoked
              // permission, Warden quitting): that is what happened, in the words it was given.
              move('outcome_unknown', signal.aborted ? `${message}: the server may have acted` : `The call failed after it was sent: the server may have acted (${message})`, {
                error: { code: 'OUTCOME_UNKNOWN', message },
              });
    }
  }
  op.abort = null;
  // The outcome is decided; only its record is left. A journal that fails now leaves `executing`
  // as the last durable record, which recovery turns into outcome_unknown (never a resend).
  journal.append([outcome]).catch((error: unknown) => {
    console.error(`gate: the outcome of operation ${op.id} (${op.state}) could not be journaled`, error);
  });
}

function reasonOf(reason: unknown): string {
  return reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'aborted';
}
