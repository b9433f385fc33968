/**
 * Ports: the small interfaces through which the core reaches anything it does not own (disk,
 * keychain, clock, native dialogs, MCP servers). Electron adapters live in electron/main; tests
 * pass real or in-memory implementations. Keep each one small.
 */

import type { DecisionRecord, ErrorRecord, OpProposed, ToolResultRecord } from '../../shared/domain/journal-events';
import type { OpObservation } from '../../shared/domain/observation';
import type { OperationState } from '../../shared/domain/operations';
import { WardenError } from '../../shared/result';

/** Time, injected so expiry and the policy are deterministic under test. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** One event as the core hands it to the journal. `type` is dotted: `op.transition`, `policy.changed`. */
export interface JournalEntry {
  type: string;
  payload: Record<string, unknown>;
}

/** One stored event, with its place in the log. */
export interface JournalRecord extends JournalEntry {
  seq: number;
  /** Milliseconds since the epoch, from the journal's clock. */
  time: number;
}

/**
 * The durable event log the gate writes every decision and transition to (the ledger, electron/core/ledger).
 *
 * `append` stores entries in order, atomically as a group. With `durable: true` it resolves only
 * once the entries are on stable storage (fsync); concurrent durable appends may share one fsync.
 * The gate never lets a request leave before the `executing` record's append has resolved.
 */
export interface Journal {
  readonly kind: 'memory' | 'ledger';
  /**
   * True if `append` fixes the order of its records when it is called (before it resolves), so
   * records land in call order without the caller waiting for earlier appends first.
   */
  readonly ordersOnCall?: boolean;
  append(entries: JournalEntry[], options?: { durable?: boolean }): Promise<JournalRecord[]>;
  /** How many records the journal holds. */
  size(): number;
  close(): Promise<void>;
}

/** One operation as the journal recorded it: its proposal and where its transitions left it. */
export interface RecordedOperation {
  proposed: OpProposed;
  state: OperationState;
  reason: string;
  decision: DecisionRecord | null;
  approvedByUser: boolean;
  result: ToolResultRecord | null;
  error: ErrorRecord | null;
  history: Array<{ from: OperationState; to: OperationState; reason: string; at: number }>;
  /** What Warden itself saw the call do (`op.observation`), when it observed it. */
  observation?: OpObservation | null;
}

/**
 * Operations read back from the journal's history. The gate holds live operations only; an id it
 * does not hold is looked up here, so a finished operation's id is never executed again, however
 * long ago it ran.
 */
export interface OperationHistory {
  /**
   * The recorded operation with this id, or undefined if none was ever recorded. Sees every
   * record appended before it was called.
   */
  find(operationId: string): Promise<RecordedOperation | undefined>;
  /** Recorded operations, newest first (a page: `limit`, default 200, from `offset`). */
  recordedOperations(query: { state?: OperationState; conversationId?: string; limit?: number; offset?: number }): Promise<RecordedOperation[]>;
}

/**
 * Keychain access. Implementations must never fall back to plaintext: when the OS keychain is
 * unavailable, `set` rejects with a WardenError('KEYCHAIN_UNAVAILABLE', why).
 */
export interface SecretStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<boolean>;
}

/** Shows a trusted approval preview in a native dialog (main) or a test double (tests). */
export interface ApprovalPrompter {
  /** Resolves 'approve' only if a person chose Approve; every other outcome is 'deny'. */
  prompt(preview: ApprovalPreview): Promise<'approve' | 'deny'>;
  /**
   * Shows every call of one model reply that needs approval in ONE dialog: Deny all (the default
   * and the cancel answer), Review one by one, Approve all. Each preview keeps its own operation
   * id. A prompter without it is asked one call at a time.
   */
  promptBatch?(previews: readonly ApprovalPreview[]): Promise<BatchChoice>;
}

/** The answer to a batch approval dialog; anything but an explicit choice is 'deny-all'. */
export type BatchChoice = 'deny-all' | 'one-by-one' | 'approve-all';

/**
 * Text of an approval dialog, written by trusted code from the tool identity and validated
 * arguments. `title` is the trusted one-line summary of the call; `detail` is Warden's reason.
 */
export interface ApprovalPreview {
  operationId: string;
  title: string;
  detail: string;
  /** Where the server runs, in words: "a program on this computer", "remote, at mcp.example.com". */
  serverLocation?: string;
  /** Who asked for the call, in words ("the model, in the conversation “Trip planning”"). */
  requestedBy?: string;
  /**
   * Untrusted: what the server claims about the tool in its annotations, in words ("destructive",
   * "read-only"). Shown last, one per line, labelled as the server's.
   */
  claims?: string[];
  /**
   * Set when the dialog confirms a permission change rather than a tool call: what will stop (or
   * start) asking, in words with names; the facts a person needs (what the tool says it does,
   * labelled); and how to undo it. Cancel is the default button.
   */
  change?: PermissionChangeText;
  /** Canonical JSON of the exact arguments that will be sent. */
  argumentsJson: string;
  /**
   * The same arguments as labelled lines ("to: alice@example.com"), nothing cut, in the order the
   * tool's schema gives (shared/argument-words.ts): what a person reads first; '' when there are none to show.
   */
  argumentsText: string;
  serverLabel: string;
  accountLabel: string;
  toolName: string;
  /**
   * Untrusted: the server's own description of the tool. Never part of the trusted text above; a
   * dialog shows it last, on one line, labelled as the server's claim.
   */
  toolDescription?: string | null;
}

/** The words of a permission-change confirmation (see ApprovalPreview.change). */
export interface PermissionChangeText {
  /** What changes, in one sentence: "Warden will stop asking before every call of write_file on Files (Work)." */
  effect: string;
  /** Trusted facts, one per line (scope, which tools, what a rule covers). */
  facts: string[];
  /** Untrusted lines from the server, each already labelled ("What the tool says it does (the server’s claim): …"). */
  claims: string[];
  /** How to undo it, in one sentence. */
  undo: string;
  /** The confirming button's label ("Always Allow", "Allow the new version"). */
  confirmLabel: string;
}

/** Opens a URL in the system browser (main: shell.openExternal through one audited function). */
export interface BrowserOpener {
  open(url: string): Promise<void>;
}

/** One kind of file a chooser offers, e.g. `{ name: 'MCP config', extensions: ['json'] }`. */
export interface FileTypeFilter {
  name: string;
  /** Extensions without the dot; `*` for any file. */
  extensions: string[];
}

/** What an open-file chooser shows. */
export interface OpenFileRequest {
  /** The chooser's title, saying what the file is for. */
  title: string;
  /** Where it starts: a known location of such a file, or a folder. */
  defaultPath?: string;
  filters: FileTypeFilter[];
}

/** What a save-file chooser shows. */
export interface SaveFileRequest {
  /** The chooser's title, saying what will be written. */
  title: string;
  /** The file name offered (the person may change it and the folder). */
  defaultName: string;
  filters: FileTypeFilter[];
}

/**
 * Native file choosers owned by main (Electron's `dialog`). Whatever Warden reads from or writes
 * to a person's files is chosen here by the person, never named by the renderer, so a compromised
 * page cannot make Warden read an arbitrary file or a network share.
 */
export interface FileDialogs {
  /** Lets the person choose one existing file to read; resolves its absolute path, or null if they cancelled. */
  openFile(request: OpenFileRequest): Promise<string | null>;
  /** Lets the person choose where to write a new file; resolves its absolute path, or null if they cancelled. */
  saveFile(request: SaveFileRequest): Promise<string | null>;
  /**
   * Lets the person choose one existing folder (for a path rule: "under this folder"); resolves its
   * absolute path, or null if they cancelled. Absent: the host has no folder chooser.
   */
  chooseFolder?(request: { title: string; defaultPath?: string }): Promise<string | null>;
}

/** File choosers for hosts that have none: refuse with a clear error, so no file is ever read or written. */
export const refusingFileDialogs: FileDialogs = {
  openFile: async () => {
    throw new WardenError('UNSUPPORTED', 'This host cannot show a file chooser; import from the Warden app');
  },
  saveFile: async () => {
    throw new WardenError('UNSUPPORTED', 'This host cannot show a save dialog; export from the Warden app');
  },
};
