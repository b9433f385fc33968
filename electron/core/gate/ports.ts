/**
 * The gate's ports to the MCP connection layer (mcp/connection-manager.ts implements them over real SDK clients).
 *
 * The gate is the only code allowed to make a server's `tools/call` happen, and it does so only
 * through `ToolExecutor.call`. What a tool is (its schema, its contract hash, the endpoint hash of
 * its server) comes from `ToolRegistry`: the policy pins Always Allow to those hashes, so the
 * registry must report what is actually connected *now*, not what was configured.
 */
import type { OpObservation } from '../../../shared/domain/observation';
import type { ServerKind } from '../preview/trusted-preview';

/** A tool as the connection layer currently sees it, for one (server, account). */
export interface ToolDescriptor {
  serverId: string;
  accountId: string;
  /** The tool's name as the server lists it (not namespaced; identity is the triple). */
  name: string;
  /** Untrusted, sanitized for display (see text/sanitize.ts). */
  title?: string;
  /**
   * Untrusted: written by the server, sanitized for display and forwarding (the raw text only feeds
   * the contract hash). Shown labelled as the server's claim; never loosens policy.
   */
  description?: string;
  /** Why the server's raw description reads like instructions to a model, in plain words (absent: it does not). */
  descriptionFlags?: readonly string[];
  /** JSON Schema the arguments are validated against (ajv) before the policy sees them. */
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  /**
   * Set when the tool cannot be used, in plain words without its name (its schema is over the size
   * limit or cannot be compiled, or a name in it holds hidden characters): it is never offered to a
   * model and every call of it is refused with this reason.
   */
  unusable?: string;
  /** Untrusted hints (readOnlyHint, destructiveHint, …). Never make anything more permissive. */
  annotations?: Record<string, unknown>;
  /**
   * Set when Warden itself wrote the annotations (its built-in server's tools), from the server's
   * definition, never from what the server says. Only then does `readOnlyHint` spare a stopped
   * call the outcome-unknown check (reads-only.ts); it never loosens a permission.
   */
  annotationsTrusted?: true;
  /**
   * The hash Always Allow is pinned to: `contractHash(...)` of {name, title, description,
   * inputSchema, outputSchema, annotations}; the connection layer also folds in the server's
   * instructions hash, so new instructions count as a changed contract.
   */
  contractHash: string;
  /** `endpointHash(...)` from electron/core/canonical of what the server runs/contacts. */
  endpointHash: string;
  /** Display labels for trusted previews and explanations ("GitHub", "Work"). */
  serverLabel?: string;
  /**
   * Which known server this is, from the definition the person configured (never from what the
   * server says about itself): selects the trusted preview's templates. Absent = 'other'.
   */
  serverKind?: ServerKind;
  /**
   * The absolute folder the server process opens relative paths from (a stdio server's working
   * folder); absent when Warden cannot know it (remote and built-in servers). Path rules resolve
   * relative arguments against it; without it a relative path gets the strictest matching rule.
   */
  workingFolder?: string;
  accountLabel?: string;
  /** Where the server runs, in words from its definition ("a program on this computer", "remote, at mcp.example.com"). */
  serverLocation?: string;
  /**
   * Set while the server's listing cannot be relied on (it said its tools changed and the re-list
   * is under way, or a re-list failed or timed out): why, in words. Always Allow is held at Ask.
   */
  unverifiedListing?: string;
}

/** A change the registry reports, so the gate can invalidate pending approvals and abort calls. */
export type RegistryChange =
  | { kind: 'tools-changed'; serverId: string; accountId: string | null }
  | { kind: 'endpoint-changed'; serverId: string }
  | { kind: 'disconnected'; serverId: string; accountId: string | null };

/**
 * What servers and tools exist right now.
 *
 * `getTool` returns undefined when the server does not currently list the tool (or is not
 * connected): the policy then denies the call. Implementations must be synchronous reads of the
 * connection layer's current state (the gate calls it at request, approval and pre-execute time).
 */
export interface ToolRegistry {
  getTool(serverId: string, accountId: string, toolName: string): ToolDescriptor | undefined;
  /** Every tool currently listed, optionally for one server and/or account. */
  listTools(filter?: { serverId?: string; accountId?: string }): ToolDescriptor[];
  /**
   * Undefined when the (server, account)'s listing can be used as it is; otherwise a promise that
   * settles (never rejects) once the re-list under way has, so the gate decides against the new
   * listing. Registries without re-lists leave it out.
   */
  whenListed?(serverId: string, accountId: string): Promise<void> | undefined;
  /** Optional change feed; the gate subscribes and re-validates everything not yet executing. */
  subscribe?(listener: (change: RegistryChange) => void): () => void;
}

/** What a tool call returned: the MCP CallToolResult, as plain JSON. */
export interface ToolCallResult {
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * Performs `tools/call` on a connected server. How each way of ending becomes an operation state
 * (and the errors that mark them) is `call-outcome.ts` beside this file. Only the gate calls this.
 *
 * `args` is the gate's stored, frozen copy: send it as is. `signal` aborts when a permission is
 * revoked mid-call; the executor should send `notifications/cancelled` (the SDK does this when the
 * request's `signal` aborts) and reject. The gate passes a `CallAbort` (electron/core/gate/call-abort):
 * it behaves as an AbortSignal for `aborted`, `reason`, `throwIfAborted` and abort listeners, but
 * is not a Node AbortSignal instance — never hand it to `fetch` or `AbortSignal.any`.
 */
export interface ToolExecutor {
  call(
    target: { serverId: string; accountId: string; toolName: string },
    args: Readonly<Record<string, unknown>>,
    options: { signal: AbortSignal; operationId: string },
  ): Promise<ToolCallResult>;
}

/** A call about to be sent, as an observer is shown it (the gate's frozen copy of the arguments). */
export interface ObservedCall {
  operationId: string;
  serverId: string;
  accountId: string;
  toolName: string;
  args: Readonly<Record<string, unknown>>;
  /** The tool as listed when the call leaves (schema, working folder, kind of server). */
  tool: ToolDescriptor | undefined;
}

/** How a sent call ended, as the observer is told it (the state the gate records). */
export type ObservedEnding = 'succeeded' | 'failed' | 'outcome_unknown';

/**
 * Looks at what a call really did, with Warden's own authority and never through the server
 * being checked (electron/core/observe reads local files, the demo reads its notes store).
 *
 * `watch` runs synchronously as the call leaves and answers null when nothing of this call can be
 * observed, so such a call pays nothing. A watch reads what is there before the call is sent
 * (`before`) and again once it ended (`after`), and its answer is journaled after the outcome
 * record as evidence: it never changes the request, the approval or the recorded outcome.
 */
export interface CallObserver {
  watch(call: ObservedCall): CallWatch | null;
}

/** One call's observation under way. Neither method rejects: what could not be read is said in the answer. */
export interface CallWatch {
  before(): Promise<void>;
  after(ending: ObservedEnding): Promise<OpObservation>;
}
