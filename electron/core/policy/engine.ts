/**
 * The policy engine: a pure, deterministic `decide(request, policyState, context)`.
 * (Longer than most files on purpose: `decide` and the rule compiler whose indexes it reads are
 * one unit; split apart, the compiled form would become an interface of its own.)
 *
 * No I/O, no clock, no randomness. Rules are compiled once per PolicyState object (memoized by
 * identity in a WeakMap — the state is immutable, so this changes no result) into indexes keyed
 * by (server, account, tool), so a decision costs a few map lookups, not a scan of every rule.
 *
 * Layers, highest first; each higher layer is a ceiling on the ones below:
 *   availability (tool not listed → deny) > organization (forbid / cap at ask / allow)
 *   > safe mode (cap at ask) > unverified listing (cap at ask) > the server's folder wall (a path
 *   outside its roots: cap at ask) > conversation override > user rules
 *   [tool+constraint > tool > server/account > global; most restrictive wins within a level]
 *   > the default for tools with no rule (`ask`, or `disabled` when the person chose so).
 * Always Allow is pinned to the tool's contract hash and the server's endpoint hash.
 * Rule arrays must be treated as immutable: replace them to change the policy, never mutate.
 */
import type { Decision, PermissionMode } from '../../../shared/domain/operations';
import {
  parseMode,
  type ArgumentConstraint,
  type ConversationOverride,
  type OrgMode,
  type OrgRule,
  type PinStatus,
  type PolicyContext,
  type PolicyDecision,
  type PolicyRequest,
  type PolicyState,
  type RuleOrigin,
  type UserRule,
} from '../../../shared/domain/policy';
import { canonicalJson } from '../canonical/canonical-json';
import { compileGlob } from './glob';
import { isPathUnder, normalizePolicyPath } from '../paths/resolve';

type Layer = PolicyDecision['layer'];

interface CompiledRule {
  id: string;
  mode: PermissionMode;
  configError: string | null;
  pin: { contractHash: string | null; endpointHash: string | null; tools?: Record<string, string> | null } | null;
  constraints: CompiledConstraint[];
  /** What the rule covers, put into words with the request's labels when a decision is explained. */
  target: RuleTarget;
  /** The raw mode as written, when it is not one Warden knows (explanations quote it). */
  invalidMode: string | null;
  /** Who put the rule in place, so an explanation says "you set" only for the person's own. */
  setBy: RuleOrigin;
  /** When the person set it (ms since the epoch), when known. */
  setAt: number | null;
  /** Canonical JSON of the raw rule, computed on first tie: breaks ties between rules sharing an id. */
  sortKey: () => string;
  /** Conversation overrides only: whether the override covers this identity. */
  match?: (request: PolicyRequest) => boolean;
}

/**
 * What a rule covers, kept as structure rather than words: the words need the server's and
 * account's names, which belong to the request (the compiled policy is shared by every request).
 */
type RuleTarget =
  | { kind: 'global' }
  | { kind: 'server'; anyAccount: boolean }
  | { kind: 'tool'; anyAccount: boolean }
  | { kind: 'conversation'; anyAccount: boolean; anyTool: boolean };

interface CompiledOrg {
  id: string;
  mode: OrgMode;
  configError: string | null;
}

/**
 * A constraint's answer for one call: holds, does not hold, or cannot be known (a path whose place
 * is unknown). A rule with an unknown constraint may only ever make the decision stricter.
 */
const UNKNOWN = Symbol('unknown');
type Holds = boolean | typeof UNKNOWN;

type CompiledConstraint = {
  field: string[];
  dotted: string;
  test: (value: unknown, ctx: PolicyContext) => Holds;
  words: string;
  /** Why the test cannot be known, when that is the constraint's own fault (a glob it cannot evaluate). */
  unknownWhy?: string;
  /** Why the test cannot be known for this value, when the constraint can say. */
  explainUnknown?: (value: unknown, ctx: PolicyContext) => string | undefined;
};

/** Rules by server, then account (or ANY), then tool (or ANY): nested maps, so a lookup hashes
 * the request's own id strings (their hashes are cached) instead of building a key string. */
type ByTool<T> = Map<string, T[]>;
type ByAccountTool<T> = Map<string, ByTool<T>>;
type ByServerAccountTool<T> = Map<string, ByAccountTool<T>>;

interface CompiledPolicy {
  org: ByServerAccountTool<CompiledOrg>;
  orgEmpty: boolean;
  conversation: Map<string, CompiledRule[]>;
  constraintRules: ByServerAccountTool<CompiledRule>;
  toolRules: ByServerAccountTool<CompiledRule>;
  /** Server defaults: by server, then account (or ANY), then always ANY for the tool. */
  serverRules: ByServerAccountTool<CompiledRule>;
  globalRules: CompiledRule[];
}

const ANY = '\u0000*';
const NO_RULES: readonly never[] = Object.freeze([]);
const RANK: Record<PermissionMode, number> = { disabled: 0, ask: 1, allow: 2 };
const ORG_RANK: Record<OrgMode, number> = { forbid: 0, ask: 1, allow: 2 };

/**
 * Compiled indexes, keyed by the identity of the three rule arrays (not of the state object), so
 * a wrapper that spreads the state to add `safeMode` (the gate module's safe-mode view) still hits.
 */
const cache = new WeakMap<readonly unknown[], WeakMap<readonly unknown[], WeakMap<readonly unknown[], CompiledPolicy>>>();
const EMPTY_RULES: readonly unknown[] = Object.freeze([]);

/**
 * The active account of a server in a conversation: the one chosen there, else the one chosen
 * everywhere, else none (every account of the server may be used).
 */
export function activeAccountOf(state: PolicyState, serverId: string, conversationId: string | null): string | undefined {
  const chosen = state.activeAccounts;
  if (chosen === undefined || chosen.length === 0) return undefined;
  const here = conversationId === null ? undefined : chosen.find((a) => a.serverId === serverId && a.conversationId === conversationId);
  return (here ?? chosen.find((a) => a.serverId === serverId && a.conversationId === null))?.accountId;
}

/** The server's active account when the request is for another one (undefined: the request's account may be used). */
export function inactiveAccount(state: PolicyState, request: Pick<PolicyRequest, 'serverId' | 'accountId' | 'conversationId'>): string | undefined {
  const active = activeAccountOf(state, request.serverId, request.conversationId);
  return active !== undefined && active !== request.accountId ? active : undefined;
}

/**
 * Decides whether one tool call may happen: allow, ask or deny, with a human reason.
 *
 * Why pure: the same inputs always give the same answer, so every rule here is unit- and
 * property-testable and the ledger can record exactly why a call ran. `request.arguments` must
 * already be normalized (see `normalizeForPolicy`), which is where the file system is read.
 */
export function decide(request: PolicyRequest, policyState: PolicyState, context: PolicyContext): PolicyDecision {
  const policy = compile(policyState);
  const configErrors: string[] = [];

  // Only the server's active account may be used (a grant never carries over to another).
  if (inactiveAccount(policyState, request) !== undefined) {
    return result('deny', `Not the active account: ${serverWords(request, context)} is using ${context.labels?.activeAccount ?? 'another account'} here, not ${accountWords(request, context)}`, 'availability', null, 'none', configErrors);
  }

  if (!context.tool) {
    return result('deny', `Not available: ${serverWords(request, context)} does not currently list ${request.toolName}`, 'availability', null, 'none', configErrors);
  }

  // 1. Organization: the most restrictive matching managed rule is a ceiling.
  let cap: Decision = 'allow';
  let capLayer: Layer | null = null;
  let capRule: string | null = null;
  if (!policy.orgEmpty) {
    const org = mostRestrictiveOrg(policy, request);
    if (org) {
      if (org.configError) configErrors.push(org.configError);
      if (org.mode === 'forbid') {
        return result('deny', org.configError ? `Blocked by your organization: its policy file has a value Warden does not know (${org.configError})` : 'Blocked by your organization', 'organization', org.id, 'none', configErrors);
      }
      if (org.mode === 'ask') {
        cap = 'ask';
        capLayer = 'organization';
        capRule = org.id;
      }
    }
  }
  if (policyState.safeMode === true && cap === 'allow') {
    cap = 'ask';
    capLayer = 'safe-mode';
    capRule = null;
  }
  // A grant is pinned to what the server listed; while that listing cannot be relied on (the
  // server announced a change, or could not be re-listed) the grant cannot be checked: ask.
  if (context.tool.unverifiedListing !== undefined && cap === 'allow') {
    cap = 'ask';
    capLayer = 'availability';
    capRule = null;
  }

  // The person made this server's folders a wall: a path outside them (or one whose place cannot
  // be known) asks, whatever the rules below say. A ceiling like the organization's Ask, so it
  // can only make a call stricter.
  const outside = outsideRoots(request, policyState, context);
  if (outside !== null && cap === 'allow') {
    cap = 'ask';
    capLayer = 'roots';
    capRule = rootsRuleId(request.serverId);
  }

  // 2. Conversation override, 3. user rules, 4. built-in default.
  let chosen: CompiledRule | null = null;
  let layer: Layer = 'default';
  let uncertainty = '';
  if (request.conversationId !== null) {
    const conv = policy.conversation.get(request.conversationId);
    if (conv) {
      // Each override's `match` filters it to this identity inside mostRestrictive.
      chosen = mostRestrictive(conv, request, context, null);
      if (chosen) layer = 'conversation';
    }
  }
  if (!chosen) {
    // Rules that apply only if a path whose place is unknown lies under their folder.
    const uncertain: CompiledRule[] = [];
    // Specific account and any-account rules of a level are one candidate set: fold over both.
    chosen = mostRestrictiveAt(policy.constraintRules, request, context, uncertain);
    if (!chosen) chosen = mostRestrictiveAt(policy.toolRules, request, context);
    if (!chosen) {
      const byAccount = policy.serverRules.get(request.serverId);
      if (byAccount) chosen = mostRestrictive(byAccount.get(ANY)?.get(ANY) ?? NO_RULES, request, context, mostRestrictive(byAccount.get(request.accountId)?.get(ANY) ?? NO_RULES, request, context, null));
    }
    if (!chosen) chosen = mostRestrictive(policy.globalRules, request, context, null);
    if (chosen) layer = 'user';
    // The call is judged as if such a path were under whichever of those folders is strictest:
    // an unknown can make the decision stricter, never more allowed.
    const strictest = mostRestrictive(uncertain, request, context, null, 'ignore-constraints');
    if (strictest && RANK[strictest.mode] < (chosen ? RANK[chosen.mode] : RANK.ask)) {
      chosen = strictest;
      layer = 'user';
      uncertainty = ` (${whyUncertain(strictest, request, context)}; the strictest rule it could fall under applies)`;
    }
  }

  let decision: Decision;
  let reason: string;
  let pin: PinStatus = 'none';
  if (!chosen && policyState.defaultMode === 'disabled') {
    decision = 'deny';
    reason = `Disabled: you have not chosen a mode for ${request.toolName} on ${serverWords(request, context)} (${accountWords(request, context)}), and your default for such tools is Disabled`;
  } else if (!chosen) {
    decision = 'ask';
    reason = `Asks: you have not chosen a mode for ${request.toolName} on ${serverWords(request, context)} (${accountWords(request, context)}), and a tool Warden discovers always asks until you do`;
  } else {
    if (chosen.configError) configErrors.push(chosen.configError);
    const here = layer === 'conversation';
    const what = `${targetWords(chosen, request, context)}${constraintWords(chosen)}`;
    if (chosen.mode === 'disabled') {
      decision = 'deny';
      reason = chosen.invalidMode !== null
        ? `Disabled: your rule for ${what} has the mode ${chosen.invalidMode}, which Warden does not know (an invalid mode is read as Disabled)`
        : here
          ? `Disabled in this conversation: you turned off ${what} for this conversation${uncertainty}`
          : `Disabled: ${whoSet(chosen)} Disabled for ${what}${uncertainty}`;
    } else if (chosen.mode === 'ask') {
      decision = 'ask';
      reason = here ? `Asks in this conversation: you set Ask for ${what} in this conversation${uncertainty}` : `Asks: ${whoSet(chosen)} Ask for ${what}${uncertainty}`;
    } else {
      pin = checkPin(chosen, context, request.toolName);
      if (pin === 'endpoint-changed') {
        decision = 'ask';
        reason = `Asks: the server endpoint changed since you allowed it (${serverWords(request, context)} now runs or contacts something else than when you chose Always Allow)`;
      } else if (pin === 'contract-changed') {
        decision = 'ask';
        reason = `Asks: the tool changed since you allowed it (${request.toolName} on ${serverWords(request, context)} now has a different description, inputs or hints)`;
      } else {
        decision = 'allow';
        reason = here ? `Allowed in this conversation: you allowed ${what} for this conversation` : `Allowed: ${whoSet(chosen)} Always Allow for ${what}`;
      }
    }
  }

  if (decision === 'allow' && cap === 'ask') {
    const why =
      capLayer === 'safe-mode'
        ? 'the activity log failed verification, so every tool asks until you acknowledge it'
        : capLayer === 'availability'
          ? context.tool.unverifiedListing
          : capLayer === 'roots'
            ? outside
            : 'your organization requires asking for this tool';
    return result('ask', `Asks: ${why}`, capLayer!, capRule, pin, configErrors);
  }
  // Asked for another reason: the wall is said too, so the person knows what they are approving.
  if (decision === 'ask' && outside !== null) reason = `${reason}; also, ${outside}`;
  const decided = result(decision, reason, layer, chosen?.id ?? null, pin, configErrors);
  // Only the person's own rules carry the day they were set: "you set … on Tuesday".
  return chosen && chosen.setBy === 'person' && chosen.setAt !== null && layer === 'user' ? { ...decided, ruleSetAt: chosen.setAt } : decided;
}

/** The rule id a server's folder wall is journaled and explained under. */
export function rootsRuleId(serverId: string): string {
  return `roots:${serverId}`;
}

/** True when the person made this server's folders a wall. */
export function rootsEnforced(state: PolicyState, serverId: string): boolean {
  return state.enforcedRoots?.includes(serverId) === true;
}

/** The folders (server, account) was given, as chosen. */
export function rootFoldersOf(state: PolicyState, serverId: string, accountId: string): readonly string[] {
  return state.rootFolders?.find((r) => r.serverId === serverId && r.accountId === accountId)?.folders ?? NO_RULES;
}

/**
 * Why a call of a walled server breaks its wall, in words, or null when it does not (or the
 * server has no wall). Every path argument must be inside one of the account's folders, judged
 * where the server will open it (symlinks followed, relative paths from its working folder); a
 * path whose place cannot be known counts as outside.
 */
function outsideRoots(request: PolicyRequest, state: PolicyState, context: PolicyContext): string | null {
  if (!rootsEnforced(state, request.serverId)) return null;
  const paths = context.argumentPaths;
  if (!paths || paths.length === 0) return null;
  const folders = rootFoldersOf(state, request.serverId, request.accountId);
  const caseInsensitive = context.caseInsensitivePaths ?? context.paths === 'win32';
  const whose = `${serverWords(request, context)} (${accountWords(request, context)})`;
  for (const p of paths) {
    const written = JSON.stringify(p.written.length > 120 ? `${p.written.slice(0, 120)}…` : p.written);
    if (p.opened === null) {
      return `arguments.${p.field} ${written} ${p.why ?? 'is a path whose place Warden cannot know'}, so Warden cannot tell whether it is inside the folders you gave ${whose}`;
    }
    const opened = p.opened;
    if (folders.some((f) => isPathUnder(opened, context.pathRoots?.get(f) ?? f, context.paths, caseInsensitive))) continue;
    const leads = opened !== p.written ? ` (it leads to ${opened.length > 200 ? `${opened.slice(0, 200)}…` : opened})` : '';
    if (folders.length === 0) return `arguments.${p.field} ${written}${leads} is a path, and you chose to keep ${whose} inside its folders but gave it none`;
    return `arguments.${p.field} ${written}${leads} is outside the folders you gave ${whose} (${folders.join(', ')}), and you chose to keep it inside them`;
  }
  return null;
}

/**
 * True if a rule that could apply to this identity looks at the call's arguments (only
 * tool + argument-constraint rules do, and a server's folder wall).
 *
 * Why: when none does, the decision for an identity is the same for every call under the same
 * rules, tool pins and active account, so the gate may reuse it instead of normalizing the
 * arguments and deciding again on every call.
 */
export function readsArguments(policyState: PolicyState, request: Pick<PolicyRequest, 'serverId' | 'accountId' | 'toolName'>): boolean {
  if (rootsEnforced(policyState, request.serverId)) return true;
  const byAccount = compile(policyState).constraintRules.get(request.serverId);
  if (!byAccount) return false;
  return byAccount.get(request.accountId)?.has(request.toolName) === true || byAccount.get(ANY)?.has(request.toolName) === true;
}

/** The server's name as a person set it (its id only when no name is known). */
function serverWords(request: PolicyRequest, context: PolicyContext): string {
  return context.labels?.server ?? request.serverId;
}

function accountWords(request: PolicyRequest, context: PolicyContext): string {
  return context.labels?.account ?? request.accountId;
}

/**
 * What a rule covers, in words, with names: "write_file on Files (Work)", "all tools of Files".
 * A rule only ever applies to the request's own server and account, so the request's labels are
 * the rule's labels.
 */
function targetWords(rule: CompiledRule, request: PolicyRequest, context: PolicyContext): string {
  const t = rule.target;
  const server = serverWords(request, context);
  const account = accountWords(request, context);
  switch (t.kind) {
    case 'global':
      return 'every tool of every server';
    case 'server':
      return t.anyAccount ? `all tools of ${server}` : `all tools of ${server} (${account})`;
    case 'tool':
      return t.anyAccount ? `${request.toolName} on ${server} (every account)` : `${request.toolName} on ${server} (${account})`;
    case 'conversation':
      return `${t.anyTool ? `all tools of ${server}` : `${request.toolName} on ${server}`}${t.anyAccount ? '' : ` (${account})`}`;
  }
}

/** "you set", "the demo's starting rules set", "an imported rule sets": who chose a rule's mode. */
function whoSet(rule: CompiledRule): string {
  return rule.setBy === 'demo' ? 'the demo’s starting rules set' : rule.setBy === 'import' ? 'an imported rule sets' : 'you set';
}

function constraintWords(rule: CompiledRule): string {
  return rule.constraints.length ? ` when ${rule.constraints.map((c) => c.words).join(' and ')}` : '';
}

function result(decision: Decision, reason: string, layer: Layer, ruleId: string | null, pin: PinStatus, configErrors: string[]): PolicyDecision {
  return { decision, reason, layer, ruleId, pin, configErrors };
}

function checkPin(rule: CompiledRule, context: PolicyContext, toolName: string): PinStatus {
  if (!rule.pin) return 'none';
  if (rule.pin.endpointHash !== null && rule.pin.endpointHash !== context.tool!.endpointHash) return 'endpoint-changed';
  if (rule.pin.contractHash !== null && rule.pin.contractHash !== context.tool!.contractHash) return 'contract-changed';
  const tools = rule.pin.tools;
  // A many-tool grant covers exactly the tools it saw: a new tool or a changed one asks.
  if (tools && (!Object.prototype.hasOwnProperty.call(tools, toolName) || tools[toolName] !== context.tool!.contractHash)) return 'contract-changed';
  return 'ok';
}

/**
 * Picks the most restrictive rule (starting from `best`) whose match and constraints hold; ties go
 * to the smaller id. A fold with a total order, so splitting the candidates changes nothing.
 */
function mostRestrictive(
  rules: readonly CompiledRule[],
  request: PolicyRequest,
  context: PolicyContext,
  best: CompiledRule | null,
  uncertain: CompiledRule[] | 'ignore-constraints' | null = null,
): CompiledRule | null {
  for (const rule of rules) {
    if (rule.match && !rule.match(request)) continue;
    if (rule.constraints.length > 0 && uncertain !== 'ignore-constraints') {
      const holds = constraintsHold(rule, request, context);
      if (holds === false) continue;
      if (holds === UNKNOWN) {
        uncertain?.push(rule);
        continue;
      }
    }
    if (!best || RANK[rule.mode] < RANK[best.mode] || (RANK[rule.mode] === RANK[best.mode] && tieBreak(rule, best))) best = rule;
  }
  return best;
}

/** All of a rule's constraints: true, false (one fails), or UNKNOWN (none fails, one cannot be known). */
function constraintsHold(rule: CompiledRule, request: PolicyRequest, context: PolicyContext): Holds {
  let unknown = false;
  for (const c of rule.constraints) {
    const holds = c.test(getField(request.arguments, c.field), context);
    if (holds === false) return false;
    if (holds === UNKNOWN) unknown = true;
  }
  return unknown ? UNKNOWN : true;
}

/** Why a rule chosen for an unknown path might apply: the first unknown path's story. */
function whyUncertain(rule: CompiledRule, request: PolicyRequest, context: PolicyContext): string {
  for (const c of rule.constraints) {
    const value = getField(request.arguments, c.field);
    if (c.test(value, context) !== UNKNOWN) continue;
    return c.unknownWhy ?? c.explainUnknown?.(value, context) ?? context.unresolvedPaths?.get(c.dotted) ?? `arguments.${c.dotted} ${JSON.stringify(value)} is not an absolute path`;
  }
  return 'a path could not be placed';
}

/** Deterministic tie-break among equally restrictive rules: the smaller id, so order never matters. */
function tieBreak(a: CompiledRule, b: CompiledRule): boolean {
  return a.id < b.id || (a.id === b.id && a.sortKey() < b.sortKey());
}

/** The most restrictive rule of one (server, account|ANY, tool) level. */
function mostRestrictiveAt(index: ByServerAccountTool<CompiledRule>, request: PolicyRequest, context: PolicyContext, uncertain: CompiledRule[] | null = null): CompiledRule | null {
  const byAccount = index.get(request.serverId);
  if (!byAccount) return null;
  const specific = byAccount.get(request.accountId)?.get(request.toolName);
  const anyAccount = byAccount.get(ANY)?.get(request.toolName);
  return mostRestrictive(anyAccount ?? NO_RULES, request, context, specific ? mostRestrictive(specific, request, context, null, uncertain) : null, uncertain);
}

function mostRestrictiveOrg(policy: CompiledPolicy, request: PolicyRequest): CompiledOrg | null {
  let best: CompiledOrg | null = null;
  for (let si = 0; si < 2; si++) {
    const byAccount = policy.org.get(si === 0 ? request.serverId : ANY);
    if (!byAccount) continue;
    for (let ai = 0; ai < 2; ai++) {
      const byTool = byAccount.get(ai === 0 ? request.accountId : ANY);
      if (!byTool) continue;
      for (let ti = 0; ti < 2; ti++) {
        for (const rule of byTool.get(ti === 0 ? request.toolName : ANY) ?? NO_RULES) {
          if (!best || ORG_RANK[rule.mode] < ORG_RANK[best.mode] || (ORG_RANK[rule.mode] === ORG_RANK[best.mode] && rule.id < best.id)) best = rule;
        }
      }
    }
  }
  return best;
}

function getField(args: Readonly<Record<string, unknown>>, path: string[]): unknown {
  let cur: unknown = args;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

// ---- compilation -------------------------------------------------------------------------

function compile(state: PolicyState): CompiledPolicy {
  const u = state.user ?? EMPTY_RULES;
  const c = state.conversation ?? EMPTY_RULES;
  const o = state.organization ?? EMPTY_RULES;
  let byConversation = cache.get(u);
  if (!byConversation) cache.set(u, (byConversation = new WeakMap()));
  let byOrg = byConversation.get(c);
  if (!byOrg) byConversation.set(c, (byOrg = new WeakMap()));
  const hit = byOrg.get(o);
  if (hit) return hit;
  const compiled: CompiledPolicy = {
    org: new Map(),
    orgEmpty: true,
    conversation: new Map(),
    constraintRules: new Map(),
    toolRules: new Map(),
    serverRules: new Map(),
    globalRules: [],
  };
  for (const rule of state.organization ?? []) {
    compiled.orgEmpty = false;
    push3(compiled.org, rule.serverId ?? ANY, rule.accountId ?? ANY, rule.toolName ?? ANY, compileOrg(rule));
  }
  for (const rule of state.conversation ?? []) {
    // Conversation overrides are indexed by conversation, then filtered by identity at decide time.
    const list = compiled.conversation.get(rule.conversationId) ?? [];
    list.push(compileConversation(rule));
    compiled.conversation.set(rule.conversationId, list);
  }
  for (const rule of state.user ?? []) {
    const c = compileUser(rule);
    const s = rule.scope;
    switch (s.kind) {
      case 'global':
        compiled.globalRules.push(c);
        break;
      case 'server':
        push3(compiled.serverRules, s.serverId, s.accountId ?? ANY, ANY, c);
        break;
      case 'tool':
        push3(compiled.toolRules, s.serverId, s.accountId ?? ANY, s.toolName, c);
        break;
      case 'tool-constraint':
        push3(compiled.constraintRules, s.serverId, s.accountId ?? ANY, s.toolName, c);
        break;
    }
  }
  byOrg.set(o, compiled);
  return compiled;
}

function push3<T>(map: ByServerAccountTool<T>, serverId: string, accountId: string, toolName: string, v: T): void {
  let byAccount = map.get(serverId);
  if (!byAccount) map.set(serverId, (byAccount = new Map()));
  let byTool = byAccount.get(accountId);
  if (!byTool) byAccount.set(accountId, (byTool = new Map()));
  const list = byTool.get(toolName);
  if (list) list.push(v);
  else byTool.set(toolName, [v]);
}

function describeMode(raw: unknown): string {
  try {
    return raw === undefined ? 'undefined' : JSON.stringify(raw);
  } catch {
    return String(raw);
  }
}

function compileOrg(rule: OrgRule): CompiledOrg {
  const mode = typeof rule.mode === 'string' && (rule.mode === 'forbid' || rule.mode === 'ask' || rule.mode === 'allow') ? rule.mode : null;
  return {
    id: rule.id,
    mode: mode ?? 'forbid',
    configError: mode ? null : `organization rule ${rule.id}: unknown mode ${describeMode(rule.mode)} (expected forbid, ask or allow); treated as forbid`,
  };
}

/**
 * The mode a raw user or conversation rule mode decides with: allow, ask or disabled as written;
 * anything else counts as disabled (fail closed; `decide` also reports it as a configuration
 * error). The one place this reading is made: the matrix and the confirmations ask here.
 */
export function effectiveMode(raw: unknown): PermissionMode {
  return parseMode(raw) ?? 'disabled';
}

function compileMode(id: string, raw: unknown): { mode: PermissionMode; configError: string | null; invalidMode: string | null } {
  const mode = parseMode(raw);
  return mode
    ? { mode, configError: null, invalidMode: null }
    : { mode: 'disabled', configError: `rule ${id}: unknown mode ${describeMode(raw)} (expected allow, ask or disabled); treated as disabled`, invalidMode: describeMode(raw) };
}

function compileUser(rule: UserRule): CompiledRule {
  const s = rule.scope;
  const constraints = s.kind === 'tool-constraint' ? s.constraints.map(compileConstraint) : [];
  const target: RuleTarget = s.kind === 'global' ? { kind: 'global' } : { kind: s.kind === 'server' ? 'server' : 'tool', anyAccount: s.accountId === null };
  return { id: rule.id, ...compileMode(rule.id, rule.mode), pin: rule.pin ?? null, constraints, target, setBy: rule.setBy ?? 'person', setAt: rule.setAt ?? null, sortKey: lazyKey(rule) };
}

function compileConversation(rule: ConversationOverride): CompiledRule {
  return {
    id: rule.id,
    ...compileMode(rule.id, rule.mode),
    pin: rule.pin ?? null,
    constraints: [],
    setBy: 'person',
    setAt: null,
    target: { kind: 'conversation', anyAccount: rule.accountId === null, anyTool: rule.toolName === null },
    sortKey: lazyKey(rule),
    match: (r) => r.serverId === rule.serverId && (rule.accountId === null || rule.accountId === r.accountId) && (rule.toolName === null || rule.toolName === r.toolName),
  };
}

function compileConstraint(c: ArgumentConstraint): CompiledConstraint {
  const field = c.field.split('.');
  switch (c.op) {
    case 'pathUnder':
      return {
        field,
        dotted: c.field,
        words: `${c.field} is under ${c.value}`,
        test: (v, ctx) => {
          if (typeof v !== 'string') return false;
          const caseInsensitive = ctx.caseInsensitivePaths ?? ctx.paths === 'win32';
          // A path with no known place (relative, unreadable) could be under any folder.
          if (ctx.unresolvedPaths?.has(c.field) || normalizePolicyPath(v, ctx.paths, caseInsensitive) === null) return UNKNOWN;
          return isPathUnder(v, ctx.pathRoots?.get(c.value) ?? c.value, ctx.paths, caseInsensitive);
        },
      };
    case 'equals': {
      const want = canonicalJson(c.value);
      return { field, dotted: c.field, words: `${c.field} is ${want}`, test: (v, ctx) => onBothReadings(v, ctx.pathValues?.get(c.field), (x) => x !== undefined && safeCanonical(x) === want, namesRootedPath([c.value], ctx)), explainUnknown: explainReadings(c.field, 'the rule names') };
    }
    case 'oneOf': {
      const set = new Set(c.value.map((x) => canonicalJson(x)));
      return { field, dotted: c.field, words: `${c.field} is one of ${[...set].join(', ')}`, test: (v, ctx) => onBothReadings(v, ctx.pathValues?.get(c.field), (x) => x !== undefined && set.has(safeCanonical(x)), namesRootedPath(c.value, ctx)), explainUnknown: explainReadings(c.field, 'the rule names') };
    }
    case 'matches': {
      const glob = globMatcher(c.value);
      const words = `${c.field} matches ${c.value}`;
      // A glob that cannot be evaluated could match anything: its rule may only make calls stricter.
      if ('why' in glob) return { field, dotted: c.field, words, test: (v) => (typeof v === 'string' ? UNKNOWN : false), unknownWhy: glob.why };
      return {
        field,
        dotted: c.field,
        words,
        test: (v, ctx) => {
          if (typeof v !== 'string') return false;
          const p = ctx.pathValues?.get(c.field);
          // A field only this kind of rule makes a path is also read where it is opened, when the
          // glob names paths from a root and that place is known; `r*` on a mode field, or a word
          // sent to a server with no known working folder, keeps meaning the text.
          return p && (!p.byRule || (p.opened !== null && ROOTED_GLOB.test(c.value))) ? globOnPath(c.value, glob, p, ctx) : glob.test(v);
        },
        explainUnknown: explainReadings(c.field, 'the glob matches'),
      };
    }
    case 'min':
      return { field, dotted: c.field, words: `${c.field} is at least ${c.value}`, test: (v) => typeof v === 'number' && v >= c.value };
    case 'max':
      return { field, dotted: c.field, words: `${c.field} is at most ${c.value}`, test: (v) => typeof v === 'number' && v <= c.value };
    case 'maxLength':
      return { field, dotted: c.field, words: `${c.field} is at most ${c.value} long`, test: (v) => (typeof v === 'string' || Array.isArray(v)) && v.length <= c.value };
  }
}

/**
 * A value test on a path argument, read as written, as the constraint sees it (an absolute path
 * resolved through its symlinks) and, when the rule names a path from a root, where the server
 * opens it (a relative one from its working folder): all agree → that answer; they differ →
 * UNKNOWN, so a Disabled `equals "/etc/passwd"` is not escaped because /etc is a link (as on
 * macOS) or by writing `../etc/passwd`, and an Allow never holds for a path only one reading names.
 * A rule naming a plain word (`equals "r"`) is compared with the text only: the server reads
 * that word the same way whichever way the rule's side is read.
 */
function onBothReadings(v: unknown, p: { written: string; opened: string | null } | undefined, test: (x: unknown) => boolean, rooted: boolean): Holds {
  const seen = test(v);
  if (!p || typeof v !== 'string') return seen;
  const readings = rooted && p.opened !== null ? [p.written, p.opened] : [p.written];
  return readings.every((r) => r === v || test(r) === seen) ? seen : UNKNOWN;
}

/** A glob that names paths from a root: absolute, home, a Windows drive or UNC prefix, or any depth (`**`). */
const ROOTED_GLOB = /^(?:[/\\~]|\*\*|[A-Za-z]:)/;

/** True when one of a rule's values is an absolute path, so a path argument is compared where it is opened too. */
function namesRootedPath(values: readonly unknown[], ctx: PolicyContext): boolean {
  return values.some((x) => typeof x === 'string' && normalizePolicyPath(x, ctx.paths) !== null);
}

/** Why a constraint on a path argument cannot be known: its place is unknown, or its two readings disagree. */
function explainReadings(field: string, ruleWords: string): (v: unknown, ctx: PolicyContext) => string | undefined {
  return (_v, ctx) => {
    const p = ctx.pathValues?.get(field);
    if (!p) return undefined;
    const written = JSON.stringify(p.written.length > 120 ? `${p.written.slice(0, 120)}…` : p.written);
    if (p.opened === null) return `arguments.${field} ${written} ${p.why ?? 'is a path whose place Warden cannot know'}`;
    return `arguments.${field} ${written} is opened as ${p.opened.length > 200 ? `${p.opened.slice(0, 200)}…` : p.opened}, and ${ruleWords} one way of writing it but not another`;
  };
}

function lazyKey(rule: unknown): () => string {
  let key: string | undefined;
  return () => (key ??= safeCanonical(rule));
}

const globCache = new Map<string, { test: (s: string) => boolean } | { why: string }>();

/**
 * Compiled linear-time glob matchers, shared across policy states (compiling a glob is the costly
 * part), or why a glob cannot be evaluated.
 */
function globMatcher(glob: string): { test: (s: string) => boolean } | { why: string } {
  let m = globCache.get(glob);
  if (!m) {
    try {
      m = compileGlob(glob);
    } catch (error) {
      m = { why: `the glob ${JSON.stringify(glob)} cannot be evaluated (${error instanceof Error ? error.message : String(error)})` };
    }
    if (globCache.size > 10_000) globCache.clear();
    globCache.set(glob, m);
  }
  return m;
}

/**
 * A glob on a path argument. The path is read as written and as the system will open it (a
 * relative path from the server's working folder, `..` and symlinks walked); on Windows both
 * separators are one (`\\` counts as `/`) and case does not tell files apart. A glob that holds
 * for every reading holds; one that holds for none does not; anything between (or a path whose
 * place is unknown) is UNKNOWN, so the rule can only make the decision stricter: a Disabled glob
 * is not escaped by writing the path another way, and an Allow glob never allows more than it
 * names.
 */
function globOnPath(source: string, glob: { test: (s: string) => boolean }, p: { written: string; opened: string | null }, ctx: PolicyContext): Holds {
  if (p.opened === null) return UNKNOWN;
  const win = ctx.paths === 'win32';
  const fold = ctx.caseInsensitivePaths ?? win;
  const folded = fold ? globMatcher(source.toLowerCase()) : null;
  let answer: boolean | null = null;
  for (const raw of [p.written, p.opened]) {
    const form = win ? raw.replace(/\\/g, '/') : raw;
    const readings = [glob.test(form)];
    if (folded) readings.push('why' in folded ? !readings[0] : folded.test(form.toLowerCase()));
    for (const r of readings) {
      answer ??= r;
      if (r !== answer) return UNKNOWN;
    }
  }
  return answer!;
}

function safeCanonical(v: unknown): string {
  try {
    return canonicalJson(v);
  } catch {
    return '\u0000invalid';
  }
}
