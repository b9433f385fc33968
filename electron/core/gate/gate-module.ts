/**
 * The gate and permission management assembled for the core: the Gate, the PolicyStore, the
 * contract handlers (approvals, operations, tools offered), the rule changes the permissions
 * module's channels call, and the events they push.
 *
 * Approving happens only here, in `review`: the core shows the trusted preview through the
 * `ApprovalPrompter` (a native dialog in main) and approves internally when the person chose
 * Approve. Loosening a permission is confirmed the same way. The renderer can reject, cancel and
 * tighten on its own; it can never grant.
 *
 * Longer than most core files because it still assembles the rule changes (loosening, pins, the
 * matrix) beside approvals and operations; they share the one PolicyStore and the one prompter, and
 * the permissions module is where they belong once that store has a single owner.
 */
import type { ChannelName, RequestOf, ResponseOf } from '../../../shared/ipc';
import type { MatrixRow, OfferedTool, PermissionChange } from '../../../shared/contract/permissions';
import type { ReviewOutcome } from '../../../shared/contract/approvals';
import type { Decision } from '../../../shared/domain/operations';
import type { GrantPin, PolicyState } from '../../../shared/domain/policy';
import { WardenError } from '../../../shared/result';
import type { CoreEvents } from '../events';
import { changeConfirmation, removalConfirmation, rootsWallOffConfirmation, type NameLookup } from '../preview/permission-confirmations';
import { sanitizeJsonText } from '../text/sanitize';
import { decide } from '../policy/engine';
import { changeMayLoosen, removalMayLoosen, type DecisionsLoosen } from '../policy/loosening';
import { PolicyStore } from '../policy/store';
import { hostPaths, type PathFs, type PathSemantics } from '../paths/resolve';
import type { ApprovalPreview, ApprovalPrompter, BatchChoice, Clock, Journal, OperationHistory } from '../ports';
import { Gate, type OperationNames, type OperationSnapshot } from './gate';
import { createOperationPresenter } from './result-display';
import { CallNotSentError } from './call-outcome';
import type { CallObserver, ToolDescriptor, ToolExecutor, ToolRegistry } from './ports';

type GateChannel = 'approvals:list' | 'approvals:review' | 'approvals:reject' | 'approvals:cancel' | 'operations:list' | 'operations:get' | 'tools:offered';

/** Handlers for the channels this module owns. */
export type GateHandlers = { [C in GateChannel & ChannelName]: (request: RequestOf<C>) => Promise<ResponseOf<C>> | ResponseOf<C> };

/** What the module needs; everything but journal/clock has a safe in-memory default. */
export interface GateModuleOptions {
  journal: Journal;
  /** Where finished operations are read back (idempotency, `operations:get/list`). */
  history: OperationHistory;
  clock: Clock;
  events?: CoreEvents;
  /** The connection layer. Default: no servers, every call denied as not listed. */
  registry?: ToolRegistry;
  executor?: ToolExecutor;
  /** The native approval dialog. Default: denies everything (fail closed). */
  prompter?: ApprovalPrompter;
  initialPolicy?: Partial<PolicyState>;
  persistPolicy?: (state: PolicyState) => void | Promise<void>;
  /** How long a new approval waits (a function: read at each new approval, so a setting applies at once). */
  approvalTtlMs?: number | (() => number);
  /** The person's default for tools no rule covers (Settings); read at every decision. Default: ask. */
  defaultToolMode?: () => 'ask' | 'disabled';
  /** Longest a call waits for a re-list its server announced (default 5 s; see GateDeps). */
  listingWaitMs?: number;
  /** Largest result the gate keeps and journals (default 256 KiB; see GateDeps). */
  maxResultBytes?: number;
  paths?: { semantics: PathSemantics; fs: PathFs | null };
  /** Safe mode (ledger tamper detected): every tool held at ask while this returns true. */
  isSafeMode?: () => boolean;
  /** Configured server and account names, for operations whose tool is not listed now. */
  names?: OperationNames;
  /** Looks at what each sent call really did, with Warden's own authority (app-core: local files and the demo's notes). */
  observer?: CallObserver;
}

/** The assembled module. */
export interface GateModule {
  gate: Gate;
  policy: PolicyStore;
  /** Everything the gate decides with: the stored rules, active accounts, the Settings default and safe mode. */
  effectivePolicy(): PolicyState;
  /**
   * Makes `accountId` the active account of its server (in one conversation, or everywhere else
   * when `conversationId` is null), journals the switch and decides what is pending again: calls
   * waiting for approval on another account are invalidated, a grant never carries over.
   */
  switchAccount(input: { serverId: string; accountId: string; conversationId: string | null; accountLabel: string; source?: 'user' | 'system' }): Promise<{ from: string | null }>;
  handlers: GateHandlers;
  /** Shows the native dialog for one operation, approves only if the person chose Approve, and says what actually happened. */
  review(operationId: string): Promise<ReviewAnswer>;
  /**
   * Shows the calls of one batch that still await approval in one native dialog (Deny all,
   * Review one by one, Approve all); each approval is re-checked by the gate on its own.
   */
  reviewBatch(operationIds: readonly string[]): Promise<{ choice: BatchChoice; operations: OperationSnapshot[] }>;
  matrix(conversationId: string | null, search?: string): { rows: MatrixRow[]; configErrors: string[] };
  offeredTools(conversationId: string | null, accounts?: Record<string, string>): OfferedTool[];
  /**
   * Where the confirmations of permission changes read names (servers, accounts, conversations,
   * what a tool says it does), including for servers that are not connected. Until it is given,
   * names come from what is connected now.
   */
  useNames(names: NameLookup): void;
  /**
   * Where the loosening check finds every tool Warden knows (live and last listed, of connected
   * and disconnected accounts). Until it is given, only the tools listed now are compared.
   */
  useKnownTools(tools: () => readonly ToolDescriptor[]): void;
  /**
   * Whether a permission change may make Warden ask less (see `policy/loosening.ts`): every
   * channel that changes rules asks this before the change, and confirms it when true.
   */
  mayLoosen(change: PermissionChange, pin: GrantPin | null): boolean;
  /**
   * Sets one rule (the `permissions:set` channel, declared by the permissions module): confirmed
   * in the native dialog first when it may loosen, journaled, and pending calls decided again.
   */
  setPermission(change: PermissionChange): Promise<ResponseOf<'permissions:set'>>;
  /** Removes one rule (`permissions:revoke`): confirmed first when removing it may loosen. */
  revokePermission(ruleId: string): Promise<ResponseOf<'permissions:revoke'>>;
  /**
   * Turns a server's folder wall on (at once: it only tightens) or off (only after the person
   * confirms it in the native dialog: it loosens), journals it and decides pending calls again.
   */
  setRootsEnforced(serverId: string, enforced: boolean): Promise<{ enforced: boolean }>;
  /** Takes the folders (server, account) now has into the policy and decides pending calls again. */
  rootFoldersChanged(serverId: string, accountId: string, folders: readonly string[]): Promise<void>;
  close(): void;
}

/** The answer of `approvals:review`: what was pressed, and what actually happened to the operation. */
export interface ReviewAnswer {
  pressed: 'approve' | 'deny';
  outcome: ReviewOutcome;
  operation: OperationSnapshot;
}

/** What happened to a reviewed operation, from the state it reached. */
function reviewOutcome(operation: OperationSnapshot): ReviewOutcome {
  switch (operation.state) {
    case 'approved':
    case 'executing':
    case 'succeeded':
    case 'failed':
    case 'outcome_unknown':
      return 'approved';
    case 'rejected':
    case 'expired':
    case 'invalidated':
    case 'cancelled':
    case 'denied':
      return operation.state;
    default:
      throw new WardenError('INTERNAL', `Operation ${operation.operationId} is still ${operation.state} after its review`);
  }
}

const RANK: Record<Decision, number> = { deny: 0, ask: 1, allow: 2 };

/** An empty registry: nothing is listed, so the policy denies every call. */
export const emptyRegistry: ToolRegistry = { getTool: () => undefined, listTools: () => [] };
/** An executor that never sends (used until the connection layer is wired). */
export const notConnectedExecutor: ToolExecutor = {
  call: async (target) => Promise.reject(new CallNotSentError(`${target.serverId} is not connected`)),
};
/** A prompter that always denies: the safe default when no dialog is available. */
export const denyingPrompter: ApprovalPrompter = { prompt: async () => 'deny' };

/**
 * Builds the gate, the permission store and their contract handlers.
 *
 * Why one module: the gate must re-validate on every policy change, and both share the registry
 * and journal; wiring them once here keeps app-core a few lines.
 */
export function createGateModule(options: GateModuleOptions): GateModule {
  const registry = options.registry ?? emptyRegistry;
  const executor = options.executor ?? notConnectedExecutor;
  const prompter = options.prompter ?? denyingPrompter;
  const policy = new PolicyStore({ journal: options.journal, clock: options.clock, initial: options.initialPolicy, persist: options.persistPolicy });
  const isSafeMode = options.isSafeMode ?? (() => false);
  // Spreading keeps the rule arrays (the engine's compile cache is keyed by them).
  const effectivePolicy = {
    current: (): PolicyState => {
      const base = policy.current();
      const withDefault = options.defaultToolMode?.() === 'disabled' ? { ...base, defaultMode: 'disabled' as const } : base;
      return isSafeMode() ? { ...withDefault, safeMode: true } : withDefault;
    },
  };
  const gate = new Gate({
    journal: options.journal,
    history: options.history,
    clock: options.clock,
    registry,
    executor,
    policy: effectivePolicy,
    approvalTtlMs: options.approvalTtlMs,
    listingWaitMs: options.listingWaitMs,
    maxResultBytes: options.maxResultBytes,
    paths: options.paths ?? hostPaths(),
    ...(options.names ? { names: options.names } : {}),
    ...(options.observer ? { observer: options.observer } : {}),
  });
  const unsubscribePolicy = policy.onChange(() => gate.revalidate('permission changed'));
  const reviewing = new Set<string>();
  // Operations leave for the renderer only as summaries: server text sanitized, results capped and flagged.
  const present = createOperationPresenter();

  // The queue as last announced: most transitions (every step of an allowed call) leave it as it
  // was, and each announcement makes the window fetch the approvals and operations lists again.
  let announcedQueue: readonly string[] = [];
  const unsubscribeGate = gate.onChange((op) => {
    if (!options.events) return;
    options.events.emit('operations:updated', present(op));
    const operationIds = gate.pending().map((p) => p.operationId);
    if (operationIds.length === announcedQueue.length && operationIds.every((id, i) => id === announcedQueue[i])) return;
    announcedQueue = operationIds;
    options.events.emit('approvals:changed', { pending: operationIds.length, operationIds });
  });

  const paths = options.paths ?? hostPaths();
  const decideFor = (t: ToolDescriptor, conversationId: string | null, state: PolicyState) =>
    decide({ serverId: t.serverId, accountId: t.accountId, toolName: t.name, conversationId, arguments: {} }, state, {
      tool: { contractHash: t.contractHash, endpointHash: t.endpointHash, annotations: t.annotations, unverifiedListing: t.unverifiedListing },
      paths: paths.semantics,
      labels: { server: t.serverLabel ?? t.serverId, account: t.accountLabel ?? t.accountId },
    });

  async function review(operationId: string): Promise<ReviewAnswer> {
    if (reviewing.has(operationId)) throw new WardenError('CONFLICT', `Operation ${operationId} is already being reviewed`);
    const preview = gate.preview(operationId);
    reviewing.add(operationId);
    try {
      const pressed = await prompter.prompt(preview);
      // The operation may have moved while the dialog was open (expired, invalidated, cancelled):
      // then the answer is that, whatever was pressed. approve() re-checks everything itself.
      const current = await gate.get(operationId);
      if (!current) throw new WardenError('CONFLICT', `Operation ${operationId} finished while its dialog was open; see the activity log`);
      const operation =
        current.state !== 'awaiting_approval' ? current : pressed === 'approve' ? await gate.approve(operationId) : await gate.reject(operationId, 'Denied in the approval dialog');
      return { pressed, outcome: reviewOutcome(operation), operation };
    } finally {
      reviewing.delete(operationId);
    }
  }

  /** The operations as they are now (live ones from the gate, finished ones from the history). */
  const current = async (operationIds: readonly string[]): Promise<OperationSnapshot[]> =>
    (await Promise.all(operationIds.map((id) => gate.get(id)))).filter((op): op is OperationSnapshot => op !== undefined);

  async function reviewBatch(operationIds: readonly string[]): Promise<{ choice: BatchChoice; operations: OperationSnapshot[] }> {
    const waiting = [...new Set(operationIds)].filter((id) => gate.getLive(id)?.state === 'awaiting_approval' && !reviewing.has(id));
    if (waiting.length === 0) return { choice: 'deny-all', operations: await current(operationIds) };
    // One call, or a prompter without a batch dialog: the single-call dialog, one at a time.
    if (waiting.length === 1 || !prompter.promptBatch) {
      for (const id of waiting) await review(id).catch(() => undefined);
      return { choice: 'one-by-one', operations: await current(operationIds) };
    }
    const previews = waiting.map((id) => gate.preview(id));
    for (const id of waiting) reviewing.add(id);
    let choice: BatchChoice;
    try {
      choice = await prompter.promptBatch(previews).catch((): BatchChoice => 'deny-all');
    } finally {
      for (const id of waiting) reviewing.delete(id);
    }
    for (const id of waiting) {
      // Anything that moved while the dialog was open (expired, invalidated) is left as it is.
      if (gate.getLive(id)?.state !== 'awaiting_approval') continue;
      if (choice === 'approve-all') await gate.approve(id).catch(() => undefined);
      else if (choice === 'one-by-one') await review(id).catch(() => undefined);
      else await gate.reject(id, 'Denied in the approval dialog (Deny all)').catch(() => undefined);
    }
    return { choice, operations: await current(operationIds) };
  }

  function matrix(conversationId: string | null, search?: string): { rows: MatrixRow[]; configErrors: string[] } {
    const state = effectivePolicy.current();
    const needle = search?.trim().toLowerCase();
    const errors = new Set<string>();
    const rows: MatrixRow[] = [];
    for (const t of registry.listTools()) {
      const serverLabel = t.serverLabel ?? t.serverId;
      const accountLabel = t.accountLabel ?? t.accountId;
      if (needle && ![t.name, serverLabel, accountLabel, t.serverId, t.accountId].some((s) => s.toLowerCase().includes(needle))) continue;
      const d = decideFor(t, conversationId, state);
      for (const e of d.configErrors) errors.add(e);
      const toolRule =
        state.user.find((r) => r.scope.kind === 'tool' && r.scope.serverId === t.serverId && r.scope.accountId === t.accountId && r.scope.toolName === t.name) ??
        state.user.find((r) => r.scope.kind === 'tool' && r.scope.serverId === t.serverId && r.scope.accountId === null && r.scope.toolName === t.name);
      const mode = toolRule && (toolRule.mode === 'allow' || toolRule.mode === 'ask' || toolRule.mode === 'disabled') ? toolRule.mode : toolRule ? 'disabled' : null;
      rows.push({
        serverId: t.serverId,
        accountId: t.accountId,
        toolName: t.name,
        serverLabel,
        accountLabel,
        serverDescription: t.description ?? null,
        serverAnnotations: t.annotations ? { ...t.annotations } : null,
        mode,
        ruleId: toolRule?.id ?? null,
        effective: d.decision,
        explanation: d.reason,
        layer: d.layer,
        pin: d.pin,
        orgLocked: d.layer === 'organization',
        contractHash: t.contractHash,
      });
    }
    return { rows, configErrors: [...errors].sort() };
  }

  function offeredTools(conversationId: string | null, accounts?: Record<string, string>): OfferedTool[] {
    const state = effectivePolicy.current();
    const out: OfferedTool[] = [];
    for (const t of registry.listTools()) {
      const wanted = accounts?.[t.serverId] ?? gate.activeAccount(t.serverId, conversationId);
      if (wanted !== undefined && wanted !== t.accountId) continue;
      const d = decideFor(t, conversationId, state);
      // A tool whose schema Warden refused is never offered: every call of it would be refused.
      if (d.decision === 'deny' || t.unusable !== undefined) continue;
      out.push({ serverId: t.serverId, accountId: t.accountId, toolName: t.name, description: t.description ?? null, inputSchema: t.inputSchema, effective: d.decision });
    }
    return out;
  }

  function pinFor(change: PermissionChange): GrantPin | null {
    if (change.mode !== 'allow' || change.scope === 'global') return null;
    const tools = registry.listTools({ serverId: change.serverId, ...(change.accountId ? { accountId: change.accountId } : {}) });
    if ('toolName' in change && change.toolName) {
      const tool = tools.find((t) => t.name === change.toolName);
      if (!tool) throw new WardenError('NOT_FOUND', `toolName: ${change.serverId} does not currently list ${change.toolName}; connect the server before allowing it`);
      return { contractHash: tool.contractHash, endpointHash: tool.endpointHash };
    }
    const any = tools[0];
    if (!any) throw new WardenError('NOT_FOUND', `serverId: ${change.serverId} has no listed tools; connect it before allowing it`);
    // Covers exactly the tools listed now (by contract): tools the server adds later still ask.
    return { contractHash: null, endpointHash: any.endpointHash, tools: Object.fromEntries(tools.map((t) => [t.name, t.contractHash])) };
  }

  let knownTools: () => readonly ToolDescriptor[] = () => registry.listTools();
  /**
   * True if some known tool, in any conversation either state names, is decided more permissively
   * under `after`. Safe mode is left out of both: it holds every tool at Ask, which would hide what
   * the rules underneath allow once it ends.
   */
  const decisionsLoosen: DecisionsLoosen = (before, after) => {
    const was = { ...before, safeMode: false };
    const now = { ...after, safeMode: false };
    const convs = new Set<string | null>([null, ...after.conversation.map((c) => c.conversationId), ...before.conversation.map((c) => c.conversationId)]);
    for (const t of knownTools()) {
      for (const c of convs) {
        if (RANK[decideFor(t, c, now).decision] > RANK[decideFor(t, c, was).decision]) return true;
      }
    }
    return false;
  };
  /** See GateModule.mayLoosen; judged on the effective state, where a Disabled default is a restriction too. */
  const mayLoosen = (change: PermissionChange, pin: GrantPin | null): boolean => changeMayLoosen(change, pin, effectivePolicy.current(), decisionsLoosen);

  /** Names of what is connected now: the fallback until the permissions module gives its own. */
  const connectedNames: NameLookup = {
    server: (serverId) => registry.listTools({ serverId })[0]?.serverLabel,
    account: (serverId, accountId) => registry.listTools({ serverId, accountId })[0]?.accountLabel,
    conversation: () => undefined,
    tool: (serverId, accountId, toolName) => (accountId ? registry.getTool(serverId, accountId, toolName) : registry.listTools({ serverId }).find((t) => t.name === toolName)),
    toolCount: (serverId, accountId) => registry.listTools({ serverId, ...(accountId ? { accountId } : {}) }).length,
  };
  let names: NameLookup = connectedNames;

  async function confirm(preview: ApprovalPreview): Promise<void> {
    if ((await prompter.prompt(preview)) !== 'approve') throw new WardenError('NOT_CONFIRMED', 'The permission change was not confirmed in Warden’s dialog; nothing changed');
  }

  async function setPermission(change: PermissionChange) {
    if (change.scope === 'global' && change.mode === 'allow') {
      throw new WardenError('UNSUPPORTED', 'mode: Always Allow for every tool of every server is not offered; it would grant tools no server has listed yet. Allow a server or a tool instead.');
    }
    const pin = pinFor(change);
    if (mayLoosen(change, pin)) await confirm(changeConfirmation(change, names));
    const result = await policy.set(change, pin, 'user');
    emitPermissionChanged(result.ruleId, change.scope);
    return { ruleId: result.ruleId, old: result.old, new: result.new };
  }

  async function revokePermission(ruleId: string) {
    const old = policy.find(ruleId);
    if (!old) return { ruleId, revoked: false };
    if (removalMayLoosen(ruleId, effectivePolicy.current(), decisionsLoosen)) await confirm(removalConfirmation(old, names));
    const change = await policy.revoke(ruleId, 'user');
    emitPermissionChanged(ruleId, change?.scope.kind ?? 'unknown');
    return { ruleId, revoked: change !== null };
  }

  function emitPermissionChanged(ruleId: string, scope: string): void {
    options.events?.emit('permissions:changed', { ruleId, scope });
  }

  const handlers: GateHandlers = {
    'approvals:list': () => ({
      approvals: gate.pending().map((operation) => {
        const { operationId: _id, ...preview } = gate.preview(operation.operationId);
        return { operation: present(operation), preview };
      }),
    }),
    'approvals:review': async ({ operationId }) => {
      const answer = await review(operationId);
      return { ...answer, operation: present(answer.operation) };
    },
    'approvals:reject': async ({ operationId, reason }) => present(await gate.reject(operationId, reason ? `Rejected by you: ${reason}` : 'Rejected by you')),
    'approvals:cancel': async ({ operationId }) => present(await gate.cancel(operationId)),
    // One source for every operation the UI lists: the history (live ones shown as the gate holds them).
    'operations:list': async ({ state, conversationId, limit }) => ({
      operations: (await options.history.recordedOperations({ ...(state ? { state } : {}), ...(conversationId !== undefined ? { conversationId } : {}), limit })).map((r) => present(gate.describe(r))),
    }),
    'operations:get': async ({ operationId }) => {
      const op = await gate.get(operationId);
      if (!op) throw new WardenError('NOT_FOUND', `operationId: no operation ${JSON.stringify(operationId)}`);
      return present(op);
    },
    // The window gets the schemas' text cleaned like everything else a server writes.
    'tools:offered': ({ conversationId, accounts }) => ({ tools: offeredTools(conversationId, accounts).map((t) => ({ ...t, inputSchema: sanitizeJsonText(t.inputSchema) as Record<string, unknown> })) }),
  };

  return {
    gate,
    policy,
    effectivePolicy: () => effectivePolicy.current(),
    async switchAccount(input) {
      const switched = await policy.switchAccount({ serverId: input.serverId, conversationId: input.conversationId, accountId: input.accountId, source: input.source ?? 'user' });
      await gate.revalidate(`you switched to ${input.accountLabel}`);
      return switched;
    },
    handlers,
    review,
    reviewBatch,
    matrix,
    offeredTools,
    useNames(lookup) {
      names = lookup;
    },
    useKnownTools(tools) {
      knownTools = tools;
    },
    mayLoosen,
    setPermission,
    revokePermission,
    async setRootsEnforced(serverId, enforced) {
      const was = policy.current().enforcedRoots?.includes(serverId) === true;
      if (was && !enforced) await confirm(rootsWallOffConfirmation(serverId, names));
      const change = await policy.setRootsEnforced(serverId, enforced, 'user');
      if (change) emitPermissionChanged(change.ruleId, 'roots');
      return { enforced };
    },
    async rootFoldersChanged(serverId, accountId, folders) {
      if (!policy.setRootFolders(serverId, accountId, folders)) return;
      if (policy.current().enforcedRoots?.includes(serverId)) await gate.revalidate(`the folders of ${names.server(serverId) ?? 'a server'} changed`);
    },
    close() {
      unsubscribePolicy();
      unsubscribeGate();
      gate.close();
    },
  };
}
