/**
 * What the gate takes: its dependencies (everything injected, so tests use real MCP servers and
 * a fake clock), the shape of a tool call as it enters, and the defaults it falls back to.
 */
import type { CallSource } from '../../../shared/domain/operations';
import type { PathFs, PathSemantics } from '../paths/resolve';
import type { Clock, Journal, OperationHistory } from '../ports';
import type { PolicySource } from './decisions';
import type { OperationNames } from './operation';
import type { CallObserver, ToolExecutor, ToolRegistry } from './ports';

/** Default time a pending approval waits before it expires. */
export const DEFAULT_APPROVAL_TTL_MS = 10 * 60 * 1000;
/** Longest a call (or an approval) waits for a re-list the server announced before it is decided. */
export const DEFAULT_LISTING_WAIT_MS = 5_000;

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
  /** Looks at what each sent call really did (absent: nothing is observed, as before). */
  observer?: CallObserver;
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
