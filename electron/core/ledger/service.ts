/**
 * The ledger service: the durable ledger, its persistent index and the history read through it,
 * crash recovery of operations, reconciliation of `outcome_unknown` operations, and exports.
 *
 * Start-up order (what app-core does):
 *   1. `LedgerService.open({ dir, redactor })` — the index is opened, then log recovery reads what
 *      was written since the index last committed (torn tail, chain breaks, safe mode) and hands
 *      it to the index. An index that is missing, unusable or far behind is not rebuilt here:
 *      start reads only the end of the log and the index catches up in the background
 *      (catch-up.ts); history reads wait for it.
 *   2. Build the gate with `journal: service.ledger` and `history: service.history`.
 *   3. `service.recoverOperations(gate)` — the one place that settles what a crash interrupted.
 *
 * Why this file is long: settling interrupted operations depends on how far the index has caught
 * up (what start read from the end of the log, what was settled then, what is left for later), so
 * recovery, the catch-up's state and the pins it rebuilds share one owner. The next split is
 * `settle`/`reconcile` into their own file once the catch-up's state has a small interface.
 */
import { join } from 'node:path';
import { journalEntry } from '../../../shared/domain/journal-events';
import { RECONCILED_TYPE, SAFE_MODE_ACK_TYPE, type AuditFilter, type LedgerChainBreak, type LedgerStatus, type OperationView } from '../../../shared/domain/ledger';
import type { OperationRecoveryReport } from '../../../shared/contract/activity';
import { WardenError } from '../../../shared/result';
import type { Clock, JournalEntry, RecordedOperation } from '../ports';
import { REDACTED, Redactor } from '../redact/redactor';
import { writeAuditFile } from './export';
import { IndexedHistory, type HistoryReads } from './history';
import { LedgerIndex } from './index-store';
import { Ledger, type LedgerOptions } from './ledger';
import { inDir, nodeLedgerFs, type LedgerFs } from './ledger-fs';
import { preserve, type LogPosition } from './recovery';
import { openSqlite } from './sqlite';
import { verifyInSlices, type VerifyOptions } from './verify';
import { AnchorKeeper, readKeychain, unanchoredStartProblem, type Anchor, type AnchoredRecord, type LedgerKeychain } from './anchor';
import { checkAgainstAnchor, type KeychainFindings } from './anchor-check';
import { IndexCatchUp, TailOperations, catchUpStopped } from './catch-up';
import type { ChainKey, StoredRecord } from './format';
import { segmentName, segmentNumbers } from './segments';
import { ensurePrivateFile, makePrivateFolder } from '../storage/private-files';

/** What the gate offers recovery: re-queueing approvals that were pending (it re-validates them). */
export interface RestorableGate {
  restore(operations: readonly RecordedOperation[]): Promise<void>;
}

/** What a retry needs: submitting a NEW operation through the gate (fresh decision). */
export interface SubmittingGate {
  submit(request: {
    source: 'user';
    conversationId: string | null;
    serverId: string;
    accountId: string;
    toolName: string;
    arguments: Record<string, unknown>;
  }): Promise<{ operationId: string }>;
}

/** How the service is opened. */
export interface LedgerServiceOptions extends Omit<LedgerOptions, 'reader'> {
  /** Setting: cancel approvals that were pending at a crash instead of re-queueing them. */
  cancelPendingOnRestart?: boolean;
  /** Start the full verification of every record right after opening (default true). */
  verifyInBackground?: boolean;
  /**
   * Where the ledger's key and its anchor are kept (the app: the OS keychain). Without one the
   * ledger is plain sha256 as before it had keys: it shows damage, not a deliberate rewrite.
   */
  keychain?: LedgerKeychain;
  /**
   * When the index is not current: how many bytes at the end of the log start reads (default
   * 1 MiB; the index's catch-up reads the rest). Tests make it small to reach the case of an
   * operation whose records start before it.
   */
  startTailBytes?: number;
  /**
   * How long records added to the index wait to be committed together (default 100 ms). Tests
   * make it long to ask about records that are in the index's batch and not committed yet.
   */
  indexCommitDelayMs?: number;
}

/** What a full verification found. */
export interface VerificationResult {
  records: number;
  /** Breaks found (each acknowledged or not); an unacknowledged one puts the ledger in safe mode. */
  breaks: number;
  safeMode: boolean;
  durationMs: number;
}

/** Recovery's settlements: what each unfinished state becomes after a crash (never a resend). */
const SETTLE = {
  executing: { to: 'outcome_unknown', reason: 'Recovered after a restart while executing: the server may or may not have acted; never re-sent' },
  approved: { to: 'cancelled', reason: 'Recovered after a restart before executing: not sent' },
  proposed: { to: 'denied', reason: 'Recovered after a restart before a decision: submit it again' },
} as const;

/**
 * The contract of each tool last recorded, per (server, account): what a first discovery is
 * compared with. Each value keeps the seq of the record it came from: while the index catches up,
 * pins arrive out of order (newest first from the tail, older ones from the index), and only a
 * newer record may replace one.
 */
type Pins = Map<string, { tools: Map<string, { hash: string | null; seq: number }>; instructions: { hash: string | null; seq: number } }>;

/** Bytes at the end of the log a start without a current index reads (see `startTailBytes`). */
const START_TAIL_BYTES = 1024 * 1024;

/** Ids of problems found in the keychain at one start (checked again at every start). */
const PER_START = /^(keychain|key-missing|anchor-unreadable)@/;

/** The durable ledger, its index and history, recovery and reconciliation. */
export class LedgerService {
  private lastRecovery: OperationRecoveryReport | null = null;
  readonly history: HistoryReads;
  private readonly pins: Pins = new Map();
  private readonly safeModeListeners = new Set<(safeMode: boolean) => void>();
  private closing = false;
  private closed: Promise<void> | null = null;
  private running: Promise<VerificationResult> | null = null;
  /** The full verification started at open, or null when it was not started. */
  verification: Promise<VerificationResult> | null = null;
  /** Keeps the anchor outside the ledger up to date (null without a keychain, or while it is held). */
  private keeper: AnchorKeeper | null = null;
  /** The anchor this start checked the ledger against (what `ledger:verify` checks too). */
  private anchor: Anchor | null = null;
  private keychain: LedgerKeychain | null = null;
  /** The index's background catch-up while it runs (null once it is live, or when none was needed). */
  private catchUp: IndexCatchUp | null = null;
  /** Settles when the index holds every record (at once when no catch-up was needed). */
  private indexed: Promise<void> = Promise.resolve();
  /** Operations the records read at start leave unfinished, while the index catches up. */
  private tail: TailOperations | null = null;
  /** False from the start of a catch-up until the index holds every record. */
  private caughtUp = true;
  /** The last seq when the ledger was opened: later operations were made by this run. */
  private openedAtSeq = 0;
  private readonly indexingListeners = new Set<() => void>();
  /** The gate recovery hands pending approvals to (kept for what the catch-up finds later). */
  private restorer: RestorableGate | undefined;
  /** What start left to settle once the index holds everything (resolves when that is done). */
  private rest: Promise<void> = Promise.resolve();
  /** Operations recovery already settled or handed on at start (never settled twice). */
  private readonly settled = new Set<string>();

  private constructor(
    readonly ledger: Ledger,
    readonly index: LedgerIndex,
    private readonly clock: Clock,
    private readonly cancelPendingOnRestart: boolean,
    private readonly ledgerFs: LedgerFs,
  ) {
    ledger.subscribe((records, locations) => {
      for (let i = 0; i < records.length; i++) {
        // While the index catches up, a new record waits for it (its place is remembered).
        if (this.catchUp) this.catchUp.hold(locations[i]!);
        else index.add(records[i]!, locations[i]!);
        this.tail?.apply(records[i]!, locations[i]!);
        this.pinRecord(records[i]!);
      }
    });
    // While the index catches up, an operation proposed in the records start read or appended
    // since is read from them; anything else waits for the index.
    this.history = new IndexedHistory(index, ledger, () => this.indexed, (id) => (this.caughtUp ? undefined : this.tail?.recent(id)));
  }

  private pinRecord(record: StoredRecord): void {
    if (record.type !== 'tool.contract-changed') return;
    const p = record.payload as { serverId?: unknown; accountId?: unknown; toolName?: unknown; newContractHash?: unknown; instructionsHash?: unknown };
    if (typeof p.serverId === 'string' && typeof p.accountId === 'string' && typeof p.toolName === 'string') {
      this.pin(p.serverId, p.accountId, p.toolName, typeof p.newContractHash === 'string' ? p.newContractHash : null, typeof p.instructionsHash === 'string' ? p.instructionsHash : null, record.seq);
    }
  }

  private pin(server: string, account: string, tool: string, hash: string | null, instructions: string | null, seq: number): void {
    const key = `${server}\u0000${account}`;
    let entry = this.pins.get(key);
    if (!entry) this.pins.set(key, (entry = { tools: new Map(), instructions: { hash: null, seq: 0 } }));
    const known = entry.tools.get(tool);
    if (!known || known.seq <= seq) entry.tools.set(tool, { hash, seq });
    if (instructions !== null && entry.instructions.seq <= seq) entry.instructions = { hash: instructions, seq };
  }

  /**
   * The contract hashes last recorded for one (server, account), or undefined if none ever were
   * (kept in memory: one entry per tool ever listed, not per call).
   */
  pinnedFor(serverId: string, accountId: string): { tools: Record<string, string>; instructionsHash: string | null } | undefined {
    const entry = this.pins.get(`${serverId}\u0000${accountId}`);
    if (!entry) return undefined;
    const tools: Record<string, string> = {};
    for (const [tool, { hash }] of entry.tools) if (hash !== null) tools[tool] = hash;
    return { tools, instructionsHash: entry.instructions.hash };
  }

  /**
   * Opens the index and the ledger (log recovery, reading only what the index does not have yet).
   *
   * Does not touch operations yet: call `recoverOperations` once the gate exists.
   */
  static async open(options: LedgerServiceOptions): Promise<LedgerService> {
    const clock = options.clock ?? { now: () => Date.now() };
    await makePrivateFolder(options.dir);
    // The key first: recovery checks sealed records with it. An unreadable keychain is not fatal
    // here; the ledger then opens unsealed and in safe mode (anchor-check.ts says why).
    const keychain = options.keychain ? await readKeychain(options.keychain) : null;
    // Created 0600 before SQLite opens it: SQLite gives its journal and WAL files the database's mode.
    const indexPath = join(options.dir, 'index.sqlite');
    await ensurePrivateFile(indexPath);
    const index = await LedgerIndex.open(await openSqlite(indexPath), options.indexCommitDelayMs !== undefined ? { commitDelayMs: options.indexCommitDelayMs } : {});
    const fs = options.fs ?? nodeLedgerFs;
    const numbers = segmentNumbers(await fs.readdir(options.dir).catch(() => []));
    const lastSegment = numbers.at(-1);
    // An index that is missing, unusable, or further behind than the end of the log start reads
    // is not brought up to date here (even in a history of one segment, whose parse in one go
    // stalled start for most of a second): start reads only that end, and the index catches up
    // afterwards. A log no longer than that end is read whole, and indexed as it is read.
    const deferrable = lastSegment !== undefined;
    let deferred = false;
    const tail = new TailOperations();
    const tailPins: StoredRecord[] = [];
    let ledger: Ledger;
    try {
      ledger = await Ledger.open({
        ...options,
        clock,
        redactor: options.redactor ?? new Redactor(),
        key: keychain?.key.state === 'found' ? keychain.key.key : null,
        reader: {
          resumeAfter: deferrable && index.position?.segment !== lastSegment ? null : index.position,
          ...(deferrable ? { fromSegment: lastSegment, tailBytes: options.startTailBytes ?? START_TAIL_BYTES } : {}),
          onFullScan: async (partial) => {
            // Only the end is read: the index keeps its position, where the catch-up resumes (it
            // checks the record there first, and starts over when it does not match).
            if (partial) deferred = true;
            // The whole log is read: an index position that was not used is of no use.
            else if (index.position) await index.reset();
          },
          onRecord: (record, location) => {
            if (!deferred) index.add(record, location);
            else {
              tail.apply(record, location);
              if (record.type === 'tool.contract-changed') tailPins.push(record);
            }
          },
          onSegmentRead: () => (deferred ? Promise.resolve() : index.flush()),
        },
      });
      await index.flush();
    } catch (error) {
      await index.close().catch(() => undefined);
      throw error;
    }
    const service = new LedgerService(ledger, index, clock, options.cancelPendingOnRestart === true, fs);
    service.openedAtSeq = ledger.size();
    for (const p of await index.pins()) service.pin(p.server, p.account, p.tool, p.hash, p.instructions, p.seq);
    const catchUpTo = deferred ? ledger.position : null;
    if (catchUpTo) {
      service.tail = tail;
      for (const r of tailPins) service.pinRecord(r);
    }
    // Breaks an earlier start or verification found in records this start did not read again.
    const acknowledged = await service.acknowledgedBreaks();
    // (Problems with the keychain itself are not carried over: each start looks at it again.)
    const carried = (await index.breaks()).filter((b) => !PER_START.test(b.id));
    ledger.reportBreaks(carried.map((b) => ({ ...b, acknowledged: b.acknowledged || acknowledged.has(b.id) })));
    if (options.keychain) {
      service.keychain = options.keychain;
      try {
        ledger.reportBreaks((await service.checkAnchor(options.keychain, keychain!)).map((b) => ({ ...b, acknowledged: acknowledged.has(b.id) })));
      } catch (error) {
        await service.close().catch(() => undefined);
        throw error;
      }
    }
    await index.saveBreaks(ledger.recovery.breaks);
    // Only now: open reads the index's breaks and pins above, and a catch-up may start the index over.
    if (catchUpTo) service.startCatchUp(catchUpTo);
    if (options.verifyInBackground !== false) {
      service.verification = service.verify();
      service.verification.catch(() => undefined);
    }
    return service;
  }

  /** Starts bringing the index up to `until` in the background (catch-up.ts). */
  private startCatchUp(until: LogPosition): void {
    const catchUp = IndexCatchUp.start({
      dir: this.ledger.dir,
      fs: this.ledgerFs,
      key: this.ledger.chainKey,
      index: this.index,
      until,
      readAt: (locations) => this.ledger.readAt(locations),
      pause: async () => {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.closing) throw catchUpStopped();
      },
      onLive: () => {
        this.catchUp = null;
      },
      onProgress: () => {
        for (const l of this.indexingListeners) l();
      },
    });
    this.catchUp = catchUp;
    this.caughtUp = false;
    this.indexed = catchUp.done.then(async () => {
      // Pins the index learned from segments start did not read (older records never replace newer ones).
      for (const p of await this.index.pins()) this.pin(p.server, p.account, p.tool, p.hash, p.instructions, p.seq);
      this.caughtUp = true;
      this.tail?.forgetRecent();
      for (const l of this.indexingListeners) l();
    });
    this.indexed.catch(() => undefined);
  }

  /** How far the index's background catch-up is (0–99), or null when the index is current. */
  get indexing(): number | null {
    return this.catchUp ? this.catchUp.percent : null;
  }

  /** Settles when the index holds every record (rejects if the catch-up failed or was stopped). */
  whenIndexed(): Promise<void> {
    return this.indexed;
  }

  /** Tells `listener` whenever the catch-up's progress changes, and when it is done. */
  onIndexing(listener: () => void): () => void {
    this.indexingListeners.add(listener);
    return () => this.indexingListeners.delete(listener);
  }

  /**
   * Checks the ledger against its anchor (anchor-check.ts) and, when nothing stops it, starts
   * keeping the anchor. Returns the problems found.
   */
  private async checkAnchor(k: LedgerKeychain, found: KeychainFindings): Promise<LedgerChainBreak[]> {
    const check = await checkAgainstAnchor(this.ledger, k, found, this.clock.now());
    this.anchor = check.anchor;
    // The anchored first record was just found in place (checkAgainstAnchor): it stays the first.
    if (check.keep) await this.startKeeping(k, check.keep, check.anchor?.first ?? null);
    return check.breaks;
  }

  /**
   * Anchors the ledger as it is now and keeps the anchor following synced records. `first` is
   * the ledger's first record when known; an empty ledger's is its first record appended, and
   * any other ledger's is taken from the next full verification that finds the chain whole.
   */
  private async startKeeping(k: LedgerKeychain, key: ChainKey, first: AnchoredRecord | null): Promise<void> {
    const keeper = new AnchorKeeper(k, key, () => this.ledger.synced, () => this.clock.now());
    this.keeper = keeper;
    keeper.first = first;
    if (!first && this.ledger.position === null) {
      const stop = this.ledger.subscribe((records, locations) => {
        stop();
        const r = records[0]!;
        const at = locations[0]!;
        // Seq 1 starts the chain from genesis; a ledger emptied behind Warden's back does not.
        if (r.seq === 1 && keeper.first === null) keeper.first = { seq: 1, segment: at.segment, offset: at.offset, length: at.length, hash: r.checksum };
      });
    }
    this.ledger.onSynced(() => keeper.advanced());
    await keeper.writeNow();
  }

  /**
   * After a full verification found no break standing: anchors the chain's first record if the
   * anchor does not hold one yet (a ledger anchored before first records were), in one keychain
   * write; from then on deleting the oldest segments is found at every start.
   */
  private async anchorFirst(first: AnchoredRecord | null): Promise<void> {
    const keeper = this.keeper;
    if (!keeper || keeper.first || !first || this.ledger.safeMode) return;
    keeper.first = { seq: first.seq, segment: first.segment, offset: first.offset, length: first.length, hash: first.hash };
    await keeper.writeNow();
  }

  /**
   * A ledger whose anchor predates first records (format 1) is anchored at the start it has now,
   * unless that start cannot be one (`unanchoredStartProblem`): then it is a break.
   */
  private lostStart(first: (AnchoredRecord & { sealed: boolean }) | null, acknowledged: Set<string>): LedgerChainBreak | null {
    if (!this.keeper || this.keeper.first || !this.anchor || !first) return null;
    const problem = unanchoredStartProblem(this.anchor, first);
    if (!problem) return null;
    const id = `anchor-start@${first.seq}`;
    const detail = `${problem} Every tool asks first until you acknowledge it.`;
    return { id, segment: segmentName(first.segment), offset: 0, length: first.length, problem: 'anchor', seq: first.seq, acknowledged: acknowledged.has(id), preservedCopy: null, detail };
  }

  /** What `ledger:verify` checks the folder with: the key and the anchor (both its ends). */
  verifyOptions(): VerifyOptions {
    const ends = this.keeper?.written ?? this.anchor;
    return { key: this.ledger.chainKey, anchor: ends ? { seq: ends.seq, segment: ends.segment, offset: ends.offset, length: ends.length, hash: ends.hash, first: ends.first } : null };
  }

  /** Anchor writes so far and the last failure to write one (tests, status). */
  get anchorState(): { keeping: boolean; writes: number; lastError: string | null } {
    return { keeping: this.keeper !== null, writes: this.keeper?.writes ?? 0, lastError: this.keeper?.lastError ?? null };
  }

  /** Settles once recovery settled everything, including what waited for the index's catch-up. */
  whenRecovered(): Promise<void> {
    return this.rest;
  }

  /** What the last `recoverOperations` did, if it ran. */
  get lastRecoveryReport(): OperationRecoveryReport | null {
    return this.lastRecovery;
  }

  /**
   * Settles every operation a crash interrupted; nothing is ever re-sent. This is the only place
   * that does.
   *
   * `executing` → `outcome_unknown`; `approved` (not sent) → `cancelled`; `proposed` (no decision)
   * → `denied`; `awaiting_approval` → `cancelled` when the setting says so, otherwise handed to
   * `gate.restore()`, which re-validates it against current policy and queues it again. All
   * transitions are appended durably before this resolves.
   */
  async recoverOperations(gate?: RestorableGate): Promise<OperationRecoveryReport> {
    this.restorer = gate;
    const tail = this.caughtUp ? null : this.tail;
    // With the index current (always, unless a catch-up is still running), everything is settled now.
    if (this.caughtUp) this.tail = null;
    if (!tail) return (this.lastRecovery = await this.settle(await this.history.unfinished(), gate, (id) => this.history.operation(id).then((o) => o?.state)));
    // The index is catching up: what the end of the log shows is settled now; an operation it
    // leaves unfinished is unfinished (every later record of it is there too). One whose state
    // is known but whose proposal is older (an approval that needs it to be re-queued) and any
    // without a record there are settled once the index holds everything.
    const now: RecordedOperation[] = [];
    const settleNow: Array<{ id: string; state: 'executing' | 'approved' | 'proposed' | 'awaiting_approval' }> = [];
    for (const op of tail.unfinished()) {
      if (op.state === 'awaiting_approval' && op.recorded) now.push(op.recorded);
      else if (op.state === 'executing' || op.state === 'approved' || op.state === 'proposed' || (op.state === 'awaiting_approval' && this.cancelPendingOnRestart)) settleNow.push({ id: op.id, state: op.state });
    }
    const report = await this.settle(now, gate, async (id) => tail.stateOf(id), settleNow);
    this.lastRecovery = report;
    this.rest = this.indexed.then(() => this.recoverRest());
    this.rest.catch(() => undefined);
    return report;
  }

  /** What start could not settle without the index: run once it holds everything. */
  private async recoverRest(): Promise<void> {
    const rest: RecordedOperation[] = [];
    for (const op of await this.history.unfinished()) {
      const id = op.proposed.operationId;
      // Settled at start, or made by this run (the gate holds those): never touched here.
      if (this.settled.has(id) || ((await this.index.operationNumber(id)) ?? 0) > this.openedAtSeq) continue;
      rest.push(op);
    }
    this.tail = null;
    if (rest.length === 0) return;
    const late = await this.settle(rest, this.restorer, (id) => this.history.operation(id).then((o) => o?.state));
    const before = this.lastRecovery ?? { outcomeUnknown: [], cancelled: [], denied: [], requeued: [] };
    this.lastRecovery = {
      outcomeUnknown: [...before.outcomeUnknown, ...late.outcomeUnknown],
      cancelled: [...before.cancelled, ...late.cancelled],
      denied: [...before.denied, ...late.denied],
      requeued: [...before.requeued, ...late.requeued],
    };
  }

  /**
   * Settles `ops` (and `known`: operations whose id and state are all that is known), hands
   * pending approvals to the gate, and reports what each became (`stateOf` reads it back).
   */
  private async settle(
    ops: readonly RecordedOperation[],
    gate: RestorableGate | undefined,
    stateOf: (id: string) => Promise<string | undefined>,
    known: ReadonlyArray<{ id: string; state: 'executing' | 'approved' | 'proposed' | 'awaiting_approval' }> = [],
  ): Promise<OperationRecoveryReport> {
    const report: OperationRecoveryReport = { outcomeUnknown: [], cancelled: [], denied: [], requeued: [] };
    const entries: JournalEntry[] = [];
    const pending: RecordedOperation[] = [];
    const all = [...ops.map((op) => ({ id: op.proposed.operationId, state: op.state, op })), ...known.map((k) => ({ ...k, op: null }))];
    for (const { id, state, op } of all) {
      this.settled.add(id);
      if (state === 'awaiting_approval') {
        if (!this.cancelPendingOnRestart && op) {
          pending.push(op);
          continue;
        }
        entries.push(journalEntry('op.transition', { operationId: id, from: 'awaiting_approval', to: 'cancelled', reason: 'Cancelled at restart (setting: cancel pending approvals on restart)', actor: 'recovery' }));
        report.cancelled.push(id);
        continue;
      }
      if (state !== 'executing' && state !== 'approved' && state !== 'proposed') continue;
      const { to, reason } = SETTLE[state];
      entries.push(
        journalEntry('op.transition', {
          operationId: id,
          from: state,
          to,
          reason,
          actor: 'recovery',
          ...(to === 'outcome_unknown' ? { error: { code: 'OUTCOME_UNKNOWN', message: reason } } : {}),
        }),
      );
      (to === 'outcome_unknown' ? report.outcomeUnknown : to === 'cancelled' ? report.cancelled : report.denied).push(id);
    }
    if (entries.length) await this.ledger.append(entries, { durable: true });
    if (gate) await gate.restore(pending);
    await this.ledger.flush();
    for (const op of pending) {
      const id = op.proposed.operationId;
      const state = await stateOf(id);
      if (state === 'awaiting_approval') report.requeued.push(id);
      else if (state === 'denied') report.denied.push(id);
      else report.cancelled.push(id);
    }
    return report;
  }

  /**
   * Settles an `outcome_unknown` operation: the person says it succeeded or failed (recorded with
   * who and why), or retries it — a NEW operation through the gate, with a fresh decision and,
   * where the policy asks, a fresh approval. The old operation is never re-sent.
   */
  async reconcile(
    input: { operationId: string; outcome: 'succeeded' | 'failed' | 'retry'; reason: string; by: string },
    gate?: SubmittingGate,
  ): Promise<{ operation: OperationView; retryOperationId: string | null }> {
    const op = await this.history.operation(input.operationId);
    if (!op) throw new WardenError('NOT_FOUND', `recovery:reconcile: no operation with id ${JSON.stringify(input.operationId)}`);
    if (op.state !== 'outcome_unknown' || op.reconciled) {
      throw new WardenError('CONFLICT', `recovery:reconcile: operation ${input.operationId} is ${op.reconciled ? `already reconciled (${op.reconciled.outcome})` : op.state}, not an unreconciled outcome_unknown`);
    }
    if (input.reason.trim().length === 0) throw new WardenError('INVALID_REQUEST', 'recovery:reconcile: reason must say why');
    let retryOperationId: string | null = null;
    if (input.outcome === 'retry') {
      if (!gate) throw new WardenError('UNSUPPORTED', 'recovery:reconcile: retry needs the gate, which is not running');
      const restored = (await this.history.find(input.operationId))!;
      if (JSON.stringify(restored.proposed.arguments).includes(REDACTED)) {
        throw new WardenError('CONFLICT', 'recovery:reconcile: the arguments held a secret that was never stored; start the call again instead of retrying it');
      }
      const p = restored.proposed;
      const created = await gate.submit({
        source: 'user',
        conversationId: p.origin.conversationId,
        serverId: p.identity.serverId,
        accountId: p.identity.accountId,
        toolName: p.identity.toolName,
        arguments: structuredClone(p.arguments),
      });
      retryOperationId = created.operationId;
    }
    await this.ledger.append(
      [
        {
          type: RECONCILED_TYPE,
          payload: {
            operationId: input.operationId,
            outcome: input.outcome === 'retry' ? 'retried' : input.outcome,
            by: input.by,
            reason: input.reason.trim(),
            retryOperationId,
            at: this.clock.now(),
          },
        },
      ],
      { durable: true },
    );
    return { operation: (await this.history.operation(input.operationId))!, retryOperationId };
  }

  /** Streams the filtered audit view to `path` (see `writeAuditFile`). */
  exportAudit(format: 'jsonl' | 'csv', filter: AuditFilter, path: string): Promise<{ format: 'jsonl' | 'csv'; path: string; rows: number }> {
    return writeAuditFile(this.history, format, filter, path);
  }

  /** Status for the Activity view and the app frame. */
  status(): LedgerStatus {
    const indexing = this.indexing;
    return { dir: this.ledger.dir, records: this.ledger.size(), segments: this.ledger.segments(), safeMode: this.ledger.safeMode, recovery: this.ledger.recovery, ...(indexing !== null ? { indexing } : {}) };
  }

  /**
   * Verifies every record and the whole chain, in slices beside the app (it never stalls the
   * event loop), up to where the log stood when it began. Start-up checks only what the index did
   * not have; this checks the rest. A break found here puts the ledger in safe mode exactly as one
   * found at start (listeners of `onSafeModeChange` are told). One runs at a time; asking again
   * while one runs returns it.
   */
  verify(): Promise<VerificationResult> {
    this.running ??= this.runVerification().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Tells `listener` whenever safe mode changes after start (a break found later, an acknowledgement). */
  onSafeModeChange(listener: (safeMode: boolean) => void): () => void {
    this.safeModeListeners.add(listener);
    return () => this.safeModeListeners.delete(listener);
  }

  private async runVerification(): Promise<VerificationResult> {
    const started = performance.now();
    await this.ledger.flush();
    const found = await verifyInSlices(this.ledger.dir, this.ledger.position, {
      fs: this.fs,
      key: this.ledger.chainKey,
      pause: async () => {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (this.closing) throw new WardenError('CONFLICT', 'ledger: closed during verification');
      },
    });
    // Acknowledgements are read through the index: after its catch-up, if one runs.
    await this.indexed;
    const acknowledged = await this.acknowledgedBreaks();
    const breaks = [];
    for (const b of found.breaks) {
      const path = inDir(this.ledger.dir, b.segment);
      const preservedCopy = acknowledged.has(b.id) ? null : await preserve(this.fs, this.ledger.dir, path, await this.fs.readFile(path));
      breaks.push({ ...b, acknowledged: acknowledged.has(b.id), preservedCopy });
    }
    const lost = this.lostStart(found.first, acknowledged);
    if (lost) breaks.push(lost);
    const before = this.ledger.safeMode;
    this.ledger.reportBreaks(breaks);
    await this.index.saveBreaks(this.ledger.recovery.breaks);
    if (this.ledger.safeMode !== before) for (const l of this.safeModeListeners) l(this.ledger.safeMode);
    await this.anchorFirst(found.first);
    return { records: found.records, breaks: breaks.length, safeMode: this.ledger.safeMode, durationMs: performance.now() - started };
  }

  private get fs() {
    return this.ledgerFs;
  }

  /** Ids of the chain breaks a person has acknowledged (read from the acknowledgement records). */
  async acknowledgedBreaks(): Promise<Set<string>> {
    const ids = new Set<string>();
    const rows = await this.index.rowsOfType(SAFE_MODE_ACK_TYPE);
    for (const r of await this.ledger.readAt(rows)) if (Array.isArray(r.payload.breaks)) for (const id of r.payload.breaks) if (typeof id === 'string') ids.add(id);
    return ids;
  }

  /** Leaves safe mode, journaling who and why. */
  async acknowledgeSafeMode(by: string, reason: string): Promise<LedgerStatus> {
    const before = this.ledger.safeMode;
    const heldAnchor = this.ledger.recovery.breaks.some((b) => !b.acknowledged && b.problem === 'anchor');
    await this.ledger.acknowledgeSafeMode(by, reason);
    // A person saw that the ledger no longer matched its anchor: from now on it vouches for what is there.
    const key = this.ledger.chainKey;
    if (heldAnchor && key && this.keychain && !this.keeper) await this.startKeeping(this.keychain, key, null);
    // The first record the anchor vouches for comes from a verification of the chain as it is now.
    if (this.keeper && !this.keeper.first && this.ledger.position) void this.verify().catch(() => undefined);
    await this.index.saveBreaks(this.ledger.recovery.breaks);
    if (this.ledger.safeMode !== before) for (const l of this.safeModeListeners) l(this.ledger.safeMode);
    return this.status();
  }

  /** Flushes and closes the ledger and its index. */
  close(): Promise<void> {
    this.closed ??= this.closeOnce();
    return this.closed;
  }

  private async closeOnce(): Promise<void> {
    this.closing = true;
    await this.running?.catch(() => undefined);
    await this.indexed.catch(() => undefined);
    await this.rest.catch(() => undefined);
    // A clean shutdown anchors the very last record (everything appended is synced first).
    if (this.keeper) {
      await this.ledger.flush().catch(() => undefined);
      await this.keeper.finish();
    }
    await this.ledger.close();
    await this.index.close();
  }
}
