/**
 * The gate's questions to the policy: the decision for an operation under current state (at
 * request, approval and immediately before sending), and the re-check that first recomputes the
 * fingerprint from what the server lists now. The engine decides; this only gathers its inputs
 * (path normalization, labels, the active account) and keeps the decisions that cannot change.
 */
import type { RequestOrigin, ToolIdentity } from '../../../shared/domain/journal-events';
import type { PolicyDecision, PolicyState } from '../../../shared/domain/policy';
import { canonicalCopy } from '../canonical/canonical-json';
import { fingerprint as computeFingerprint } from '../canonical/hashes';
import { decide, inactiveAccount, readsArguments, rootFoldersOf, rootsEnforced } from '../policy/engine';
import { normalizeForPolicy, pathRulesFor } from '../policy/normalize';
import { argumentPathsOf } from '../paths/arguments';
import type { PathFs, PathSemantics } from '../paths/resolve';
import type { ArgumentValidator } from './arguments';
import { newOperation, type Operation, type OperationNames } from './operation';
import type { ToolDescriptor, ToolRegistry } from './ports';

/** The current policy, read at every decision point. */
export interface PolicySource {
  current(): PolicyState;
}

/** What a simulated call would come to. */
export interface Simulation {
  outcome: 'allow' | 'ask' | 'deny' | 'invalid';
  reason: string;
  summary: string;
  decision: PolicyDecision | null;
}

/** What a re-check found: the approval no longer matches the tool, or the decision it makes now. */
export type Recheck =
  | { kind: 'invalidated'; reason: string; fingerprint: string; decision?: PolicyDecision }
  | { kind: 'ok'; fingerprint: string; decision: PolicyDecision };

/** A decision and everything it was made from, except the arguments (which it did not read). */
interface CachedDecision {
  user: PolicyState['user'];
  conversation: PolicyState['conversation'];
  organization: PolicyState['organization'];
  safeMode: PolicyState['safeMode'];
  defaultMode: PolicyState['defaultMode'];
  activeAccounts: PolicyState['activeAccounts'];
  enforcedRoots: PolicyState['enforcedRoots'];
  rootFolders: PolicyState['rootFolders'];
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

/** Decides operations for one gate. */
export class GateDecisions {
  /** Recent decisions for identities no argument constraint applies to (see `decideNow`). */
  private readonly decisions = new WeakMap<ToolDescriptor, CachedDecision>();

  constructor(
    private readonly policy: PolicySource,
    private readonly registry: ToolRegistry,
    private readonly paths: { semantics: PathSemantics; fs: PathFs | null },
    private readonly names: OperationNames | undefined,
  ) {}

  /** The policy decision for an operation under current state (request, approval, pre-execute). */
  decideNow(op: Operation, tool: ToolDescriptor | undefined): PolicyDecision {
    const state = this.policy.current();
    // Without argument constraints (or a folder wall) the decision depends only on the rules, the
    // tool's pins and labels, the conversation, the active account and the walls: reuse it while
    // all of those are the same.
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
      hit.enforcedRoots === state.enforcedRoots &&
      hit.rootFolders === state.rootFolders &&
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
        enforcedRoots: state.enforcedRoots,
        rootFolders: state.rootFolders,
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
      (toolName ? this.registry.getTool(serverId, accountId, toolName)?.accountLabel : undefined) ??
      this.registry.listTools({ serverId, accountId })[0]?.accountLabel ??
      this.names?.account(serverId, accountId) ??
      'another account'
    );
  }

  decideUnfrozen(op: Operation, tool: ToolDescriptor | undefined, state: PolicyState): PolicyDecision {
    const request = { serverId: op.identity.serverId, accountId: op.identity.accountId, toolName: op.identity.toolName, conversationId: op.origin.conversationId };
    const labels = { server: tool?.serverLabel ?? op.labels.server, account: tool?.accountLabel ?? op.labels.account };
    const active = inactiveAccount(state, request);
    if (active !== undefined) {
      // Decided before the arguments are read: another account's call is refused whatever it asks.
      return decide({ ...request, arguments: {} }, state, { tool: undefined, paths: this.paths.semantics, labels: { ...labels, activeAccount: this.accountLabelOf(request.serverId, active, request.toolName) } });
    }
    if (!readsArguments(state, request)) {
      // No rule for this identity reads the arguments and its server has no wall: the decision is
      // the same for every call, so the paths in it are not looked for (and the cache in
      // decideNow, whose key holds no argument, stays right whatever the path detection reads).
      return decide({ ...request, arguments: op.args }, state, { tool: this.toolContext(tool), paths: this.paths.semantics, labels });
    }
    const paths = this.paths;
    const rules = pathRulesFor(state, op.identity.serverId, op.identity.toolName);
    const walled = rootsEnforced(state, op.identity.serverId);
    const folders = walled ? rootFoldersOf(state, op.identity.serverId, op.identity.accountId) : [];
    const normalized = normalizeForPolicy(op.args, {
      semantics: paths.semantics,
      fs: paths.fs,
      pathFields: rules.fields,
      valueFields: rules.valueFields,
      // The wall's folders are resolved like a rule's, so a root reached through a symlink covers what it leads to.
      pathRoots: folders.length ? [...rules.roots, ...folders] : rules.roots,
      workingFolder: tool?.workingFolder ?? null,
      ...(tool ? { inputSchema: tool.inputSchema } : {}),
    });
    const argumentPaths = walled ? argumentPathsOf(op.args, tool?.inputSchema, { semantics: paths.semantics, fs: paths.fs, workingFolder: tool?.workingFolder ?? null }) : undefined;
    if (normalized.refused !== null) {
      // The system would refuse to open such a path too; judging it as written would guess.
      return { decision: 'deny', reason: `Refused: ${normalized.refused}`, layer: 'availability', ruleId: null, pin: 'none', configErrors: [] };
    }
    return decide(
      { ...request, arguments: normalized.arguments },
      state,
      {
        tool: this.toolContext(tool),
        paths: paths.semantics,
        unresolvedPaths: normalized.unresolvedPaths,
        pathRoots: normalized.pathRoots,
        pathValues: normalized.pathValues,
        ...(argumentPaths ? { argumentPaths } : {}),
        labels,
      },
    );
  }

  /** What the policy reads of a tool: its pins and the server's claims about it. */
  private toolContext(tool: ToolDescriptor | undefined) {
    return tool ? { contractHash: tool.contractHash, endpointHash: tool.endpointHash, annotations: tool.annotations, unverifiedListing: tool.unverifiedListing } : undefined;
  }

  /** Recomputes the fingerprint from current state, then re-decides. */
  recheck(op: Operation): Recheck {
    const tool = this.registry.getTool(op.identity.serverId, op.identity.accountId, op.identity.toolName);
    if (!tool) {
      return { kind: 'invalidated', reason: `${op.identity.toolName} is no longer offered by ${op.labels.server}`, fingerprint: '' };
    }
    const fp = computeFingerprint({ ...op.identity, endpointHash: tool.endpointHash, contractHash: tool.contractHash, canonicalArguments: op.canonicalArguments });
    if (fp !== op.fingerprint) {
      const why = tool.endpointHash !== op.identity.endpointHash ? 'server endpoint changed since the request' : 'tool changed since the request';
      return { kind: 'invalidated', reason: `Invalidated: ${why}`, fingerprint: fp };
    }
    const decision = this.decideNow(op, tool);
    if (decision.decision === 'deny' && inactiveAccount(this.policy.current(), { serverId: op.identity.serverId, accountId: op.identity.accountId, conversationId: op.origin.conversationId }) !== undefined) {
      return { kind: 'invalidated', reason: `Invalidated: ${decision.reason}`, fingerprint: fp, decision };
    }
    return { kind: 'ok', fingerprint: fp, decision };
  }

  /**
   * What the gate would do with a call, without making one: the same validation, path
   * normalization and policy decision as a real request (see `Gate.simulate`).
   */
  simulate(
    req: { serverId: string; accountId: string; toolName: string; conversationId: string | null; arguments: unknown },
    options: { state?: PolicyState; tool?: ToolDescriptor },
    validator: ArgumentValidator,
    now: number,
  ): Simulation {
    const tool = options.tool ?? this.registry.getTool(req.serverId, req.accountId, req.toolName);
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
    const op = newOperation(this.names, 'simulation', origin, identity, made.copy, made.canonical, now, tool);
    if (tool) {
      const invalid = validator.validate(tool, made.copy);
      if (invalid) return { outcome: 'invalid', reason: `Invalid arguments: ${invalid}`, summary: op.labels.summary, decision: null };
    }
    const decision = this.decideUnfrozen(op, tool, options.state ?? this.policy.current());
    return { outcome: decision.decision, reason: decision.reason, summary: op.labels.summary, decision };
  }
}
