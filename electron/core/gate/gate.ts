/**
 * The gate: the single entry point for every tool call, from any source.
 *
 * Longer than 450 lines because the flow is one class on purpose: every decision and state change
 * must run in one synchronous step over its private state, and splitting it would scatter that step.
 * What it is built from lives beside it: the operation record (operation.ts), argument preparation
 * (arguments.ts), policy checks (decisions.ts), retention (retention.ts), approval previews
 * (approval-preview.ts), expiry (expiry.ts) and sending a call (execute.ts).
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
import type { OperationState } from '../../../shared/domain/operations';
import { TERMINAL_STATES } from '../../../shared/domain/operations';
import { journalEntry, type OpProposed, type RequestOrigin, type ToolIdentity } from '../../../shared/domain/journal-events';
import type { PolicyDecision, PolicyState } from '../../../shared/domain/policy';
import { WardenError } from '../../../shared/result';
import { activeAccountOf } from '../policy/engine';
import { hostPaths } from '../paths/resolve';
import { CallAbort } from './call-abort';
import { systemClock, type ApprovalPreview, type Clock, type JournalEntry } from '../ports';
import { approvalPreview } from './approval-preview';
import { ArgumentValidator, prepareArguments } from './arguments';
import { GateDecisions, type Simulation } from './decisions';
import {
  moveTo,
  newOperation,
  rebuild,
  settle,
  settledRebuild,
  snapshot,
  whenSettled,
  type Operation,
  type OperationSnapshot,
  type RestoredOperation,
  type TransitionExtra,
} from './operation';
import type { RegistryChange, ToolDescriptor } from './ports';
import { DEFAULT_MAX_RESULT_BYTES } from './result-cap';
import { sendCall } from './execute';
import { ApprovalExpiry } from './expiry';
import { DEFAULT_APPROVAL_TTL_MS, DEFAULT_LISTING_WAIT_MS, type GateDeps, type GateRequest } from './gate-deps';
import { HeldOperations, JournalOrder } from './retention';

// The gate's types and limits are imported from here by its callers; they live beside the code that owns them.
export { MAX_ARGUMENTS_BYTES } from './arguments';
export type { PolicySource } from './decisions';
export type { OperationNames, OperationSnapshot, RestoredOperation } from './operation';
export { DEFAULT_APPROVAL_TTL_MS, DEFAULT_LISTING_WAIT_MS, type GateDeps, type GateRequest } from './gate-deps';

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

/**
 * The gate. One instance per core; all tool calls go through `request`/`submit`.
 */
export class Gate {
  /** The operations the gate holds, and the history lookups of ids it does not. */
  private readonly held: HeldOperations;
  private readonly listeners = new Set<Listener>();
  private readonly validator = new ArgumentValidator();
  private readonly clock: Clock;
  private readonly ttl: () => number;
  private readonly decisions: GateDecisions;
  private readonly expiry: ApprovalExpiry;
  private readonly unsubscribeRegistry: (() => void) | undefined;

  /** The journal, in decision order; finished operations retire from `live` once recorded. */
  private readonly journal: JournalOrder;

  constructor(private readonly deps: GateDeps) {
    this.clock = deps.clock ?? systemClock;
    const ttl = deps.approvalTtlMs ?? DEFAULT_APPROVAL_TTL_MS;
    this.ttl = typeof ttl === 'function' ? ttl : () => ttl;
    this.decisions = new GateDecisions(deps.policy, deps.registry, deps.paths ?? hostPaths(), deps.names);
    this.journal = new JournalOrder(deps.journal);
    this.held = new HeldOperations(deps.history, deps.names);
    this.expiry = new ApprovalExpiry(this.clock, deps.scheduleExpiry !== false, () => this.sweepExpired());
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
    const a = this.held.admitsAtOnce(req.operationId) ? this.admit(req) : await this.admitKnown(req);
    await this.proceed(a, true);
    if (!TERMINAL_STATES.has(a.op.state)) await whenSettled(a.op);
    return snapshot(a.op);
  }

  /**
   * Submits a tool call and resolves once it is decided (awaiting approval, executing, or done).
   *
   * Why: the UI and batch handling need the operation id and state before the outcome.
   */
  async submit(req: GateRequest): Promise<OperationSnapshot> {
    const listing = this.listed(req.serverId, req.accountId);
    if (listing !== undefined) await listing;
    const a = this.held.admitsAtOnce(req.operationId) ? this.admit(req) : await this.admitKnown(req);
    await this.proceed(a, false);
    return snapshot(a.op);
  }

  /**
   * Everything a request decides, in one synchronous step: the frozen copy, validation, the
   * decision, the transitions, and the journal append of their records (durable if the call is
   * to be sent). Nothing here awaits, so no approval, revocation or policy change can interleave.
   */
  private admit(req: GateRequest): Admission {
    const id = req.operationId ?? this.deps.newId?.() ?? randomUUID();
    const existing = this.held.live.get(id);
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
    const { args, canonicalArguments, copyError } = prepareArguments(req.arguments);

    const op: Operation = newOperation(this.deps.names, id, origin, identity, args, canonicalArguments, now, tool);
    this.held.live.set(id, op);
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
      // Recorded as a decision, so the log says why: the rules' own refusal when they refuse too (a
      // Disabled tool the chat never offered), otherwise the chat's (a cap, a name never offered).
      const ruled = this.decisions.decideNow(op, tool);
      const decision: PolicyDecision = ruled.decision === 'deny' && ruled.layer !== 'availability' ? ruled : { decision: 'deny', reason: req.refusedBecause, layer: 'chat', ruleId: null, pin: 'none', configErrors: [] };
      op.decision = decision;
      entries.push(this.transition(op, 'denied', req.refusedBecause, { decision, actor: decision.layer === 'chat' ? 'gate' : 'policy' }));
      return this.recorded(op, entries);
    }
    if (copyError) {
      entries.push(this.transition(op, 'validation_failed', `Invalid arguments: ${copyError}`, { error: { code: 'VALIDATION_FAILED', message: copyError } }));
      return this.recorded(op, entries);
    }

    // Not listed → deny (before validation: there is no schema to validate against).
    if (tool) {
      const invalid = this.validator.validate(tool, args);
      if (invalid) {
        entries.push(this.transition(op, 'validation_failed', `Invalid arguments: ${invalid}`, { error: { code: 'VALIDATION_FAILED', message: invalid } }));
        return this.recorded(op, entries);
      }
    }

    const decision = this.decisions.decideNow(op, tool);
    op.decision = decision;
    if (decision.decision === 'deny') {
      entries.push(this.transition(op, 'denied', decision.reason, { decision, actor: 'policy' }));
      return this.recorded(op, entries);
    }
    if (decision.decision === 'ask') {
      op.expiresAt = now + this.ttl();
      proposed.expiresAt = op.expiresAt;
      entries.push(this.transition(op, 'awaiting_approval', decision.reason, { decision, actor: 'policy', expiresAt: op.expiresAt }));
      this.expiry.schedule(op);
      return this.recorded(op, entries);
    }
    // Always Allow: approved + executing go to the journal in ONE durable append.
    entries.push(this.transition(op, 'approved', decision.reason, { decision, actor: 'policy', fingerprint: op.fingerprint }));
    // The decision above was made in this same synchronous step: it IS the pre-execute check.
    return this.prepareSend(op, entries, { fingerprint: op.fingerprint, decision });
  }


  /**
   * A new operation id for a caller that must know it before the call is recorded (the chat:
   * Stop must reach a call whose records are still being written). The gate made it, so its first
   * submission is admitted at once like a call without an id: no history lookup, which after a
   * start that found the index out of date would wait until the index caught up.
   */
  newOperationId(): string {
    return this.held.mint(this.deps.newId?.() ?? randomUUID());
  }

  /** See `HeldOperations.admitKnown`. */
  private admitKnown(req: GateRequest): Promise<Admission> {
    return this.held.admitKnown(req.operationId!, () => this.admit(req), (op) => ({ op, written: null, send: false, entries: NO_ENTRIES }));
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

  /**
   * An admission that ends here: its records are appended, nothing is sent. An approval request
   * the journal refused to record is cancelled before anyone hears of the failure: a pending
   * operation with no record must not be approvable later (its approval would be the journal's
   * first word about it).
   */
  private recorded(op: Operation, entries: JournalEntry[]): Admission {
    const written = this.journal.append(entries);
    if (op.state === 'awaiting_approval') {
      // Registered before any caller's await, so it runs first; it handles the rejection for
      // itself only (callers awaiting `written` still get the error).
      written.catch((error: unknown) => {
        if (op.state !== 'awaiting_approval') return;
        const why = `the journal could not record the approval request (${error instanceof Error ? error.message : String(error)})`;
        const cancelled = this.transition(op, 'cancelled', `Not recorded: ${why}`, { actor: 'gate' });
        this.journal.append([...entries, cancelled]).catch(() => undefined);
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
    const op = await this.held.mustGet(operationId, 'approved');
    // Approved against what the server lists now: a re-list it announced is waited for first.
    const listing = op.state === 'awaiting_approval' ? this.listed(op.identity.serverId, op.identity.accountId) : undefined;
    if (listing !== undefined) {
      await listing;
      // Settled while the new listing came in (invalidated by it, say): that is what happened.
      if (op.state !== 'awaiting_approval') return snapshot(op);
      // No new listing came (the re-list failed, was refused or is still running): the person
      // approved a tool the server said it changed, and what it is now is unknown. Fail closed.
      const unverified = this.deps.registry.getTool(op.identity.serverId, op.identity.accountId, op.identity.toolName)?.unverifiedListing;
      if (unverified !== undefined) {
        await this.journal.append([this.transition(op, 'invalidated', `Invalidated: ${unverified}, so an approval given meanwhile sends nothing`, { actor: 'gate' })]);
        return snapshot(op);
      }
    }
    if (op.state !== 'awaiting_approval') {
      throw new WardenError('CONFLICT', `Operation ${operationId} cannot be approved: it is ${op.state}${op.approvedByUser ? ' (approval is single-use)' : ''}`);
    }
    if (op.expiresAt !== null && this.clock.now() >= op.expiresAt) {
      await this.journal.append([this.transition(op, 'expired', 'The approval request expired before it was approved', { actor: 'gate' })]);
      return snapshot(op);
    }
    const check = this.decisions.recheck(op);
    if (check.kind === 'invalidated') {
      await this.journal.append([this.transition(op, 'invalidated', check.reason, { actor: 'gate', fingerprint: check.fingerprint, decision: check.decision })]);
      return snapshot(op);
    }
    op.decision = check.decision;
    if (check.decision.decision === 'deny') {
      await this.journal.append([this.transition(op, 'denied', check.decision.reason, { decision: check.decision, actor: 'policy' })]);
      return snapshot(op);
    }
    op.approvedByUser = true;
    const entries = [this.transition(op, 'approved', 'Approved by you', { actor: 'user', decision: check.decision, fingerprint: check.fingerprint })];
    // recheck() above ran in this same synchronous step (no await since): it is the pre-execute check.
    await this.proceed(this.prepareSend(op, entries, check), false);
    return snapshot(op);
  }

  /** Rejects a pending operation; nothing is sent. Why: the person (or a renderer) said no. */
  async reject(operationId: string, reason = 'Rejected by you'): Promise<OperationSnapshot> {
    const op = await this.held.mustGet(operationId, 'rejected');
    if (op.state !== 'awaiting_approval') throw new WardenError('CONFLICT', `Operation ${operationId} cannot be rejected: it is ${op.state}`);
    await this.journal.append([this.transition(op, 'rejected', reason, { actor: 'user' })]);
    return snapshot(op);
  }

  /**
   * Cancels an operation: pending or approved-not-yet-executing ones are cancelled; an executing
   * one has its call aborted (it ends `outcome_unknown`, since the server may have acted).
   */
  async cancel(operationId: string, reason = 'Cancelled by you'): Promise<OperationSnapshot> {
    const op = await this.held.mustGet(operationId, 'cancelled');
    if (op.state === 'awaiting_approval' || op.state === 'approved') {
      await this.journal.append([this.transition(op, 'cancelled', reason, { actor: 'user' })]);
    } else if (op.state === 'executing') {
      op.abort?.abort(new WardenError('CANCELLED', reason));
    } else {
      throw new WardenError('CONFLICT', `Operation ${operationId} cannot be cancelled: it is ${op.state}`);
    }
    return snapshot(op);
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
    for (const op of [...this.held.live.values()]) {
      if (op.state === 'awaiting_approval') {
        if (op.waitingForServer) {
          const unlisted = this.deps.registry.listTools({ serverId: op.identity.serverId, accountId: op.identity.accountId }).length === 0;
          if (options.registryChange && unlisted) continue;
          op.waitingForServer = false;
        }
        const check = this.decisions.recheck(op);
        if (check.kind === 'invalidated') entries.push(this.transition(op, 'invalidated', `${check.reason} (${cause})`, { actor: 'gate', fingerprint: check.fingerprint, decision: check.decision }));
        else if (check.decision.decision === 'deny') entries.push(this.transition(op, 'denied', `${check.decision.reason} (${cause})`, { actor: 'policy', decision: check.decision }));
      } else if (op.state === 'executing' && op.abort && !op.abort.signal.aborted) {
        const check = this.decisions.recheck(op);
        if (check.kind === 'invalidated' || check.decision.decision === 'deny' || (check.decision.decision === 'ask' && !op.approvedByUser)) {
          const why = check.kind === 'invalidated' ? check.reason : check.decision.reason;
          op.abort.abort(new WardenError('CANCELLED', `Permission revoked while running: ${why} (${cause})`));
        }
      }
    }
    if (entries.length) await this.journal.append(entries);
  }

  /** Expires every pending approval whose time is up. Why: stale approvals must not linger. */
  async sweepExpired(): Promise<void> {
    const now = this.clock.now();
    const entries: JournalEntry[] = [];
    for (const op of [...this.held.live.values()]) {
      if (op.state === 'awaiting_approval' && op.expiresAt !== null && now >= op.expiresAt) {
        entries.push(this.transition(op, 'expired', 'The approval request expired', { actor: 'gate' }));
      }
    }
    if (entries.length) await this.journal.append(entries);
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
      if (r.state !== 'awaiting_approval' || this.held.live.has(r.proposed.operationId)) continue;
      const op = rebuild(this.deps.names, r);
      this.held.live.set(op.id, op);
      // A recovered approval without a recorded deadline gets a fresh one, never an endless wait.
      if (op.expiresAt === null) op.expiresAt = this.clock.now() + this.ttl();
      this.expiry.schedule(op);
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
    await this.held.admitted(operationId);
    const op = this.held.live.get(operationId);
    if (op) return snapshot(op);
    const recorded = await this.deps.history.find(operationId);
    return recorded ? snapshot(settledRebuild(this.deps.names, recorded)) : undefined;
  }

  /** The live operation with this id, as a copy, or undefined (finished ones: `get`). */
  getLive(operationId: string): OperationSnapshot | undefined {
    const op = this.held.live.get(operationId);
    return op ? snapshot(op) : undefined;
  }

  /** A copy of a recorded operation, shaped as the gate shows operations (the live one if held). */
  describe(recorded: RestoredOperation): OperationSnapshot {
    const op = this.held.live.get(recorded.proposed.operationId);
    return snapshot(op ?? settledRebuild(this.deps.names, recorded));
  }

  /** Copies of the live operations, newest first, optionally filtered. */
  list(filter: { state?: OperationState; conversationId?: string } = {}): OperationSnapshot[] {
    const out: OperationSnapshot[] = [];
    for (const op of this.held.live.values()) {
      // A finished operation stays until its records are in the journal (see `retire`): not live.
      if (TERMINAL_STATES.has(op.state)) continue;
      if (filter.state && op.state !== filter.state) continue;
      if (filter.conversationId && op.origin.conversationId !== filter.conversationId) continue;
      out.push(snapshot(op));
    }
    return out.sort((a, b) => b.requestedAt - a.requestedAt || (a.operationId < b.operationId ? -1 : 1));
  }

  /** Pending approvals (copies). */
  pending(): OperationSnapshot[] {
    return this.list({ state: 'awaiting_approval' });
  }

  /** Resolves with the operation once it reaches a terminal state (a copy). */
  async settled(operationId: string): Promise<OperationSnapshot> {
    await this.held.admitted(operationId);
    const op = this.held.live.get(operationId);
    if (op) {
      await whenSettled(op);
      return snapshot(op);
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
    const op = this.held.live.get(operationId);
    if (!op) throw new WardenError('CONFLICT', `Operation ${operationId} is not awaiting approval (no pending operation has this id)`);
    if (op.state !== 'awaiting_approval') throw new WardenError('CONFLICT', `Operation ${operationId} is not awaiting approval (it is ${op.state})`);
    return approvalPreview(op, this.deps.registry.getTool(op.identity.serverId, op.identity.accountId, op.identity.toolName));
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
  ): Simulation {
    return this.decisions.simulate(req, options, this.validator, this.clock.now());
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
    this.expiry.close();
    this.unsubscribeRegistry?.();
  }

  // ---- internals ---------------------------------------------------------------------------

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
    return { op, written: this.journal.append(entries, true), send: true, entries };
  }

  /** `executing` could not be recorded durably: the call is not sent, and it ends `failed`. */
  private async notWritten(a: Admission, error: unknown): Promise<void> {
    const op = a.op;
    const why = `the journal could not record it durably (${error instanceof Error ? error.message : String(error)})`;
    const failed = this.transition(op, 'failed', `Not sent: ${why}`, { error: { code: 'JOURNAL_FAILED', message: why } });
    op.abort = null;
    // Best effort, non-durable: the whole story (proposed … executing → failed), never half of it.
    await this.journal.append([...a.entries, failed]).catch(() => undefined);
  }

  /** Sends the call (its `executing` is durable by now) and records how it ended. */
  private runCall(op: Operation): Promise<void> {
    const observer = this.deps.observer;
    const observe = observer
      ? {
          observer,
          call: () => ({ operationId: op.id, serverId: op.identity.serverId, accountId: op.identity.accountId, toolName: op.identity.toolName, args: op.args, tool: this.deps.registry.getTool(op.identity.serverId, op.identity.accountId, op.identity.toolName) }),
        }
      : undefined;
    return sendCall(op, this.deps.executor, this.deps.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES, (to, reason, extra) => this.transition(op, to, reason, extra), this.journal, observe);
  }

  /** Applies a transition in memory (synchronously) and returns its journal entry. */
  private transition(op: Operation, to: OperationState, reason: string, extra: TransitionExtra = NO_EXTRA): JournalEntry {
    const entry = moveTo(op, to, reason, extra, this.clock.now());
    if (this.expiry.armed && to !== 'awaiting_approval') this.expiry.clear(op);
    if (TERMINAL_STATES.has(to)) {
      settle(op);
      this.journal.retire(this.held.live, op);
    }
    if (this.listeners.size) {
      const snap = snapshot(op);
      queueMicrotask(() => {
        for (const l of this.listeners) l(snap);
      });
    }
    return entry;
  }

  private onRegistryChange(change: RegistryChange): void {
    const cause = change.kind === 'endpoint-changed' ? 'server endpoint changed' : change.kind === 'disconnected' ? 'server disconnected' : 'tool list changed';
    // The decisions are made (in memory) before revalidate's append; only their records can fail.
    this.revalidate(cause, { registryChange: true }).catch((error: unknown) => {
      console.error(`gate: re-validating after "${cause}" could not be journaled`, error);
    });
  }
}

const NO_EXTRA: TransitionExtra = Object.freeze({});
const NO_ENTRIES: readonly JournalEntry[] = Object.freeze([]);
