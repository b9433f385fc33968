/**
 * The operation record: what the gate holds for one tool call, the table of the state moves it
 * may make, and the copies callers get. Nothing here decides anything; the gate's flow
 * (gate.ts) decides, and moves a record only through `moveTo`.
 */
import type { OperationState } from '../../../shared/domain/operations';
import { TERMINAL_STATES } from '../../../shared/domain/operations';
import type { DecisionRecord, ErrorRecord, OpTransition, RequestOrigin, ToolIdentity, ToolResultRecord } from '../../../shared/domain/journal-events';
import type { OpObservation } from '../../../shared/domain/observation';
import { WardenError } from '../../../shared/result';
import { jsonCopy, deepFreezeCopy } from '../canonical/canonical-json';
import { fingerprint as computeFingerprint } from '../canonical/hashes';
import type { CallAbort } from './call-abort';
import type { JournalEntry, RecordedOperation } from '../ports';
import type { ToolDescriptor } from './ports';
import { trustedPreview } from '../preview/trusted-preview';
import { readsOnly } from './reads-only';

/** Server and account names from the configuration (undefined: no longer configured). */
export interface OperationNames {
  server(serverId: string): string | undefined;
  account(serverId: string, accountId: string): string | undefined;
}

/** What a transition records besides its move and reason. */
export type TransitionExtra = Partial<Omit<OpTransition, 'operationId' | 'from' | 'to' | 'reason'>>;

/** A point-in-time copy of an operation. Editing it changes nothing in the gate. */
export interface OperationSnapshot {
  operationId: string;
  state: OperationState;
  origin: RequestOrigin;
  identity: ToolIdentity;
  arguments: Record<string, unknown>;
  canonicalArguments: string;
  fingerprint: string;
  requestedAt: number;
  expiresAt: number | null;
  /** The latest policy decision about this operation. */
  decision: DecisionRecord | null;
  /** Why it is in its current state. */
  reason: string;
  /** True once a person approved it (vs Always Allow). */
  approvedByUser: boolean;
  result: ToolResultRecord | null;
  error: ErrorRecord | null;
  history: Array<{ from: OperationState; to: OperationState; reason: string; at: number }>;
  /** What Warden itself saw the call do (recorded as `op.observation`), or null when nothing was observed. */
  observation: OpObservation | null;
  /** Labels for display, from the registry at request time. */
  labels: { server: string; account: string; toolTitle: string | null; toolDescription: string | null; summary: string };
  /** The tool only reads, by annotations Warden trusts (reads-only.ts): a stop mid-call leaves nothing to check. */
  readsOnly: boolean;
}

/** An operation as the journal recorded it (what `restore` and idempotency read back). */
export type RestoredOperation = RecordedOperation;

/** The gate's own record of an operation: the snapshot's fields (stored, not copied) plus its live parts. */
export interface Operation extends Omit<OperationSnapshot, 'operationId' | 'arguments'> {
  id: string;
  /** Deep-copied and frozen at request time: exactly what is sent. */
  args: Readonly<Record<string, unknown>>;
  /** The in-flight call's abort handle: stopped by the person or a permission revoked mid-call (why not an AbortController: call-abort.ts). */
  abort: CallAbort | null;
  /**
   * Set for an approval recovered after a restart while its server had not listed its tools yet
   * (servers connect after recovery). Registry-driven re-validation leaves it queued until that
   * server lists tools again; approving it still re-checks everything against current state.
   */
  waitingForServer?: boolean;
  /** Resolvers of everyone waiting for it to finish (created on first wait: most calls never wait). */
  waiters: Array<() => void> | null;
}

/** Allowed transitions; anything else is a bug and throws. */
export const TRANSITIONS: Record<OperationState, readonly OperationState[]> = {
  proposed: ['validation_failed', 'denied', 'awaiting_approval', 'approved'],
  awaiting_approval: ['rejected', 'expired', 'invalidated', 'cancelled', 'approved', 'denied'],
  approved: ['executing', 'denied', 'invalidated', 'cancelled'],
  executing: ['succeeded', 'failed', 'outcome_unknown'],
  validation_failed: [],
  denied: [],
  rejected: [],
  expired: [],
  invalidated: [],
  cancelled: [],
  succeeded: [],
  failed: [],
  outcome_unknown: [],
};

export function newOperation(
  names: OperationNames | undefined,
  id: string,
  origin: RequestOrigin,
  identity: ToolIdentity,
  args: Readonly<Record<string, unknown>>,
  canonicalArguments: string,
  now: number,
  tool: ToolDescriptor | undefined,
): Operation {
  // Without a tool listed now, the configured names; a server or account removed since is said so.
  const serverLabel = tool?.serverLabel ?? (names ? (names.server(identity.serverId) ?? 'a removed server') : identity.serverId);
  const accountLabel = tool?.accountLabel ?? (names ? (names.account(identity.serverId, identity.accountId) ?? 'a removed account') : identity.accountId);
  return {
    id,
    state: 'proposed',
    origin,
    identity,
    args,
    canonicalArguments,
    fingerprint: computeFingerprint({ ...identity, canonicalArguments }),
    requestedAt: now,
    expiresAt: null,
    decision: null,
    reason: 'Proposed',
    approvedByUser: false,
    result: null,
    error: null,
    history: [],
    observation: null,
    labels: {
      server: serverLabel,
      account: accountLabel,
      toolTitle: tool?.title ?? null,
      toolDescription: tool?.description ?? null,
      // The one trusted line every surface shows: from identity and the stored arguments only.
      summary: trustedPreview(
        { toolName: identity.toolName, serverLabel, accountLabel, serverKind: tool?.serverKind, inputSchema: tool?.inputSchema },
        args,
      ).summary,
    },
    readsOnly: readsOnly(tool),
    abort: null,
    waiters: null,
  };
}

/** An in-memory operation from its recorded form (a restored approval, or a finished one read back). */
export function rebuild(names: OperationNames | undefined, r: RestoredOperation): Operation {
  const p = r.proposed;
  const op = newOperation(names, p.operationId, p.origin, p.identity, deepFreezeCopy(p.arguments), p.canonicalArguments, p.requestedAt, undefined);
  op.fingerprint = p.fingerprint;
  op.state = r.state;
  op.reason = r.reason;
  op.decision = r.decision;
  op.approvedByUser = r.approvedByUser;
  op.result = r.result;
  op.error = r.error;
  op.history = structuredClone(r.history);
  op.observation = r.observation ? structuredClone(r.observation) : null;
  op.expiresAt = p.expiresAt ?? null;
  return op;
}

/** A finished operation rebuilt from its record: nothing can wait on it or move it again. */
export function settledRebuild(names: OperationNames | undefined, r: RestoredOperation): Operation {
  const op = rebuild(names, r);
  settle(op);
  return op;
}

/** A deep copy for callers (cheaper than structuredClone: the stored parts are plain JSON). */
export function snapshot(op: Operation): OperationSnapshot {
  return {
    operationId: op.id,
    state: op.state,
    origin: { ...op.origin },
    identity: { ...op.identity },
    arguments: jsonCopy(op.args, false) as Record<string, unknown>,
    canonicalArguments: op.canonicalArguments,
    fingerprint: op.fingerprint,
    requestedAt: op.requestedAt,
    expiresAt: op.expiresAt,
    decision: op.decision ? { ...op.decision, configErrors: [...op.decision.configErrors] } : null,
    reason: op.reason,
    approvedByUser: op.approvedByUser,
    result: op.result ? jsonCopy(op.result, false) : null,
    error: op.error ? { ...op.error } : null,
    history: op.history.map((h) => ({ ...h })),
    // Frozen where it was made (the journal keeps it without copying), so it is shared as it is.
    observation: op.observation,
    labels: { ...op.labels },
    readsOnly: op.readsOnly,
  };
}

/** Wakes everyone waiting for an operation to finish. */
export function settle(op: Operation): void {
  const waiters = op.waiters;
  if (waiters === null) return;
  op.waiters = null;
  for (const w of waiters) w();
}

/** Resolves once the operation is in a terminal state. */
export function whenSettled(op: Operation): Promise<void> {
  if (TERMINAL_STATES.has(op.state)) return SETTLED;
  return new Promise<void>((resolve) => (op.waiters ??= []).push(resolve));
}

const SETTLED: Promise<void> = Promise.resolve();

/**
 * Applies a transition to the record in memory (synchronously) and returns its journal entry.
 * Throws on a transition the table does not allow: that is a bug, never a state to record.
 */
export function moveTo(op: Operation, to: OperationState, reason: string, extra: TransitionExtra, at: number): JournalEntry {
  const from = op.state;
  if (!TRANSITIONS[from].includes(to)) throw new WardenError('INTERNAL', `Illegal operation transition ${from} → ${to} for ${op.id}`);
  op.state = to;
  op.reason = reason;
  // Written field by field (no spread): this runs three times on every call.
  const payload: Record<string, unknown> = { operationId: op.id, from, to, reason };
  if (extra.decision !== undefined) payload.decision = op.decision = extra.decision;
  if (extra.fingerprint !== undefined) payload.fingerprint = extra.fingerprint;
  if (extra.actor !== undefined) payload.actor = extra.actor;
  if (extra.expiresAt !== undefined) payload.expiresAt = extra.expiresAt;
  if (extra.result !== undefined) payload.result = op.result = extra.result;
  if (extra.error !== undefined) payload.error = op.error = Object.freeze(extra.error);
  op.history.push({ from, to, reason, at });
  // Every part is frozen plain data (frozen where it was made), so the payload is too.
  return { type: 'op.transition', payload: Object.freeze(payload) };
}
