/**
 * Projections of the ledger: the operations table (by id, state, conversation),
 * the pending-approval queue, the audit view and per-operation history, folded from records.
 *
 * A projection is a pure fold over records in sequence order: the same records always give the
 * same projections. It is the one place that says what records mean for an operation: the
 * indexed history (history.ts) folds the records of the operations a query returns with it, and
 * the in-memory journal's history folds all of its records. It reads the gate's event schemas
 * (shared/domain/journal-events.ts) and the ledger's own records (reconciliations, safe-mode
 * acknowledgements, and the checkpoints of older ledgers, which carried every operation). A
 * record whose payload does not match its schema is counted and skipped, never guessed at.
 *
 * Why this file is longer than 450 lines: it is that one place, a single fold; split by record
 * type, what a record means for an operation would no longer be read in one place.
 */
import {
  parseJournalEvent,
  type DecisionRecord,
  type OpProposed,
  type OpTransition,
  type PolicyChanged,
  type ServerSampling,
  type TypedJournalEntry,
} from '../../../shared/domain/journal-events';
import { OBSERVED_OUTCOME_WORDS, observedOutcome, type OpObservation } from '../../../shared/domain/observation';
import {
  OpReconciled,
  RECONCILED_TYPE,
  SAFE_MODE_ACK_TYPE,
  type AuditFilter,
  type AuditRow,
  type OperationHistory,
  type OperationView,
} from '../../../shared/domain/ledger';
import { TERMINAL_STATES, type OperationState } from '../../../shared/domain/operations';
import { DEFAULT_MODE_RULE_ID } from '../../../shared/domain/policy';
import type { JournalRecord, RecordedOperation } from '../ports';
import { CHECKPOINT_TYPE } from './format';

/** Everything the ledger knows about one operation. */
interface OperationFacts {
  proposed: OpProposed;
  transitions: Array<{ seq: number; time: number; t: OpTransition }>;
  reconciled: OpReconciled | null;
  /** What Warden itself saw the call do (the last observation recorded), apart from what the server said. */
  observation?: OpObservation;
  retryOf: string | null;
  proposedSeq: number;
  proposedTime: number;
}

/** The checkpoint form of the operations (older ledgers wrote it at rotation and then deleted segments). */
interface CheckpointState {
  version: 1;
  operations: OperationFacts[];
}

/** The projections, kept current by `apply` (subscribe it to the ledger). */
export class LedgerProjections {
  private readonly ops = new Map<string, OperationFacts>();
  private readonly byState = new Map<string, Set<string>>();
  private readonly byConversation = new Map<string, Set<string>>();
  private readonly rows: AuditRow[] = [];
  /** Records skipped because their payload did not match the schema of their type. */
  readonly skipped: Array<{ seq: number; type: string; why: string }> = [];

  /**
   * Operations taken from an older ledger's checkpoint: all of them, or only these ids (a
   * checkpoint of such a ledger carries every operation it ever made; a query needs a few).
   */
  private carry: ReadonlySet<string> | null = null;

  /** Builds projections from records in sequence order (`carry`: see the field of that name). */
  static fromRecords(records: readonly JournalRecord[], carry?: ReadonlySet<string>): LedgerProjections {
    const p = new LedgerProjections();
    p.carry = carry ?? null;
    for (const r of records) p.apply(r);
    return p;
  }

  /** Folds one record in. Call in sequence order. */
  apply(record: JournalRecord): void {
    if (record.type === CHECKPOINT_TYPE) return this.applyCheckpoint(record);
    if (record.type === RECONCILED_TYPE) return this.applyReconciled(record);
    let event: TypedJournalEntry | null = null;
    try {
      event = parseJournalEvent(record.type, record.payload);
    } catch (error) {
      this.skipped.push({ seq: record.seq, type: record.type, why: error instanceof Error ? error.message.slice(0, 300) : String(error) });
      return;
    }
    if (!event) {
      this.rows.push(this.genericRow(record));
      return;
    }
    switch (event.type) {
      case 'op.proposed': {
        const p = event.payload;
        if (this.ops.has(p.operationId)) {
          this.skipped.push({ seq: record.seq, type: record.type, why: `duplicate operation id ${p.operationId}` });
          return;
        }
        this.ops.set(p.operationId, { proposed: p, transitions: [], reconciled: null, retryOf: null, proposedSeq: record.seq, proposedTime: record.time });
        this.index(p.operationId, null, 'proposed');
        this.rows.push(this.opRow(record, p.operationId, null));
        return;
      }
      case 'op.transition': {
        const t = event.payload;
        const facts = this.ops.get(t.operationId);
        if (!facts) {
          this.skipped.push({ seq: record.seq, type: record.type, why: `transition for unknown operation ${t.operationId}` });
          return;
        }
        const before = this.stateOf(facts);
        facts.transitions.push({ seq: record.seq, time: record.time, t });
        this.index(t.operationId, before, this.stateOf(facts));
        this.rows.push(this.opRow(record, t.operationId, t));
        return;
      }
      case 'op.observation': {
        const o = event.payload;
        const facts = this.ops.get(o.operationId);
        if (!facts) {
          this.skipped.push({ seq: record.seq, type: record.type, why: `observation of unknown operation ${o.operationId}` });
          return;
        }
        // Evidence beside the outcome: the state, the request and the approval stay as recorded.
        facts.observation = o;
        const outcome = observedOutcome(this.stateOf(facts), o);
        this.rows.push({
          ...this.opRow(record, o.operationId, null),
          to: this.stateOf(facts),
          actor: 'warden',
          reason: `${outcome ? `${capitalized(OBSERVED_OUTCOME_WORDS[outcome])}: ` : ''}${o.summary} (${o.source}; ${o.scope})`,
        });
        return;
      }
      case 'policy.changed': {
        const p = event.payload;
        this.rows.push({
          ...this.genericRow(record),
          serverId: p.scope.serverId,
          accountId: p.scope.accountId,
          toolName: p.scope.toolName,
          conversationId: p.scope.conversationId,
          actor: p.source,
          reason: policyChangeWords(p),
        });
        return;
      }
      case 'account.switched': {
        const p = event.payload;
        this.rows.push({ ...this.genericRow(record), serverId: p.serverId, conversationId: p.conversationId, accountId: p.to, actor: p.source, from: p.from, to: p.to, reason: `Active account switched from ${p.from ?? '(none)'} to ${p.to}` });
        return;
      }
      case 'server.endpoint-changed': {
        const p = event.payload;
        this.rows.push({ ...this.genericRow(record), serverId: p.serverId, reason: 'Server endpoint changed' });
        return;
      }
      case 'tool.contract-changed': {
        const p = event.payload;
        const what = p.oldContractHash === null ? 'appeared' : p.newContractHash === null ? 'disappeared' : `changed (${p.changedFields.join(', ') || 'contract'})`;
        this.rows.push({ ...this.genericRow(record), serverId: p.serverId, accountId: p.accountId, toolName: p.toolName, reason: `Tool ${what}` });
        return;
      }
      case 'server.data-read': {
        const p = event.payload;
        const what = p.kind === 'resource' ? `Resource ${p.target}` : `Prompt ${p.target}`;
        const how = p.outcome === 'read' ? (p.kind === 'resource' ? 'read' : 'filled in') : `${p.outcome}${p.reason ? `: ${p.reason}` : ''}`;
        this.rows.push({ ...this.genericRow(record), serverId: p.serverId, accountId: p.accountId, actor: p.source, reason: `${what} ${how}` });
        return;
      }
      case 'server.sampling': {
        const p = event.payload;
        this.rows.push({ ...this.genericRow(record), serverId: p.serverId, accountId: p.accountId, actor: p.decidedBy === 'person' ? 'user' : 'system', reason: samplingRowText(p) });
        return;
      }
      case 'sampling.setting-changed': {
        const p = event.payload;
        this.rows.push({ ...this.genericRow(record), serverId: p.serverId, accountId: p.accountId, actor: p.source === 'removed' ? 'system' : 'user', reason: `Sampling set to ${SAMPLING_MODE_WORDS[p.to.mode]}${p.to.reviewReplies ? ', replies reviewed first' : ''} (was ${SAMPLING_MODE_WORDS[p.from.mode]})` });
        return;
      }
    }
  }

  // ---- reads -------------------------------------------------------------------------------

  /** One operation, or undefined. */
  operation(operationId: string): OperationView | undefined {
    const facts = this.ops.get(operationId);
    return facts ? this.view(facts) : undefined;
  }

  /** Operations, oldest first, optionally filtered by state and/or conversation. */
  operations(filter: { state?: OperationState | 'reconciled'; conversationId?: string } = {}): OperationView[] {
    let ids: Iterable<string> = this.ops.keys();
    if (filter.state) ids = this.byState.get(filter.state) ?? [];
    const out: OperationView[] = [];
    for (const id of ids) {
      const facts = this.ops.get(id)!;
      if (filter.conversationId !== undefined && facts.proposed.origin.conversationId !== filter.conversationId) continue;
      out.push(this.view(facts));
    }
    return out.sort((a, b) => a.requestedAt - b.requestedAt || (a.operationId < b.operationId ? -1 : 1));
  }

  /** Where an operation's proposal is (its seq and record time): the Activity list's paging key. */
  proposal(operationId: string): { seq: number; time: number } | undefined {
    const facts = this.ops.get(operationId);
    return facts ? { seq: facts.proposedSeq, time: facts.proposedTime } : undefined;
  }

  /** Operation ids of one conversation. */
  conversationOperations(conversationId: string): string[] {
    return [...(this.byConversation.get(conversationId) ?? [])];
  }

  /** The pending-approval queue: operations awaiting approval, oldest first. */
  pendingApprovals(): OperationView[] {
    return this.operations({ state: 'awaiting_approval' });
  }

  /** Operations whose outcome is unknown and that nobody has reconciled yet. */
  unreconciled(): OperationView[] {
    return this.operations({ state: 'outcome_unknown' }).filter((o) => o.reconciled === null);
  }

  /** How many operations are known. */
  operationCount(): number {
    return this.ops.size;
  }

  /** Audit rows matching `filter`, in sequence order. */
  audit(filter: AuditFilter = {}): AuditRow[] {
    const types = filter.types ? new Set(filter.types) : null;
    return this.rows.filter(
      (r) =>
        (filter.serverId === undefined || r.serverId === filter.serverId) &&
        (filter.accountId === undefined || r.accountId === filter.accountId) &&
        (filter.toolName === undefined || r.toolName === filter.toolName) &&
        (filter.decision === undefined || r.decision === filter.decision) &&
        (filter.operationId === undefined || r.operationId === filter.operationId) &&
        (filter.conversationId === undefined || r.conversationId === filter.conversationId) &&
        (filter.from === undefined || r.time >= filter.from) &&
        (filter.to === undefined || r.time <= filter.to) &&
        (types === null || types.has(r.type)),
    );
  }

  /** "Why did this run?": decision at request time, approval, fingerprint, outcome, every event. */
  history(operationId: string): OperationHistory | undefined {
    const facts = this.ops.get(operationId);
    if (!facts) return undefined;
    const firstDecision = facts.transitions.find((x) => x.t.decision)?.t.decision ?? null;
    const approved = facts.transitions.find((x) => x.t.to === 'approved');
    const executing = facts.transitions.find((x) => x.t.to === 'executing');
    const last = facts.transitions.at(-1);
    const terminal = last && isTerminal(last.t.to) ? last : undefined;
    return {
      operation: this.view(facts),
      arguments: facts.proposed.canonicalArguments,
      decisionAtRequest: decisionView(firstDecision),
      approval: approved
        ? {
            by: approved.t.actor === 'user' ? 'you' : approved.t.actor === 'policy' ? 'policy (Always Allow)' : approved.t.actor,
            reason: approved.t.reason,
            at: approved.time,
            fingerprint: approved.t.fingerprint ?? null,
            decision: decisionView(approved.t.decision ?? null),
          }
        : null,
      executing: executing ? { at: executing.time, fingerprint: executing.t.fingerprint ?? null } : null,
      outcome: facts.reconciled
        ? { state: facts.reconciled.outcome === 'retried' ? 'outcome_unknown' : facts.reconciled.outcome, at: facts.reconciled.at, reason: `Reconciled by ${facts.reconciled.by}: ${facts.reconciled.reason}`, resultIsError: null }
        : terminal
          ? { state: terminal.t.to, at: terminal.time, reason: terminal.t.reason, resultIsError: terminal.t.result ? terminal.t.result.isError : null }
          : null,
      events: this.audit({ operationId }),
    };
  }

  /** One operation as recorded (what the gate's idempotency, recovery and a retry read), or undefined. */
  recorded(operationId: string): RecordedOperation | undefined {
    const facts = this.ops.get(operationId);
    return facts ? this.recordedOf(facts) : undefined;
  }

  /** Every operation as recorded, oldest first. */
  recordedAll(): RecordedOperation[] {
    return [...this.ops.values()].map((f) => this.recordedOf(f));
  }

  // ---- internals ---------------------------------------------------------------------------

  private recordedOf(facts: OperationFacts): RecordedOperation {
    const last = facts.transitions.at(-1);
    let decision: DecisionRecord | null = null;
    for (const x of facts.transitions) if (x.t.decision) decision = x.t.decision;
    const result = [...facts.transitions].reverse().find((x) => x.t.result)?.t.result ?? null;
    const error = [...facts.transitions].reverse().find((x) => x.t.error)?.t.error ?? null;
    const expiresAt = [...facts.transitions].reverse().find((x) => x.t.expiresAt !== undefined)?.t.expiresAt;
    return {
      proposed: structuredClone(expiresAt !== undefined ? { ...facts.proposed, expiresAt } : facts.proposed),
      state: this.stateOf(facts),
      reason: last?.t.reason ?? 'Proposed',
      decision: decision ? structuredClone(decision) : null,
      approvedByUser: facts.transitions.some((x) => x.t.to === 'approved' && x.t.actor === 'user'),
      result: result ? structuredClone(result) : null,
      error: error ? structuredClone(error) : null,
      history: facts.transitions.map((x) => ({ from: x.t.from, to: x.t.to, reason: x.t.reason, at: x.time })),
      observation: facts.observation ? structuredClone(facts.observation) : null,
    };
  }

  private applyCheckpoint(record: JournalRecord): void {
    const state = (record.payload.state ?? null) as CheckpointState | null;
    if (!state || state.version !== 1 || !Array.isArray(state.operations)) return;
    // Seeds operations only known from segments that retention removed; known ones are already
    // current (the checkpoint was written from this same fold).
    for (const raw of state.operations) {
      const id = raw?.proposed?.operationId;
      if (typeof id !== 'string' || this.ops.has(id) || (this.carry !== null && !this.carry.has(id))) continue;
      try {
        const proposed = parseJournalEvent('op.proposed', raw.proposed)!.payload as OpProposed;
        const transitions = (raw.transitions ?? []).map((x) => ({ seq: x.seq, time: x.time, t: parseJournalEvent('op.transition', x.t)!.payload as OpTransition }));
        const reconciled = raw.reconciled ? OpReconciled.parse(raw.reconciled) : null;
        const facts: OperationFacts = { proposed, transitions, reconciled, retryOf: raw.retryOf ?? null, proposedSeq: raw.proposedSeq, proposedTime: raw.proposedTime };
        this.ops.set(id, facts);
        this.index(id, null, this.stateOf(facts));
        // Its one row in the audit view stands for the records that were deleted, under the seq
        // of its proposal (where the index files it).
        const state = this.stateOf(facts);
        this.rows.push({
          ...this.opRow(record, id, null),
          seq: facts.proposedSeq,
          time: facts.proposedTime,
          to: state,
          reason: `Carried over from an older ledger's checkpoint (its earlier records were deleted): ${state}`,
          actor: null,
        });
      } catch (error) {
        this.skipped.push({ seq: record.seq, type: record.type, why: `checkpoint operation ${id}: ${error instanceof Error ? error.message.slice(0, 200) : String(error)}` });
      }
    }
  }

  private applyReconciled(record: JournalRecord): void {
    const parsed = OpReconciled.safeParse(record.payload);
    if (!parsed.success) {
      this.skipped.push({ seq: record.seq, type: record.type, why: parsed.error.message.slice(0, 300) });
      return;
    }
    const r = parsed.data;
    const facts = this.ops.get(r.operationId);
    if (!facts || this.stateOf(facts) !== 'outcome_unknown' || facts.reconciled) {
      this.skipped.push({ seq: record.seq, type: record.type, why: `operation ${r.operationId} is not an unreconciled outcome_unknown` });
      return;
    }
    const before = this.stateOf(facts);
    facts.reconciled = r;
    this.index(r.operationId, before, this.stateOf(facts));
    if (r.retryOperationId) {
      const retry = this.ops.get(r.retryOperationId);
      if (retry) retry.retryOf = r.operationId;
    }
    this.rows.push({
      ...this.opRow(record, r.operationId, null),
      from: 'outcome_unknown',
      to: r.outcome === 'retried' ? 'outcome_unknown' : r.outcome,
      actor: r.by,
      reason: `Reconciled as ${r.outcome} by ${r.by}: ${r.reason}${r.retryOperationId ? ` (retry: ${r.retryOperationId})` : ''}`,
    });
  }

  /** Current state: the last transition's `to`, or the reconciled outcome. */
  private stateOf(facts: OperationFacts): OperationState {
    if (facts.reconciled && facts.reconciled.outcome !== 'retried') return facts.reconciled.outcome;
    return facts.transitions.at(-1)?.t.to ?? 'proposed';
  }

  private index(id: string, before: string | null, after: string): void {
    if (before !== null) this.byState.get(before)?.delete(id);
    let set = this.byState.get(after);
    if (!set) this.byState.set(after, (set = new Set()));
    set.add(id);
    const conv = this.ops.get(id)?.proposed.origin.conversationId;
    if (conv) {
      let c = this.byConversation.get(conv);
      if (!c) this.byConversation.set(conv, (c = new Set()));
      c.add(id);
    }
  }

  private view(facts: OperationFacts): OperationView {
    const p = facts.proposed;
    const last = facts.transitions.at(-1);
    let decision: DecisionRecord | null = null;
    for (const x of facts.transitions) if (x.t.decision) decision = x.t.decision;
    const resultT = [...facts.transitions].reverse().find((x) => x.t.result);
    const errorT = [...facts.transitions].reverse().find((x) => x.t.error);
    return {
      operationId: p.operationId,
      state: this.stateOf(facts),
      source: p.origin.source,
      conversationId: p.origin.conversationId,
      serverId: p.identity.serverId,
      accountId: p.identity.accountId,
      toolName: p.identity.toolName,
      fingerprint: p.fingerprint,
      requestedAt: p.requestedAt,
      updatedAt: facts.reconciled?.at ?? last?.time ?? facts.proposedTime,
      expiresAt: [...facts.transitions].reverse().find((x) => x.t.expiresAt !== undefined)?.t.expiresAt ?? p.expiresAt ?? null,
      decision: decisionView(decision),
      reason: facts.reconciled ? `Reconciled by ${facts.reconciled.by}: ${facts.reconciled.reason}` : (last?.t.reason ?? 'Proposed'),
      approvedByUser: facts.transitions.some((x) => x.t.to === 'approved' && x.t.actor === 'user'),
      reachedExecuting: facts.transitions.some((x) => x.t.to === 'executing'),
      resultIsError: resultT?.t.result ? resultT.t.result.isError : null,
      error: errorT?.t.error ? { ...errorT.t.error } : null,
      reconciled: facts.reconciled ? { ...facts.reconciled } : null,
      retryOf: facts.retryOf,
      observedOutcome: observedOutcome(this.stateOf(facts), facts.observation),
      observation: facts.observation ? structuredClone(facts.observation) : null,
    };
  }

  private genericRow(record: JournalRecord): AuditRow {
    return {
      seq: record.seq,
      time: record.time,
      type: record.type,
      operationId: null,
      serverId: null,
      accountId: null,
      toolName: null,
      conversationId: null,
      from: null,
      to: null,
      decision: null,
      reason: record.type === SAFE_MODE_ACK_TYPE ? `Safe mode acknowledged by ${String(record.payload.by)}: ${String(record.payload.reason)}` : record.type,
      actor: null,
      fingerprint: null,
      arguments: null,
    };
  }

  private opRow(record: JournalRecord, operationId: string, t: OpTransition | null): AuditRow {
    const facts = this.ops.get(operationId)!;
    const p = facts.proposed;
    let decision: DecisionRecord | null = t?.decision ?? null;
    if (!decision) for (const x of facts.transitions) if (x.t.decision) decision = x.t.decision;
    return {
      seq: record.seq,
      time: record.time,
      type: record.type,
      operationId,
      serverId: p.identity.serverId,
      accountId: p.identity.accountId,
      toolName: p.identity.toolName,
      conversationId: p.origin.conversationId,
      from: t?.from ?? null,
      to: t?.to ?? 'proposed',
      decision: decision?.decision ?? null,
      reason: t?.reason ?? `Requested by ${p.origin.source}`,
      actor: t?.actor ?? p.origin.source,
      fingerprint: t?.fingerprint ?? p.fingerprint,
      arguments: p.canonicalArguments,
    };
  }
}

function capitalized(words: string): string {
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function isTerminal(state: OperationState): boolean {
  return TERMINAL_STATES.has(state);
}

function decisionView(d: DecisionRecord | null): OperationHistory['decisionAtRequest'] {
  return d ? { decision: d.decision, reason: d.reason, layer: d.layer, ruleId: d.ruleId } : null;
}

/** What each rule scope covers, as the Activity log says it (the row names the server and tool). */
const SCOPE_WORDS: Record<PolicyChanged['scope']['kind'], string> = {
  global: 'Rule for every tool',
  server: "Rule for this server's tools",
  tool: 'Rule for this tool',
  'tool-constraint': 'Rule for this tool with conditions',
  conversation: 'Rule for this conversation',
  organization: 'Organization rule',
};

function modeWords(rule: Record<string, unknown> | null): string {
  const mode = rule?.mode;
  if (mode === 'allow') return 'Always Allow';
  if (mode === 'ask') return 'Ask';
  if (mode === 'disabled') return 'Disabled';
  if (mode === 'forbid') return 'Forbidden';
  return JSON.stringify(mode ?? null);
}

/**
 * A rule change in words ("Rule for this tool changed from Ask to Always Allow"): the row itself
 * carries the server, account and tool, so the rule's id (built from theirs) is not repeated.
 */
export function policyChangeWords(p: PolicyChanged): string {
  const what = p.ruleId === DEFAULT_MODE_RULE_ID ? 'Default for tools with no mode' : SCOPE_WORDS[p.scope.kind];
  if (p.old === null) return `${what} set to ${modeWords(p.new)}`;
  if (p.new === null) return `${what} removed (was ${modeWords(p.old)})`;
  return `${what} changed from ${modeWords(p.old)} to ${modeWords(p.new)}`;
}

const SAMPLING_MODE_WORDS = { off: 'off', ask: 'ask every time', always: 'always' } as const;

/** One sampling request in words for the audit log. */
export function samplingRowText(p: ServerSampling): string {
  const model = p.model ? ` with ${p.model}` : '';
  if (p.outcome === 'answered') {
    const by = p.decidedBy === 'always' ? 'allowed by the Always setting' : 'allowed by you';
    const tokens = p.inputTokens !== null || p.outputTokens !== null ? `, ${p.inputTokens ?? '?'} tokens in, ${p.outputTokens ?? '?'} out` : '';
    const tools = p.toolUses ? `, ${p.toolUses} tool request${p.toolUses === 1 ? '' : 's'} returned to the server` : '';
    return `Sampling answered${model} (${by}${tokens}${tools})`;
  }
  const who = { off: 'sampling is off', person: 'you denied it', always: 'the Always setting', limit: 'a limit', invalid: 'the request was not valid' }[p.decidedBy];
  return `Sampling ${p.outcome} (${who})${p.reason ? `: ${p.reason}` : ''}`;
}
