/**
 * The permission matrix as a person reads it: every configured server, every one of its accounts
 * (connected or not), and every tool each account lists — live, or from its last listing when it
 * is not connected — with the person's modes at each level, the effective decision and its reason
 * in words, what changed, and what the organization or a conversation does to it.
 *
 * Decisions come from the policy engine itself (`decide`), with the tool's hashes as listed and the
 * server's endpoint as configured now, so a disconnected account shows what its tools would get
 * once it connects with the same contract.
 */
import type { MatrixAccount, MatrixRow, MatrixServer } from '../../../shared/contract/permissions';
import type { PermissionMode } from '../../../shared/domain/operations';
import { parseMode, type OrgRule, type PolicyState, type UserRule } from '../../../shared/domain/policy';
import type { Account, ServerDefinition } from '../../../shared/domain/servers';
import type { ToolDescriptor, ToolRegistry } from '../gate/ports';
import { decide, effectiveMode, rootFoldersOf, rootsEnforced } from '../policy/engine';
import { schemaPaths, type SchemaPaths } from '../paths/arguments';
import type { PathSemantics } from '../paths/resolve';
import { sanitizeForDisplay } from '../text/sanitize';
import { endpointHash } from '../settings/identity';
import { claimsOf, serverLocationOf } from '../preview/trusted-preview';
import { constraintWordsOf } from '../preview/constraint-words';
import type { ListingStore } from './listing-store';

/** What the matrix reads. Every function is a synchronous read of current state. */
export interface MatrixSources {
  definitions(): readonly ServerDefinition[];
  accountsOf(serverId: string): readonly Account[];
  registry: Pick<ToolRegistry, 'listTools'>;
  /** The connection state of one (server, account); 'disconnected' when none was opened. */
  connectionState(serverId: string, accountId: string): MatrixAccount['connection'];
  /** The active account of a server (for a conversation, or app-wide when null). */
  activeAccount(serverId: string, conversationId: string | null): string | undefined;
  listings: ListingStore;
  /** The rules in force (with safe mode applied). */
  policy(): PolicyState;
  paths: PathSemantics;
  /** A conversation's title, for overrides ("Trip planning"); undefined when unknown. */
  conversationTitle(conversationId: string): string | undefined;
}

/** The matrix, grouped: servers with accounts, and one row per tool of each account. */
export interface Matrix {
  servers: MatrixServer[];
  rows: MatrixRow[];
  configErrors: string[];
}

const MODE_WORDS: Record<PermissionMode, string> = { allow: 'Always Allow', ask: 'Ask', disabled: 'Disabled' };

/** "A program on this computer", "Remote, at mcp.example.com": where a server runs, for people. */
export function locationOf(def: ServerDefinition): string {
  const words = serverLocationOf(def);
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A rule's mode as shown, or null for a value Warden does not know (read as Disabled, reported). */
const modeOf = (raw: unknown): PermissionMode | null => parseMode(raw);

/** The words of one argument constraint ("path is under /project/docs"). */
export const constraintWords = constraintWordsOf;

/** The most restrictive organization rule that covers an identity (null fields match all). */
export function orgRuleFor(organization: readonly OrgRule[], serverId: string, accountId: string | null, toolName: string | null): 'forbid' | 'ask' | null {
  let worst: 'forbid' | 'ask' | null = null;
  for (const r of organization) {
    if (r.serverId !== null && r.serverId !== serverId) continue;
    // A group (account/server) is locked only by rules that cover all of it.
    if (r.accountId !== null && (accountId === null || r.accountId !== accountId)) continue;
    if (r.toolName !== null && (toolName === null || r.toolName !== toolName)) continue;
    const mode = r.mode === 'ask' || r.mode === 'allow' ? r.mode : 'forbid';
    if (mode === 'forbid') return 'forbid';
    if (mode === 'ask') worst = 'ask';
  }
  return worst;
}

function groupExplanation(
  server: string,
  account: string | null,
  own: UserRule | undefined,
  serverRule: UserRule | undefined,
  globalRule: UserRule | undefined,
  org: 'forbid' | 'ask' | null,
  defaultMode: 'ask' | 'disabled' = 'ask',
): string {
  if (org === 'forbid') return 'Blocked by your organization: none of these tools can run';
  const mode = (r: UserRule) => modeOf(r.mode);
  const lead = (m: PermissionMode | null) => (m === null ? 'Disabled (the rule has a mode Warden does not know)' : m === 'allow' ? 'Allowed' : m === 'ask' ? 'Asks' : 'Disabled');
  const capped = org === 'ask' ? '; your organization requires asking, so nothing runs without you' : '';
  const scope = account === null ? `all tools of ${server}` : `all tools of ${server} (${account})`;
  if (own) {
    const m = mode(own);
    const who = own.setBy === 'demo' ? 'the demo’s starting rules set' : own.setBy === 'import' ? 'an imported rule sets' : 'you set';
    const extra = m === 'allow' ? ` (only the tools listed when ${who === 'you set' ? 'you chose' : 'it was chosen'}; tools added later ask)` : '';
    return `${lead(m)}: ${who} ${m === null ? 'an invalid mode' : MODE_WORDS[m]} for ${scope}${extra}; a tool's own mode comes first${capped}`;
  }
  if (account !== null && serverRule) {
    const m = mode(serverRule);
    return `${lead(m)}: from your choice for every account of ${server} (${m === null ? 'invalid' : MODE_WORDS[m]}); a tool's own mode comes first${capped}`;
  }
  if (globalRule) {
    const m = mode(globalRule);
    return `${lead(m)}: from your default for every server (${m === null ? 'invalid' : MODE_WORDS[m]}); a tool's own mode comes first${capped}`;
  }
  if (defaultMode === 'disabled') return `Not set: tools without their own mode are Disabled (your default in Settings), and a tool Warden discovers never runs without you${capped}`;
  return `Not set: tools without their own mode ask, and a tool Warden discovers never runs without you${capped}`;
}

/**
 * What a server's folder wall means for one tool, in words, or null for a tool that takes neither
 * a path nor any text (the wall never touches it). Text counts because a path written into any
 * argument is judged as one (`paths/arguments.ts`).
 */
function rootsWallWords(paths: SchemaPaths, account: string, folderCount: number): string | null {
  if (paths.fields.length === 0 && !paths.freeText) return null;
  const named = paths.fields.slice(0, 3).join(', ') + (paths.fields.length > 3 ? ', …' : '');
  const which = paths.fields.length === 0 ? 'in any of its text' : paths.freeText ? `(${named}, or in any other text)` : `(${named})`;
  if (folderCount === 0) return `Every call with a path ${which} asks first: you gave ${account} no folders yet`;
  return `Calls with a path ${which} outside ${account}’s ${folderCount === 1 ? 'folder' : `${folderCount} folders`} ask first`;
}

const RANK: Record<PermissionMode, number> = { disabled: 0, ask: 1, allow: 2 };
/** How permissive a raw mode is; a mode Warden does not know is read as Disabled. */
const rank = (raw: unknown) => RANK[effectiveMode(raw)];

function scopeKey(kind: 'global' | 'server' | 'tool', serverId: string | null, accountId: string | null, toolName: string | null): string {
  return `${kind}\u0000${serverId ?? ''}\u0000${accountId ?? '*'}\u0000${toolName ?? ''}`;
}

/**
 * The first `limit` rows of a matrix and the servers they belong to (in order, with any server
 * before them that has no rows), with the number of rows in all: what a view needs to paint its
 * first screen before the whole matrix arrives.
 *
 * Why: 10,000 tools are several megabytes to validate, send and parse; a person sees the first
 * screen at once and the rest a moment later, instead of waiting for all of it.
 */
export function firstRowsOf(matrix: Matrix, limit: number | undefined): Matrix & { total: number } {
  const total = matrix.rows.length;
  if (limit === undefined || total <= limit) return { ...matrix, total };
  const rows = matrix.rows.slice(0, limit);
  const last = matrix.servers.findIndex((s) => s.serverId === rows.at(-1)!.serverId);
  return { servers: matrix.servers.slice(0, last + 1), rows, configErrors: matrix.configErrors, total };
}

/** Builds the whole matrix (see the file comment). `search` keeps rows whose names contain it. */
export function buildMatrix(src: MatrixSources, conversationId: string | null, search?: string): Matrix {
  const state = src.policy();
  const needle = search?.trim().toLowerCase() || null;
  const errors = new Set<string>();
  const rows: MatrixRow[] = [];
  const servers: MatrixServer[] = [];
  // Rules by what they cover (not by id: rules from a file or an import may have any id). Where
  // several cover the same thing, the most restrictive is shown, as the engine applies it.
  const byScope = new Map<string, UserRule>();
  const constraintsByTool = new Map<string, UserRule[]>();
  for (const r of state.user) {
    const sc = r.scope;
    if (sc.kind === 'tool-constraint') {
      const k = `${sc.serverId}\u0000${sc.toolName}`;
      constraintsByTool.set(k, [...(constraintsByTool.get(k) ?? []), r]);
      continue;
    }
    const k = scopeKey(sc.kind, 'serverId' in sc ? sc.serverId : null, 'accountId' in sc ? sc.accountId : null, sc.kind === 'tool' ? sc.toolName : null);
    const cur = byScope.get(k);
    if (!cur || rank(r.mode) < rank(cur.mode)) byScope.set(k, r);
  }
  const overridesByServer = new Map<string, PolicyState['conversation'][number][]>();
  for (const o of state.conversation) overridesByServer.set(o.serverId, [...(overridesByServer.get(o.serverId) ?? []), o]);
  const globalRule = byScope.get(scopeKey('global', null, null, null));

  for (const def of src.definitions()) {
    const serverLabel = def.name;
    const serverRule = byScope.get(scopeKey('server', def.id, null, null));
    const serverOrg = orgRuleFor(state.organization, def.id, null, null);
    const active = src.activeAccount(def.id, conversationId);
    const accounts = src.accountsOf(def.id);
    const endpoint = endpointHash(def);
    const walled = rootsEnforced(state, def.id);
    const accountViews: MatrixAccount[] = [];
    for (const [index, account] of accounts.entries()) {
      const accountRule = byScope.get(scopeKey('server', def.id, account.id, null));
      const connection = src.connectionState(def.id, account.id);
      const live = connection === 'connected' ? src.registry.listTools({ serverId: def.id, accountId: account.id }) : [];
      const listing = src.listings.last(def.id, account.id);
      const fromListing = live.length === 0 && listing !== undefined && connection !== 'connected';
      const tools: ToolDescriptor[] = fromListing
        ? listing.tools.map((t) => ({
            serverId: def.id,
            accountId: account.id,
            name: t.name,
            ...(t.title !== undefined ? { title: t.title } : {}),
            ...(t.description !== undefined ? { description: t.description } : {}),
            inputSchema: t.inputSchema,
            ...(t.annotations ? { annotations: t.annotations } : {}),
            contractHash: t.contractHash,
            endpointHash: endpoint,
            serverLabel,
            accountLabel: account.label,
          }))
        : live;
      const unreviewed = new Set(src.listings.unreviewed(def.id, account.id).map((c) => c.toolName));
      const accountOrg = orgRuleFor(state.organization, def.id, account.id, null);
      const fallback: PermissionMode = globalRule ? effectiveMode(globalRule.mode) : (state.defaultMode ?? 'ask');
      accountViews.push({
        inheritedMode: serverRule ? effectiveMode(serverRule.mode) : fallback,
        accountId: account.id,
        label: account.label,
        active: active === undefined ? index === 0 : active === account.id,
        connection,
        toolsFrom: fromListing ? 'last-listing' : connection === 'connected' ? 'live' : 'none',
        listedAt: fromListing ? listing!.listedAt : connection === 'connected' ? (listing?.listedAt ?? null) : null,
        toolCount: tools.length,
        mode: accountRule ? modeOf(accountRule.mode) : null,
        ruleId: accountRule?.id ?? null,
        explanation: groupExplanation(serverLabel, account.label, accountRule, serverRule, globalRule, accountOrg, state.defaultMode),
        rootFolders: [...rootFoldersOf(state, def.id, account.id)],
      });
      const folders = rootFoldersOf(state, def.id, account.id);
      // What a tool without a mode of its own follows, as the engine reads it: the stricter of its
      // account's and its server's modes, else the default for every server, else Settings'.
      const groupRule = accountRule && serverRule ? (rank(accountRule.mode) <= rank(serverRule.mode) ? accountRule : serverRule) : (accountRule ?? serverRule);
      const inheritedRule = groupRule ?? globalRule;
      const inherited: PermissionMode = inheritedRule ? effectiveMode(inheritedRule.mode) : (state.defaultMode ?? 'ask');
      for (const t of tools) {
        if (needle && ![t.name, serverLabel, account.label].some((s) => s.toLowerCase().includes(needle))) continue;
        const d = decide({ serverId: def.id, accountId: account.id, toolName: t.name, conversationId, arguments: {} }, state, {
          tool: { contractHash: t.contractHash, endpointHash: t.endpointHash, annotations: t.annotations },
          paths: src.paths,
          labels: { server: serverLabel, account: account.label },
        });
        for (const e of d.configErrors) errors.add(e);
        const toolRule = byScope.get(scopeKey('tool', def.id, account.id, t.name)) ?? byScope.get(scopeKey('tool', def.id, null, t.name));
        const constraintRules = (constraintsByTool.get(`${def.id}\u0000${t.name}`) ?? [])
          .filter((r) => r.scope.kind === 'tool-constraint' && (r.scope.accountId === null || r.scope.accountId === account.id))
          .map((r) => {
            const scope = r.scope as Extract<UserRule['scope'], { kind: 'tool-constraint' }>;
            return { ruleId: r.id, mode: modeOf(r.mode), words: scope.constraints.map(constraintWords).join(' and '), anyAccount: scope.accountId === null };
          });
        const conversationOverrides = (overridesByServer.get(def.id) ?? [])
          .filter((o) => (o.accountId === null || o.accountId === account.id) && (o.toolName === null || o.toolName === t.name))
          .map((o) => ({ ruleId: o.id, conversationId: o.conversationId, conversationTitle: src.conversationTitle(o.conversationId) ?? 'a conversation that no longer exists', mode: modeOf(o.mode) }));
        rows.push({
          serverId: def.id,
          accountId: account.id,
          toolName: t.name,
          serverLabel,
          accountLabel: account.label,
          serverDescription: t.description !== undefined ? sanitizeForDisplay(t.description) : null,
          serverAnnotations: t.annotations ? { ...t.annotations } : null,
          mode: toolRule ? effectiveMode(toolRule.mode) : null,
          ruleId: toolRule?.id ?? null,
          setBy: toolRule ? (toolRule.setBy ?? 'person') : null,
          inheritedMode: inherited,
          // A tool Warden never calls is refused whatever its rules say (the mode stays editable).
          effective: t.unusable !== undefined ? 'deny' : d.decision,
          explanation: t.unusable !== undefined ? `Warden never calls this tool: ${t.unusable}` : d.reason,
          layer: d.layer,
          pin: d.pin,
          orgLocked: d.layer === 'organization',
          contractHash: t.contractHash,
          source: fromListing ? 'last-listing' : 'live',
          listedAt: fromListing ? listing!.listedAt : null,
          changed: d.pin === 'contract-changed' ? 'since-allowed' : unreviewed.has(t.name) ? 'since-listed' : 'none',
          claims: claimsOf(t.annotations),
          orgLock: orgRuleFor(state.organization, def.id, account.id, t.name),
          constraintRules,
          conversationOverrides,
          rootsWall: walled ? rootsWallWords(schemaPaths(t.inputSchema), account.label, folders.length) : null,
        });
      }
    }
    servers.push({
      inheritedMode: globalRule ? effectiveMode(globalRule.mode) : (state.defaultMode ?? 'ask'),
      serverId: def.id,
      label: serverLabel,
      location: locationOf(def),
      mode: serverRule ? modeOf(serverRule.mode) : null,
      ruleId: serverRule?.id ?? null,
      explanation: groupExplanation(serverLabel, null, serverRule, undefined, globalRule, serverOrg, state.defaultMode),
      orgLock: serverOrg,
      rootsEnforced: walled,
      accounts: accountViews,
    });
  }
  return { servers, rows, configErrors: [...errors].sort() };
}
