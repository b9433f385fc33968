/**
 * The gate: the single entry point for every tool call, from any source.
 *
 * It owns the operation state machine and is the only caller of `ToolExecutor.call`. Guarantees,
 * each a named test: arguments deep-copied and frozen at request time; validated (ajv) and
 * canonicalized before the policy sees them; approvals bound to a fingerprint recomputed from
 * current state; policy checked at request, approval and immediately before `executing`;
 * approval single-use; `executing` durably journaled before the request leaves; revocation stops
 * everything not yet executing and aborts in-flight calls; every transition journaled with its
 * reason; callers only ever get copies.
 *
 * Concurrency rule: every decision and state change happens synchronously in memory (one JS
 * tick) and the journal append follows; so no interleaving of approve/revoke/policy-change can
 * observe a half-made decision.
 */
import { randomUUID } from 'node:crypto';
import type { Ajv, ValidateFunction } from 'ajv';
import type { CallSource, OperationState } from '../../../shared/domain/operations';
import { TERMINAL_STATES } from '../../../shared/domain/operations';
import {
  journalEntry,
  type DecisionRecord,
  type ErrorRecord,
  type OpProposed,
  type OpTransition,
  type RequestOrigin,
  type ToolIdentity,
  type ToolResultRecord,
} from '../../../shared/domain/journal-events';
import type { PolicyDecision, PolicyState } from '../../../shared/domain/policy';
import { WardenError } from '../../../shared/result';
import { canonicalCopy, deepFreezeCopy, jsonCopy } from '../canonical/canonical-json';
import { fingerprint as computeFingerprint } from '../canonical/hashes';
import { activeAccountOf, decide, inactiveAccount, readsArguments } from '../policy/engine';
import { normalizeForPolicy, pathRulesFor } from '../policy/normalize';
import { hostPaths, type PathFs, type PathSemantics } from '../policy/paths';
import { CallAbort } from '../call-abort';
import { systemClock, type ApprovalPreview, type Clock, type Journal, type JournalEntry, type OperationHistory, type RecordedOperation } from '../ports';
import { isCallNotSent, outcomeOf } from './call-outcome';
import type { RegistryChange, ToolDescriptor, ToolExecutor, ToolRegistry } from './ports';
import { UnsafePatternError } from '../validation/linear-regexp';
import { createLinearAjv, describeUnsafePattern } from '../validation/schemas';
import { capErrorMessage, capToolResult, DEFAULT_MAX_RESULT_BYTES } from './result-cap';
import { claimsOf, trustedPreview } from '../preview/trusted-preview';

/** Who asked for a call, in words, for the approval dialog. */
const REQUESTED_BY: Record<CallSource, string> = {
  model: 'the model, in a conversation',
  user: 'you, from Warden (Run)',
  gateway: 'a program connected to Warden’s gateway',
};

/** Default time a pending approval waits before it expires. */
export const DEFAULT_APPROVAL_TTL_MS = 10 * 60 * 1000;
/** Largest canonical argument payload the gate accepts. */
export const MAX_ARGUMENTS_BYTES = 1024 * 1024;
/** Longest a call (or an approval) waits for a re-list the server announced before it is decided. */
export const DEFAULT_LISTING_WAIT_MS = 5_000;

/** The current policy, read at every decision point. */
export interface PolicySource {
  current(): PolicyState;
}

/** What the gate needs. Everything is injected so tests use real MCP servers and a fake clock. */
export interface GateDeps {
  journal: Journal;
  /**
   * Where finished operations are read back: the gate holds live ones only, and an id it does not
   * hold is looked up here before it can mean a new call.
   */
  history: OperationHistory;
  executor: ToolExecutor;
  registry: ToolRegistry;
  policy: PolicySource;
  clock?: Clock;
  /** How long a new approval waits; a function is read at each new approval (a setting can change it). */
  approvalTtlMs?: number | (() => number);
  /** Path semantics and file system for the normalization step (default: the host's, with symlink resolution). */
  paths?: { semantics: PathSemantics; fs: PathFs | null };
  newId?: () => string;
  /** Schedules expiry sweeps; defaults to real timers (unref'd). Tests with a fake clock call `sweepExpired()`. */
  scheduleExpiry?: boolean;
  /**
   * Longest a call or approval waits for a pending re-list of its server (default 5 s). Past it,
   * the call is decided with the listing marked unverified, so Always Allow asks.
   */
  listingWaitMs?: number;
  /**
   * Largest result the gate keeps (UTF-8 bytes of its JSON; default 256 KiB). A larger one is cut
   * before it enters the operation record or the journal (see result-cap.ts).
   */
  maxResultBytes?: number;
  /**
   * Names of configured servers and accounts, for an operation whose tool is not listed now (a
   * finished one read back from history, a disconnected server): people read names, not ids.
   */
  names?: OperationNames;
}

/** Server and account names from the configuration (undefined: no longer configured). */
export interface OperationNames {
  server(serverId: string): string | undefined;
  account(serverId: string, accountId: string): string | undefined;
}

/** One tool call as it enters the gate. */
export interface GateRequest {
  source: CallSource;
  conversationId?: string | null;
  round?: number | null;
  batchId?: string | null;
  /** The model provider's id for this tool call (chat calls only). */
  callId?: string | null;
  serverId: string;
  accountId: string;
  toolName: string;
  arguments: unknown;
  /** Caller-chosen id (idempotency key). A second request with it returns the recorded operation. */
  operationId?: string;
  /**
   * Set by a caller that must refuse this call without running it (the chat loop: a tool that was
   * not offered to the model, a cap reached). The gate records it as `denied` with this reason,
   * so the refusal is in the ledger like every other decision, and never sends it.
   */
  refusedBecause?: string;
}

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
  /** Labels for display, from the registry at request time. */
  labels: { server: string; account: string; toolTitle: string | null; toolDescription: string | null; summary: string };
}

/** An operation as the journal recorded it (what `restore` and idempotency read back). */
export type RestoredOperation = RecordedOperation;

/** The gate's own record of an operation: the snapshot's fields (stored, not copied) plus its live parts. */
interface Operation extends Omit<OperationSnapshot, 'operationId' | 'arguments'> {
  id: string;
  /** Deep-copied and frozen at request time: exactly what is sent. */
  args: Readonly<Record<string, unknown>>;
  /** The in-flight call's abort handle (a CallAbort: Node 20's AbortController costs ~3 µs per call). */
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

/**
 * What admitting a request (or an approval) did: the operation, the journal append its records
 * went to, and whether the call is to be sent once that append is durable.
 */
interface Admission {
  op: Operation;
  /** The append of the records made by this step (null if it made none: an idempotent resubmission). */
  written: Promise<unknown> | null;
  /** True if `written` holds `executing` and the call is to be sent once it resolves. */
  send: boolean;
  entries: readonly JournalEntry[];
}

type Listener = (op: OperationSnapshot) => void;

/** A decision and everything it was made from, except the arguments (which it did not read). */
interface CachedDecision {
  user: PolicyState['user'];
  conversation: PolicyState['conversation'];
  organization: PolicyState['organization'];
  safeMode: PolicyState['safeMode'];
  defaultMode: PolicyState['defaultMode'];
  activeAccounts: PolicyState['activeAccounts'];
  conversationId: string | null;
  serverId: string;
  accountId: string;
  toolName: string;
  contractHash: string;
  endpointHash: string;
  annotations: ToolDescriptor['annotations'];
  serverLabel: ToolDescriptor['serverLabel'];
  accountLabel: ToolDescriptor['accountLabel'];
  unverifiedListing: ToolDescriptor['unverifiedListing'];
  decision: PolicyDecision;
}

/** Allowed transitions; anything else is a bug and throws. */
const TRANSITIONS: Record<OperationState, readonly OperationState[]> = {
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

/**
 * The gate. One instance per core; all tool calls go through `request`/`submit`.
 */
export class Gate {
  /**
   * Operations not yet in a terminal state, by id: the only ones the gate holds. Policy changes,
   * expiry and revocation touch these; a finished one is dropped the moment it finishes and is
   * read back from the history when asked for (memory does not grow with history).
   */
  private readonly live = new Map<string, Operation>();
  /**
   * Caller-chosen ids being looked up in the history before admission: anything else asking for
   * such an id (a duplicate request, `settled`, `approve`) waits for the admission first.
   */
  private readonly admitting = new Map<string, Promise<unknown>>();
  private readonly listeners = new Set<Listener>();
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly ajv: Ajv;
  private readonly clock: Clock;
  private readonly ttl: () => number;
  /** Recent decisions for identities no argument constraint applies to (see `decideNow`). */
  private readonly decisions = new WeakMap<ToolDescriptor, CachedDecision>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly unsubscribeRegistry: (() => void) | undefined;
  private readonly paths: { semantics: PathSemantics; fs: PathFs | null };
  /** Journal appends are chained so records land in the order decisions were made. */
  private journalTail: Promise<unknown> = Promise.resolve();
  /** Appends handed to the journal chain and not yet finished (0: the next one may go straight to the journal). */
  private appendsInFlight = 0;
  private readonly appendDone = (): void => {
    this.appendsInFlight--;
  };

  constructor(private readonly deps: GateDeps) {
    this.clock = deps.clock ?? systemClock;
    const ttl = deps.approvalTtlMs ?? DEFAULT_APPROVAL_TTL_MS;
    this.ttl = typeof ttl === 'function' ? ttl : () => ttl;
    this.paths = deps.paths ?? hostPaths();
    // The schema is the server's: its patterns run on the linear-time engine, never V8's backtracking one.
    this.ajv = createLinearAjv({ strict: false, allErrors: false, validateSchema: false });
    this.unsubscribeRegistry = deps.registry.subscribe?.((change) => this.onRegistryChange(change));
  }

  // ---- entry points ------------------------------------------------------------------------

  /**
   * Submits a tool call and waits for its final outcome (which for `ask` means until a person
   * approves, rejects, or it expires).
   *
   * Why: the chat loop wants one awaitable per tool call; every call of every source enters here.
   */
  async request(req: GateRequest): Promise<OperationSnapshot> {
    const listing = this.listed(req.serverId, req.accountId);
    if (listing !== undefined) await listing;
    const a = req.operationId === undefined || this.live.has(req.operationId) ? this.admit(req) : await this.admitKnown(req);
    await this.proceed(a, true);
    if (!TERMINAL_STATES.has(a.op.state)) await this.whenSettled(a.op);
    return this.snapshot(a.op);
  }

  /**
   * Submits a tool call and resolves once it is decided (awaiting approval, executing, or done).
   *
   * Why: the UI and batch handling need the operation id and state before the outcome.
   */
  async submit(req: GateRequest): Promise<OperationSnapshot> {
    const listing = this.listed(req.serverId, req.accountId);
    if (listing !== undefined) await listing;
    const a = req.operationId === undefined || this.live.has(req.operationId) ? this.admit(req) : await this.admitKnown(req);
    await this.proceed(a, false);
    return this.snapshot(a.op);
  }

  /**
   * Everything a request decides, in one synchronous step: the frozen copy, validation, the
   * decision, the transitions, and the journal append of their records (durable if the call is
   * to be sent). Nothing here awaits, so no approval, revocation or policy change can interleave.
   */
  private admit(req: GateRequest): Admission {
    const id = req.operationId ?? this.deps.newId?.() ?? randomUUID();
    const existing = this.live.get(id);
    if (existing) return { op: existing, written: null, send: false, entries: NO_ENTRIES }; // idempotency: never a second call for one id

    const now = this.clock.now();
    // Everything the gate journals is frozen: the journal may keep it without copying.
    const origin: RequestOrigin = Object.freeze({
      source: req.source,
      conversationId: req.conversationId ?? null,
      round: req.round ?? null,
      batchId: req.batchId ?? null,
      ...(req.callId != null ? { callId: req.callId } : {}),
    });
    const tool = this.deps.registry.getTool(req.serverId, req.accountId, req.toolName);
    const identity: ToolIdentity = Object.freeze({
      serverId: req.serverId,
      accountId: req.accountId,
      toolName: req.toolName,
      endpointHash: tool?.endpointHash ?? '',
      contractHash: tool?.contractHash ?? '',
    });

    // Deep copy + freeze, and canonicalize; any non-JSON input fails validation.
    let args: Readonly<Record<string, unknown>> = Object.freeze({});
    let canonicalArguments = '{}';
    let copyError: string | null = null;
    try {
      if (req.arguments === undefined || req.arguments === null) {
        args = Object.freeze({});
      } else if (typeof req.arguments !== 'object' || Array.isArray(req.arguments)) {
        copyError = 'arguments: must be an object';
      } else {
        // One read of the caller's object gives both the fingerprint input and the stored copy.
        const made = canonicalCopy(req.arguments as Record<string, unknown>);
        canonicalArguments = made.canonical;
        args = made.copy;
        if (canonicalArguments.length > MAX_ARGUMENTS_BYTES) copyError = `arguments: ${canonicalArguments.length} bytes exceeds the ${MAX_ARGUMENTS_BYTES}-byte limit`;
      }
    } catch (error) {
      copyError = error instanceof Error ? error.message : String(error);
    }

    const op: Operation = this.newOperation(id, origin, identity, args, canonicalArguments, now, tool);
    this.live.set(id, op);
    const proposed: OpProposed = {
      operationId: id,
      origin,
      identity,
      arguments: args as Record<string, unknown>,
      canonicalArguments,
      fingerprint: op.fingerprint,
      requestedAt: now,
      expiresAt: null,
    };
    const entries: JournalEntry[] = [journalEntry('op.proposed', proposed)];

    if (req.refusedBecause !== undefined) {
      entries.push(this.transition(op, 'denied', req.refusedBecause, { actor: 'gate' }));
      return this.recorded(op, entries);
    }
    if (copyError) {
      entries.push(this.transition(op, 'validation_failed', `Invalid arguments: ${copyError}`, { error: { code: 'VALIDATION_FAILED', message: copyError } }));
      return this.recorded(op, entries);
    }

    // Not listed → deny (before validation: there is no schema to validate against).
    if (tool) {
      const invalid = this.validate(tool, args);
      if (invalid) {
        entries.push(this.transition(op, 'validation_failed', `Invalid arguments: ${invalid}`, { error: { code: 'VALIDATION_FAILED', message: invalid } }));
        return this.recorded(op, entries);
      }
    }

    const decision = this.decideNow(op, tool);
    op.decision = decision;
    if (decision.decision === 'deny') {
      entries.push(this.transition(op, 'denied', decision.reason, { decision, actor: 'policy' }));
      return this.recorded(op, entries);
    }
    if (decision.decision === 'ask') {
      op.expiresAt = now + this.ttl();
      proposed.expiresAt = op.expiresAt;
      entries.push(this.transition(op, 'awaiting_approval', decision.reason, { decision, actor: 'policy', expiresAt: op.expiresAt }));
      this.scheduleExpiry(op);
      return this.recorded(op, entries);
    }
    // Always Allow: approved + executing go to the journal in ONE durable append.
    entries.push(this.transition(op, 'approved', decision.reason, { decision, actor: 'policy', fingerprint: op.fingerprint }));
    // The decision above was made in this same synchronous step: it IS the pre-execute check.
    return this.prepareSend(op, entries, { fingerprint: op.fingerprint, decision });
  }

  /**
   * A request naming an id the gate does not hold: the history is asked first, so an id that
   * already ran (however long ago) answers with its recorded outcome and is never sent again.
   */
  private admitKnown(req: GateRequest): Promise<Admission> {
    const id = req.operationId!;
    // One lookup at a time per id, registered before anything awaits: a duplicate request,
    // `settled` or `approve` for this id waits for the admission instead of racing it.
    const before = this.admitting.get(id);
    const run = (before ? before.then(noop, noop) : Promise.resolve()).then(async (): Promise<Admission> => {
      if (this.live.has(id)) return this.admit(req);
      const recorded = await this.deps.history.find(id);
      // Admitted by a concurrent request while the history was asked: that one is the operation.
      const live = this.live.get(id);
      if (live) return { op: live, written: null, send: false, entries: NO_ENTRIES };
      if (!recorded) return this.admit(req);
      if (!TERMINAL_STATES.has(recorded.state)) {
        throw new WardenError('CONFLICT', `Operation ${id} was recorded as ${recorded.state} but is not held by the gate (it was interrupted and is being recovered); try again`);
      }
      return { op: this.settledRebuild(recorded), written: null, send: false, entries: NO_ENTRIES };
    });
    this.admitting.set(id, run);
    const forget = (): void => {
      if (this.admitting.get(id) === run) this.admitting.delete(id);
    };
    run.then(forget, forget);
    return run;
  }

  /** Resolves once an admission of `id` that is looking up the history (if any) has happened. */
  private async admitted(id: string): Promise<void> {
    const pending = this.admitting.get(id);
    if (pending) await pending.then(noop, noop);
  }

  /**
   * Undefined when the server's listing can be used now; otherwise a promise that settles when
   * the registry's pending re-list has, or after `listingWaitMs`, whichever comes first.
   */
  private listed(serverId: string, accountId: string): Promise<void> | undefined {
    const pending = this.deps.registry.whenListed?.(serverId, accountId);
    if (pending === undefined) return undefined;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.deps.listingWaitMs ?? DEFAULT_LISTING_WAIT_MS);
      timer.unref?.();
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      pending.then(done, done);
    });
  }

  /** Resolves once the operation is in a terminal state. */
  private whenSettled(op: Operation): Promise<void> {
    if (TERMINAL_STATES.has(op.state)) return SETTLED;
    return new Promise<void>((resolve) => (op.waiters ??= []).push(resolve));
  }

  /**
   * An admission that ends here: its records are appended, nothing is sent. An approval request
   * the journal refused to record is cancelled before anyone hears of the failure: a pending
   * operation with no record must not be approvable later (its approval would be the journal's
   * first word about it).
   */
  private recorded(op: Operation, entries: JournalEntry[]): Admission {
    const written = this.append(entries);
    if (op.state === 'awaiting_approval') {
      // Registered before any caller's await, so it runs first; it handles the rejection for
      // itself only (callers awaiting `written` still get the error).
      written.catch((error: unknown) => {
        if (op.state !== 'awaiting_approval') return;
        const why = `the journal could not record the approval request (${error instanceof Error ? error.message : String(error)})`;
        const cancelled = this.transition(op, 'cancelled', `Not recorded: ${why}`, { actor: 'gate' });
        this.append([...entries, cancelled]).catch(() => undefined);
      });
    }
    return { op, written, send: false, entries };
  }

  /**
   * Waits for an admission's records; if the call is to be sent and `executing` is durable, starts
   * it (with `untilDone`, waits for its outcome). A journal that cannot record `executing` durably
   * means the call is never sent.
   */
  private async proceed(a: Admission, untilDone: boolean): Promise<void> {
    if (!a.send) {
      if (a.written !== null) await a.written;
      return;
    }
    try {
      await a.written;
    } catch (error) {
      await this.notWritten(a, error);
      return;
    }
    // From here on the ledger says "executing": a crash now yields outcome_unknown, never a resend.
    if (untilDone) await this.runCall(a.op);
    else void this.runCall(a.op);
  }

  /**
   * Approves a pending operation. Internal to the core: reached only through the trusted
   * `ApprovalPrompter` (the renderer has no approve channel).
   *
   * Re-runs the policy and recomputes the fingerprint from current state; a mismatch invalidates,
   * a policy now `deny` denies. Single-use: approving anything not awaiting approval throws
   * CONFLICT and sends nothing.
   */
  async approve(operationId: string): Promise<OperationSnapshot> {
    const op = await this.mustGet(operationId, 'approved');
    // Approved against what the server lists now: a re-list it announced is waited for first.
    const listing = op.state === 'awaiting_approval' ? this.listed(op.identity.serverId, op.identity.accountId) : undefined;
    if (listing !== undefined) {
      await listing;
      // Settled while the new listing came in (invalidated by it, say): that is what happened.
      if (op.state !== 'awaiting_approval') return this.snapshot(op);
      // No new listing came (the re-list failed, was refused or is still running): the person
      // approved a tool the server said it changed, and what it is now is unknown. Fail closed.
      const unverified = this.deps.registry.getTool(op.identity.serverId, op.identity.accountId, op.identity.toolName)?.unverifiedListing;
      if (unverified !== undefined) {
        await this.append([this.transition(op, 'invalidated', `Invalidated: ${unverified}, so an approval given meanwhile sends nothing`, { actor: 'gate' })]);
        return this.snapshot(op);
      }
    }
    if (op.state !== 'awaiting_approval') {
      throw new WardenError('CONFLICT', `Operation ${operationId} cannot be approved: it is ${op.state}${op.approvedByUser ? ' (approval is single-use)' : ''}`);
    }
    if (op.expiresAt !== null && this.clock.now() >= op.expiresAt) {
      await this.append([this.transition(op, 'expired', 'The approval request expired before it was approved', { actor: 'gate' })]);
      return this.snapshot(op);
    }
    const check = this.recheck(op);
    if (check.kind === 'invalidated') {
      await this.append([this.transition(op, 'invalidated', check.reason, { actor: 'gate', fingerprint: check.fingerprint, decision: check.decision })]);
      return this.snapshot(op);
    }
    op.decision = check.decision;
    if (check.decision.decision === 'deny') {
      await this.append([this.transition(op, 'denied', check.decision.reason, { decision: check.decision, actor: 'policy' })]);
      return this.snapshot(op);
    }
    op.approvedByUser = true;
    const entries = [this.transition(op, 'approved', 'Approved by you', { actor: 'user', decision: check.decision, fingerprint: check.fingerprint })];
    // recheck() above ran in this same synchronous step (no await since): it is the pre-execute check.
    await this.proceed(this.prepareSend(op, entries, check), false);
    return this.snapshot(op);
  }

  /** Rejects a pending operation; nothing is sent. Why: the person (or a renderer) said no. */
  async reject(operationId: string, reason = 'Rejected by you'): Promise<OperationSnapshot> {
    const op = await this.mustGet(operationId, 'rejected');
    if (op.state !== 'awaiting_approval') throw new WardenError('CONFLICT', `Operation ${operationId} cannot be rejected: it is ${op.state}`);
    await this.append([this.transition(op, 'rejected', reason, { actor: 'user' })]);
    return this.snapshot(op);
  }

  /**
   * Cancels an operation: pending or approved-not-yet-executing ones are cancelled; an executing
   * one has its call aborted (it ends `outcome_unknown`, since the server may have acted).
   */
  async cancel(operationId: string, reason = 'Cancelled by you'): Promise<OperationSnapshot> {
    const op = await this.mustGet(operationId, 'cancelled');
    if (op.state === 'awaiting_approval' || op.state === 'approved') {
      await this.append([this.transition(op, 'cancelled', reason, { actor: 'user' })]);
    } else if (op.state === 'executing') {
      op.abort?.abort(new WardenError('CANCELLED', reason));
    } else {
      throw new WardenError('CONFLICT', `Operation ${operationId} cannot be cancelled: it is ${op.state}`);
    }
    return this.snapshot(op);
  }

  /**
   * Re-validates everything not yet executing against current policy and identities, and aborts
   * in-flight calls whose permission is gone.
   *
   * Why: revocation (Always Allow → Disabled, endpoint/contract change, account switch) must stop
   * every queued call, not only future ones. Call after any policy or registry change.
   */
  async revalidate(cause: string, options: { registryChange?: boolean } = {}): Promise<void> {
    const entries: JournalEntry[] = [];
    for (const op of [...this.live.values()]) {
      if (op.state === 'awaiting_approval') {
        if (op.waitingForServer) {
          const unlisted = this.deps.registry.listTools({ serverId: op.identity.serverId, accountId: op.identity.accountId }).length === 0;
          if (options.registryChange && unlisted) continue;
          op.waitingForServer = false;
        }
        const check = this.recheck(op);
        if (check.kind === 'invalidated') entries.push(this.transition(op, 'invalidated', `${check.reason} (${cause})`, { actor: 'gate', fingerprint: check.fingerprint, decision: check.decision }));
        else if (check.decision.decision === 'deny') entries.push(this.transition(op, 'denied', `${check.decision.reason} (${cause})`, { actor: 'policy', decision: check.decision }));
      } else if (op.state === 'executing' && op.abort && !op.abort.signal.aborted) {
        const check = this.recheck(op);
        if (check.kind === 'invalidated' || check.decision.decision === 'deny' || (check.decision.decision === 'ask' && !op.approvedByUser)) {
          const why = check.kind === 'invalidated' ? check.reason : check.decision.reason;
          op.abort.abort(new WardenError('CANCELLED', `Permission revoked while running: ${why} (${cause})`));
        }
      }
    }
    if (entries.length) await this.append(entries);
  }

  /** Expires every pending approval whose time is up. Why: stale approvals must not linger. */
  async sweepExpired(): Promise<void> {
    const now = this.clock.now();
    const entries: JournalEntry[] = [];
    for (const op of [...this.live.values()]) {
      if (op.state === 'awaiting_approval' && op.expiresAt !== null && now >= op.expiresAt) {
        entries.push(this.transition(op, 'expired', 'The approval request expired', { actor: 'gate' }));
      }
    }
    if (entries.length) await this.append(entries);
  }

  /**
   * Takes back the approvals that were pending when the app last stopped (crash recovery in the
   * ledger settles every other unfinished operation and hands these over).
   *
   * Why: a person may still want to approve them; each is re-validated against current policy and
   * identities, expires as it would have, and waits for its server to list tools again.
   */
  async restore(operations: readonly RestoredOperation[]): Promise<void> {
    for (const r of operations) {
      if (r.state !== 'awaiting_approval' || this.live.has(r.proposed.operationId)) continue;
      const op = this.rebuild(r);
      this.live.set(op.id, op);
      // A recovered approval without a recorded deadline gets a fresh one, never an endless wait.
      if (op.expiresAt === null) op.expiresAt = this.clock.now() + this.ttl();
      this.scheduleExpiry(op);
      op.waitingForServer = this.deps.registry.listTools({ serverId: op.identity.serverId, accountId: op.identity.accountId }).length === 0;
    }
    await this.sweepExpired();
    await this.revalidate('restored after restart', { registryChange: true });
  }

  // ---- reads -------------------------------------------------------------------------------

  /**
   * A copy of one operation: the live one, or a finished one read back from the history (a copy
   * that nothing can move again), or undefined.
   */
  async get(operationId: string): Promise<OperationSnapshot | undefined> {
    await this.admitted(operationId);
    const op = this.live.get(operationId);
    if (op) return this.snapshot(op);
    const recorded = await this.deps.history.find(operationId);
    return recorded ? this.snapshot(this.settledRebuild(recorded)) : undefined;
  }

  /** The live operation with this id, as a copy, or undefined (finished ones: `get`). */
  getLive(operationId: string): OperationSnapshot | undefined {
    const op = this.live.get(operationId);
    return op ? this.snapshot(op) : undefined;
  }

  /** A copy of a recorded operation, shaped as the gate shows operations (the live one if held). */
  describe(recorded: RestoredOperation): OperationSnapshot {
    const op = this.live.get(recorded.proposed.operationId);
    return this.snapshot(op ?? this.settledRebuild(recorded));
  }

  /** Copies of the live operations, newest first, optionally filtered. */
  list(filter: { state?: OperationState; conversationId?: string } = {}): OperationSnapshot[] {
    const out: OperationSnapshot[] = [];
    for (const op of this.live.values()) {
      // A finished operation stays until its records are in the journal (see `retire`): not live.
      if (TERMINAL_STATES.has(op.state)) continue;
      if (filter.state && op.state !== filter.state) continue;
      if (filter.conversationId && op.origin.conversationId !== filter.conversationId) continue;
      out.push(this.snapshot(op));
    }
    return out.sort((a, b) => b.requestedAt - a.requestedAt || (a.operationId < b.operationId ? -1 : 1));
  }

  /** Pending approvals (copies). */
  pending(): OperationSnapshot[] {
    return this.list({ state: 'awaiting_approval' });
  }

  /** Resolves with the operation once it reaches a terminal state (a copy). */
  async settled(operationId: string): Promise<OperationSnapshot> {
    await this.admitted(operationId);
    const op = this.live.get(operationId);
    if (op) {
      await this.whenSettled(op);
      return this.snapshot(op);
    }
    const done = await this.get(operationId);
    if (!done) throw new WardenError('NOT_FOUND', `No operation with id ${JSON.stringify(operationId)}`);
    return done;
  }

  /**
   * The trusted approval preview of a pending operation: written by this code from the tool
   * identity and the validated, stored arguments, never by the model or the server.
   */
  preview(operationId: string): ApprovalPreview {
    const op = this.live.get(operationId);
    if (!op) throw new WardenError('CONFLICT', `Operation ${operationId} is not awaiting approval (no pending operation has this id)`);
    if (op.state !== 'awaiting_approval') throw new WardenError('CONFLICT', `Operation ${operationId} is not awaiting approval (it is ${op.state})`);
    const args = JSON.stringify(JSON.parse(op.canonicalArguments), null, 2);
    const tool = this.deps.registry.getTool(op.identity.serverId, op.identity.accountId, op.identity.toolName);
    return {
      operationId: op.id,
      title: op.labels.summary,
      detail: `Why Warden asks: ${op.decision?.reason ?? 'approval required'}.`,
      ...(tool?.serverLocation ? { serverLocation: tool.serverLocation } : {}),
      requestedBy: REQUESTED_BY[op.origin.source],
      // The server's claims, as words; shown last, labelled as the server's.
      claims: claimsOf(tool?.annotations),
      argumentsJson: args,
      serverLabel: op.labels.server,
      accountLabel: op.labels.account,
      toolName: op.identity.toolName,
      // Kept apart from the trusted text: the dialog shows it last, on one line, as the server's claim.
      toolDescription: op.labels.toolDescription,
    };
  }

  /**
   * What the gate would do with a call, without making one: the same validation, path
   * normalization and policy decision as a real request, but no operation, no journal record,
   * nothing sent. `state` replaces the current rules (to try a rule before saving it); `tool`
   * stands in for a tool that is not connected now (from its last listing).
   *
   * Why: the permission editor's "would this call be allowed?" must be answered by the engine that
   * will decide the real call, not by a second implementation in the view.
   */
  simulate(
    req: { serverId: string; accountId: string; toolName: string; conversationId: string | null; arguments: unknown },
    options: { state?: PolicyState; tool?: ToolDescriptor } = {},
  ): { outcome: 'allow' | 'ask' | 'deny' | 'invalid'; reason: string; summary: string; decision: PolicyDecision | null } {
    const tool = options.tool ?? this.deps.registry.getTool(req.serverId, req.accountId, req.toolName);
    const identity: ToolIdentity = { serverId: req.serverId, accountId: req.accountId, toolName: req.toolName, endpointHash: tool?.endpointHash ?? '', contractHash: tool?.contractHash ?? '' };
    const origin: RequestOrigin = { source: 'user', conversationId: req.conversationId, round: null, batchId: null };
    if (req.arguments === null || typeof req.arguments !== 'object' || Array.isArray(req.arguments)) {
      return { outcome: 'invalid', reason: 'Invalid arguments: arguments: must be an object', summary: '', decision: null };
    }
    let made: { canonical: string; copy: Readonly<Record<string, unknown>> };
    try {
      made = canonicalCopy(req.arguments as Record<string, unknown>);
    } catch (error) {
      return { outcome: 'invalid', reason: `Invalid arguments: ${error instanceof Error ? error.message : String(error)}`, summary: '', decision: null };
    }
    const op = this.newOperation('simulation', origin, identity, made.copy, made.canonical, this.clock.now(), tool);
    if (tool) {
      const invalid = this.validate(tool, made.copy);
      if (invalid) return { outcome: 'invalid', reason: `Invalid arguments: ${invalid}`, summary: op.labels.summary, decision: null };
    }
    const decision = this.decideUnfrozen(op, tool, options.state ?? this.deps.policy.current());
    return { outcome: decision.decision, reason: decision.reason, summary: op.labels.summary, decision };
  }

  /** The active account of a server for a conversation (or the global one), if one was chosen. */
  activeAccount(serverId: string, conversationId: string | null): string | undefined {
    return activeAccountOf(this.deps.policy.current(), serverId, conversationId);
  }

  /** Subscribes to every operation change (a copy per transition). Returns an unsubscribe function. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops timers and the registry subscription. In-flight calls are left to their executor. */
  close(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.unsubscribeRegistry?.();
  }

  // ---- internals ---------------------------------------------------------------------------

  private newOperation(
    id: string,
    origin: RequestOrigin,
    identity: ToolIdentity,
    args: Readonly<Record<string, unknown>>,
    canonicalArguments: string,
    now: number,
    tool: ToolDescriptor | undefined,
  ): Operation {
    const names = this.deps.names;
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
      abort: null,
      waiters: null,
    };
  }

  /**
   * The live operation with this id. A finished one is refused (CONFLICT), never rebuilt:
   * approve, reject and cancel must only ever act on the one in-memory object per id, so nothing
   * can move a finished operation again.
   */
  private async mustGet(operationId: string, action: 'approved' | 'rejected' | 'cancelled'): Promise<Operation> {
    const live = this.live.get(operationId);
    if (live) return live;
    await this.admitted(operationId);
    const admitted = this.live.get(operationId);
    if (admitted) return admitted;
    const recorded = await this.deps.history.find(operationId);
    // Taken up by a concurrent request while the history was asked.
    const now = this.live.get(operationId);
    if (now) return now;
    if (recorded) throw new WardenError('CONFLICT', `Operation ${operationId} cannot be ${action}: it already finished (${recorded.state}); see the activity log`);
    throw new WardenError('NOT_FOUND', `No operation with id ${JSON.stringify(operationId)}`);
  }

  private settledRebuild(r: RestoredOperation): Operation {
    const op = this.rebuild(r);
    settle(op);
    return op;
  }

  /** An in-memory operation from its recorded form (a restored approval, or a finished one read back). */
  private rebuild(r: RestoredOperation): Operation {
    const p = r.proposed;
    const op = this.newOperation(p.operationId, p.origin, p.identity, deepFreezeCopy(p.arguments), p.canonicalArguments, p.requestedAt, undefined);
    op.fingerprint = p.fingerprint;
    op.state = r.state;
    op.reason = r.reason;
    op.decision = r.decision;
    op.approvedByUser = r.approvedByUser;
    op.result = r.result;
    op.error = r.error;
    op.history = structuredClone(r.history);
    op.expiresAt = p.expiresAt ?? null;
    return op;
  }

  /**
   * A finished operation leaves memory once its records are in the journal; the history answers
   * for it from then on. It stays until then so that its id can never look unknown: a journal
   * that orders on call has them as soon as the append that follows this transition is made (a
   * microtask later); any other has them when every append queued before this one settled.
   */
  private retire(op: Operation): void {
    const drop = (): void => {
      if (this.live.get(op.id) === op) this.live.delete(op.id);
    };
    queueMicrotask(() => {
      if (this.appendsInFlight === 0) drop();
      else void this.journalTail.then(drop, drop);
    });
  }

  private validate(tool: ToolDescriptor, args: Readonly<Record<string, unknown>>): string | null {
    let validator = this.validators.get(tool.contractHash);
    if (!validator) {
      try {
        validator = this.ajv.compile(tool.inputSchema ?? { type: 'object' });
      } catch (error) {
        if (error instanceof UnsafePatternError) return `${describeUnsafePattern(tool.inputSchema, error, 'inputSchema')}; the call is refused`;
        return `the tool's inputSchema is not a valid JSON Schema (${error instanceof Error ? error.message : String(error)})`;
      }
      this.validators.set(tool.contractHash, validator);
    }
    if (validator(args)) return undeclaredField(tool.inputSchema, args);
    const e = validator.errors?.[0];
    if (!e) return 'arguments do not match the tool schema';
    const at = e.instancePath ? 'arguments' + e.instancePath.replace(/\//g, '.') : 'arguments';
    const missing = (e.params as { missingProperty?: string }).missingProperty;
    const extra = (e.params as { additionalProperty?: string }).additionalProperty;
    if (missing) return `${at}.${missing}: required`;
    if (extra) return `${at}.${extra}: not allowed by the tool schema`;
    return `${at}: ${e.message ?? 'invalid'}`;
  }

  /** The policy decision for an operation under current state (request, approval, pre-execute). */
  private decideNow(op: Operation, tool: ToolDescriptor | undefined): PolicyDecision {
    const state = this.deps.policy.current();
    // Without argument constraints the decision depends only on the rules, the tool's pins and
    // labels, the conversation and the active account: reuse it while all of those are the same.
    // Cached per descriptor object (registries hand out one per listed tool), with every input
    // compared again, so a registry that builds or edits descriptors only misses, never goes stale.
    const hit = tool ? this.decisions.get(tool) : undefined;
    if (
      hit !== undefined &&
      hit.user === state.user &&
      hit.conversation === state.conversation &&
      hit.organization === state.organization &&
      hit.safeMode === state.safeMode &&
      hit.defaultMode === state.defaultMode &&
      hit.activeAccounts === state.activeAccounts &&
      hit.conversationId === op.origin.conversationId &&
      hit.serverId === op.identity.serverId &&
      hit.accountId === op.identity.accountId &&
      hit.toolName === op.identity.toolName &&
      hit.contractHash === tool!.contractHash &&
      hit.endpointHash === tool!.endpointHash &&
      hit.annotations === tool!.annotations &&
      hit.serverLabel === tool!.serverLabel &&
      hit.accountLabel === tool!.accountLabel &&
      hit.unverifiedListing === tool!.unverifiedListing
    ) {
      return hit.decision;
    }
    const decision = this.decideUnfrozen(op, tool, state);
    Object.freeze(decision.configErrors);
    Object.freeze(decision);
    if (tool && !readsArguments(state, op.identity)) {
      this.decisions.set(tool, {
        user: state.user,
        conversation: state.conversation,
        organization: state.organization,
        safeMode: state.safeMode,
        defaultMode: state.defaultMode,
        activeAccounts: state.activeAccounts,
        conversationId: op.origin.conversationId,
        serverId: op.identity.serverId,
        accountId: op.identity.accountId,
        toolName: op.identity.toolName,
        contractHash: tool.contractHash,
        endpointHash: tool.endpointHash,
        annotations: tool.annotations,
        serverLabel: tool.serverLabel,
        accountLabel: tool.accountLabel,
        unverifiedListing: tool.unverifiedListing,
        decision,
      });
    }
    return decision;
  }

  /** An account's name for explanations: as listed, else as configured, else "another account". */
  private accountLabelOf(serverId: string, accountId: string, toolName: string): string {
    return (
      (toolName ? this.deps.registry.getTool(serverId, accountId, toolName)?.accountLabel : undefined) ??
      this.deps.registry.listTools({ serverId, accountId })[0]?.accountLabel ??
      this.deps.names?.account(serverId, accountId) ??
      'another account'
    );
  }

  private decideUnfrozen(op: Operation, tool: ToolDescriptor | undefined, state: PolicyState): PolicyDecision {
    const request = { serverId: op.identity.serverId, accountId: op.identity.accountId, toolName: op.identity.toolName, conversationId: op.origin.conversationId };
    const labels = { server: tool?.serverLabel ?? op.labels.server, account: tool?.accountLabel ?? op.labels.account };
    const active = inactiveAccount(state, request);
    if (active !== undefined) {
      // Decided before the arguments are read: another account's call is refused whatever it asks.
      return decide({ ...request, arguments: {} }, state, { tool: undefined, paths: this.paths.semantics, labels: { ...labels, activeAccount: this.accountLabelOf(request.serverId, active, request.toolName) } });
    }
    const paths = this.paths;
    const rules = pathRulesFor(state, op.identity.serverId, op.identity.toolName);
    const normalized = normalizeForPolicy(op.args, {
      semantics: paths.semantics,
      fs: paths.fs,
      pathFields: rules.fields,
      pathRoots: rules.roots,
      workingFolder: tool?.workingFolder ?? null,
    });
    if (normalized.refused !== null) {
      // The system would refuse to open such a path too; judging it as written would guess.
      return { decision: 'deny', reason: `Refused: ${normalized.refused}`, layer: 'availability', ruleId: null, pin: 'none', configErrors: [] };
    }
    return decide(
      { ...request, arguments: normalized.arguments },
      state,
      {
        tool: tool ? { contractHash: tool.contractHash, endpointHash: tool.endpointHash, annotations: tool.annotations, unverifiedListing: tool.unverifiedListing } : undefined,
        paths: paths.semantics,
        unresolvedPaths: normalized.unresolvedPaths,
        pathRoots: normalized.pathRoots,
        pathValues: normalized.pathValues,
        labels,
      },
    );
  }

  /** Recomputes the fingerprint from current state, then re-decides. */
  private recheck(op: Operation): { kind: 'invalidated'; reason: string; fingerprint: string; decision?: PolicyDecision } | { kind: 'ok'; fingerprint: string; decision: PolicyDecision } {
    const tool = this.deps.registry.getTool(op.identity.serverId, op.identity.accountId, op.identity.toolName);
    if (!tool) {
      return { kind: 'invalidated', reason: `${op.identity.toolName} is no longer offered by ${op.labels.server}`, fingerprint: '' };
    }
    const fp = computeFingerprint({ ...op.identity, endpointHash: tool.endpointHash, contractHash: tool.contractHash, canonicalArguments: op.canonicalArguments });
    if (fp !== op.fingerprint) {
      const why = tool.endpointHash !== op.identity.endpointHash ? 'server endpoint changed since the request' : 'tool changed since the request';
      return { kind: 'invalidated', reason: `Invalidated: ${why}`, fingerprint: fp };
    }
    const decision = this.decideNow(op, tool);
    if (decision.decision === 'deny' && inactiveAccount(this.deps.policy.current(), { serverId: op.identity.serverId, accountId: op.identity.accountId, conversationId: op.origin.conversationId }) !== undefined) {
      return { kind: 'invalidated', reason: `Invalidated: ${decision.reason}`, fingerprint: fp, decision };
    }
    return { kind: 'ok', fingerprint: fp, decision };
  }

  /**
   * Pre-execute check, then `executing` appended durably together with `entries` (the call leaves
   * only after that append resolves: see `proceed`). If the check stops the call, its records are
   * appended and nothing is to be sent.
   */
  private prepareSend(op: Operation, entries: JournalEntry[], sameTick: { fingerprint: string; decision: PolicyDecision }): Admission {
    // Policy checked immediately before executing: the caller's check ran in this same
    // synchronous step (no await between it and the `executing` transition below).
    const check = sameTick;
    if (check.decision.decision === 'deny' || (check.decision.decision === 'ask' && !op.approvedByUser)) {
      const to = check.decision.decision === 'deny' ? 'denied' : 'invalidated';
      entries.push(this.transition(op, to, `${check.decision.reason} (re-checked before sending)`, { actor: 'policy', decision: check.decision }));
      return this.recorded(op, entries);
    }
    op.abort = new CallAbort();
    entries.push(this.transition(op, 'executing', 'Sending the request to the server', { fingerprint: check.fingerprint }));
    return { op, written: this.append(entries, true), send: true, entries };
  }

  /** `executing` could not be recorded durably: the call is not sent, and it ends `failed`. */
  private async notWritten(a: Admission, error: unknown): Promise<void> {
    const op = a.op;
    const why = `the journal could not record it durably (${error instanceof Error ? error.message : String(error)})`;
    const failed = this.transition(op, 'failed', `Not sent: ${why}`, { error: { code: 'JOURNAL_FAILED', message: why } });
    op.abort = null;
    // Best effort, non-durable: the whole story (proposed … executing → failed), never half of it.
    await this.append([...a.entries, failed]).catch(() => undefined);
  }

  private async runCall(op: Operation): Promise<void> {
    const signal = op.abort!.signal;
    let outcome: JournalEntry;
    if (signal.aborted) {
      const why = reasonOf(signal.reason);
      outcome = this.transition(op, 'failed', `Not sent: ${why}`, { error: { code: 'CANCELLED', message: why } });
    } else {
      try {
        const raw = await this.deps.executor.call(
          { serverId: op.identity.serverId, accountId: op.identity.accountId, toolName: op.identity.toolName },
          op.args,
          { signal, operationId: op.id },
        );
        const result = capToolResult(raw, this.deps.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES);
        const to = outcomeOf({ ok: true, isError: result.isError });
        outcome = this.transition(op, to, to === 'failed' ? 'The tool reported an error' : 'The tool call succeeded', { result });
      } catch (error) {
        const message = capErrorMessage(signal.aborted ? reasonOf(signal.reason) : error instanceof Error ? error.message : String(error));
        const to = outcomeOf({ ok: false, error, aborted: signal.aborted });
        outcome = isCallNotSent(error)
          ? this.transition(op, 'failed', `Not sent: ${message}`, { error: { code: 'NOT_SENT', message } })
          : to === 'failed'
            ? this.transition(op, 'failed', `The server answered with an error: ${message}`, { error: { code: 'TOOL_CALL_FAILED', message } })
            : this.transition(op, 'outcome_unknown', `${signal.aborted ? 'Cancelled while running' : 'The call failed after it was sent'}: the server may have acted (${message})`, {
              error: { code: signal.aborted ? 'CANCELLED' : 'OUTCOME_UNKNOWN', message },
            });
      }
    }
    op.abort = null;
    // The outcome is decided; only its record is left. A journal that fails now leaves `executing`
    // as the last durable record, which recovery turns into outcome_unknown (never a resend).
    this.append([outcome]).catch((error: unknown) => {
      console.error(`gate: the outcome of operation ${op.id} (${op.state}) could not be journaled`, error);
    });
  }

  /** Applies a transition in memory (synchronously) and returns its journal entry. */
  private transition(op: Operation, to: OperationState, reason: string, extra: Partial<Omit<OpTransition, 'operationId' | 'from' | 'to' | 'reason'>> = NO_EXTRA): JournalEntry {
    const from = op.state;
    if (!TRANSITIONS[from].includes(to)) throw new WardenError('INTERNAL', `Illegal operation transition ${from} → ${to} for ${op.id}`);
    const at = this.clock.now();
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
    if (this.timers.size !== 0 && to !== 'awaiting_approval') this.clearExpiry(op);
    // Every part is frozen plain data (frozen where it was made), so the payload is too.
    const entry: JournalEntry = { type: 'op.transition', payload: Object.freeze(payload) };
    if (TERMINAL_STATES.has(to)) {
      settle(op);
      this.retire(op);
    }
    if (this.listeners.size) {
      const snap = this.snapshot(op);
      queueMicrotask(() => {
        for (const l of this.listeners) l(snap);
      });
    }
    return entry;
  }

  /** Appends in decision order; `durable` waits for stable storage. */
  private append(entries: JournalEntry[], durable = false): Promise<unknown> {
    const options = durable ? DURABLE : undefined;
    // Transition payloads are frozen where they are made; `op.proposed` is frozen here (its
    // expiresAt is filled in after it is built). Every nested part was frozen where it was made,
    // so the journal may keep them without copying.
    for (const e of entries) if (!Object.isFrozen(e.payload)) Object.freeze(e.payload);
    let next: Promise<unknown>;
    if (this.deps.journal.ordersOnCall === true) {
      // The journal fixes record order when called: no chain to wait on or to maintain.
      try {
        return this.deps.journal.append(entries, options);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    if (this.appendsInFlight === 0) {
      // Nothing queued ahead: hand it to the journal now (same order, one promise hop less).
      try {
        next = this.deps.journal.append(entries, options);
      } catch (error) {
        next = Promise.reject(error);
      }
    } else {
      next = this.journalTail.then(() => this.deps.journal.append(entries, options));
    }
    this.appendsInFlight++;
    this.journalTail = next.then(this.appendDone, this.appendDone);
    return next;
  }

  private scheduleExpiry(op: Operation): void {
    if (this.deps.scheduleExpiry === false || op.expiresAt === null) return;
    const delay = Math.max(0, op.expiresAt - this.clock.now());
    const timer = setTimeout(() => {
      this.timers.delete(op.id);
      void this.sweepExpired().then(() => {
        // Timers can fire a millisecond before the wall clock reaches the deadline (and long
        // delays are capped): an approval still pending is re-armed, never left waiting forever.
        if (op.state === 'awaiting_approval') this.scheduleExpiry(op);
      }, (error: unknown) => console.error(`gate: expiring operation ${op.id} failed`, error));
    }, Math.min(delay, 2 ** 31 - 1));
    timer.unref?.();
    this.timers.set(op.id, timer);
  }

  private clearExpiry(op: Operation): void {
    const t = this.timers.get(op.id);
    if (t) {
      clearTimeout(t);
      this.timers.delete(op.id);
    }
  }

  private onRegistryChange(change: RegistryChange): void {
    const cause = change.kind === 'endpoint-changed' ? 'server endpoint changed' : change.kind === 'disconnected' ? 'server disconnected' : 'tool list changed';
    // The decisions are made (in memory) before revalidate's append; only their records can fail.
    this.revalidate(cause, { registryChange: true }).catch((error: unknown) => {
      console.error(`gate: re-validating after "${cause}" could not be journaled`, error);
    });
  }

  /** A deep copy for callers (cheaper than structuredClone: the stored parts are plain JSON). */
  private snapshot(op: Operation): OperationSnapshot {
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
      labels: { ...op.labels },
    };
  }
}

const DURABLE = Object.freeze({ durable: true });
const noop = (): void => undefined;
const NO_EXTRA: Partial<Omit<OpTransition, 'operationId' | 'from' | 'to' | 'reason'>> = Object.freeze({});
const SETTLED: Promise<void> = Promise.resolve();
const NO_ENTRIES: readonly JournalEntry[] = Object.freeze([]);

/** Wakes everyone waiting for an operation to finish. */
function settle(op: Operation): void {
  const waiters = op.waiters;
  if (waiters === null) return;
  op.waiters = null;
  for (const w of waiters) w();
}

/**
 * The first top-level argument the tool's input schema does not declare, as an error naming it;
 * null when every field is declared or the schema explicitly allows more (`additionalProperties`
 * set to anything but false, or `patternProperties`).
 *
 * Why: JSON Schema accepts undeclared fields by default, so a validator alone would forward a
 * field nobody reviewed. A field the schema explicitly allows is shown and fingerprinted like any
 * other; one it never mentions is refused.
 */
function undeclaredField(schema: Record<string, unknown> | undefined, args: Readonly<Record<string, unknown>>): string | null {
  if (!schema || schema.additionalProperties !== undefined || schema.patternProperties !== undefined || schema.$ref !== undefined) return null;
  // Fields declared at the top or in a branch of allOf/anyOf/oneOf (ajv already checked which branch holds).
  const declared = new Set<string>();
  const collect = (s: unknown) => {
    const props = s && typeof s === 'object' ? (s as { properties?: unknown }).properties : undefined;
    if (props && typeof props === 'object') for (const k of Object.keys(props)) declared.add(k);
  };
  collect(schema);
  for (const branch of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(schema[branch])) for (const b of schema[branch] as unknown[]) collect(b);
  for (const key of Object.keys(args)) {
    if (!declared.has(key)) return `arguments.${key}: not declared by the tool's input schema (refused: an undeclared field would be sent without review)`;
  }
  return null;
}

function reasonOf(reason: unknown): string {
  return reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'aborted';
}
