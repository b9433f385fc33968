/**
 * The permission surfaces a person decides with, assembled for the core: the grouped matrix (every
 * configured account, connected or not), the "would this call be allowed?" check through the real
 * gate, bulk changes with one confirmation, the rug-pull view (before/after of a changed tool) and
 * its three answers, the folder chooser for path rules, the active account and what removing an
 * account deletes.
 *
 * Nothing here can grant without a person: every change that may make Warden ask less goes through
 * the native confirmation (the ApprovalPrompter owned by main) before the policy store sees it.
 */
import type { ChannelName, RequestOf, ResponseOf } from '../../../shared/ipc';
import type { MatrixAccount, PermissionChange, ToolChangeDetail } from '../../../shared/contract/permissions';
import type { GrantPin, PolicyState } from '../../../shared/domain/policy';
import { WardenError } from '../../../shared/result';
import type { CoreEvents } from '../events';
import type { GateModule } from '../gate/gate-module';
import type { ToolDescriptor } from '../gate/ports';
import type { ConnectionManager } from '../mcp/connection-manager';
import { decide } from '../policy/engine';
import { spawnedWorkingFolder, type PathSemantics } from '../paths/resolve';
import { PolicyStore } from '../policy/store';
import type { ApprovalPreview, ApprovalPrompter, Clock } from '../ports';
import { serverKindOf } from '../preview/trusted-preview';
import type { ServerService } from '../settings/server-service';
import { endpointHash } from '../settings/identity';
import { bulkConfirmation, newVersionConfirmation, type NameLookup } from '../preview/permission-confirmations';
import { contractDiff } from './contract-diff';
import { ListingStore, type ContractVersion } from './listing-store';
import type { Scrub } from '../storage/json-file-folder';
import { buildMatrix, firstRowsOf, type MatrixSources } from './matrix';

type Channel =
  | 'permissions:matrix'
  | 'permissions:set'
  | 'permissions:revoke'
  | 'permissions:check'
  | 'permissions:tool-schema'
  | 'permissions:set-many'
  | 'permissions:change-detail'
  | 'permissions:resolve-change'
  | 'permissions:choose-folder'
  | 'accounts:set-active'
  | 'accounts:switch'
  | 'accounts:removal-impact';

/** Handlers for the channels this module owns. */
export type PermissionsHandlers = { [C in Channel & ChannelName]: (request: RequestOf<C>) => Promise<ResponseOf<C>> | ResponseOf<C> };

/** Shows main's native folder chooser; resolves the chosen folder or null when cancelled. */
export type FolderChooser = (options: { title: string }) => Promise<string | null>;

export interface PermissionsModuleOptions {
  gate: GateModule;
  servers: ServerService;
  connections: ConnectionManager;
  events: CoreEvents;
  /** The native dialog (main); loosening changes are confirmed there. */
  prompter: ApprovalPrompter;
  clock: Clock;
  /** Folder for the listings of each server (null/absent: memory only). */
  listingsDir?: string | null;
  /** The app's redactor over every listing written (see ListingStore). */
  scrub?: Scrub;
  paths: PathSemantics;
  /** A conversation's title, for conversation overrides. */
  conversationTitle?: (conversationId: string) => string | undefined;
  /** Main's folder chooser for path rules; absent = refused (a headless core opens nothing). */
  chooseFolder?: FolderChooser;
}

export interface PermissionsModule {
  handlers: PermissionsHandlers;
  listings: ListingStore;
  /** Resolves once stored listings are read. */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** Builds the module (see the file comment) and starts remembering what each account lists. */
export function createPermissionsModule(options: PermissionsModuleOptions): PermissionsModule {
  const { gate: gateModule, servers, connections, events, prompter, clock } = options;
  const gate = gateModule.gate;
  const policy = gateModule.policy;
  const listings = new ListingStore(options.listingsDir ?? null, options.scrub);
  const ready = listings.load().catch((error: unknown) => console.error('listings: loading failed', error));
  for (const p of listings.problems) console.error(`listings: ${p}`);

  // As the gate decides: the Settings default, the active accounts and safe mode applied.
  const current = (): PolicyState => gateModule.effectivePolicy();
  const labelsOf = (serverId: string, accountId: string | null) => {
    const def = servers.getServer(serverId);
    const account = accountId ? servers.accountsOf(serverId).find((a) => a.id === accountId) : undefined;
    return { server: def?.name ?? serverId, account: accountId === null ? 'every account' : (account?.label ?? accountId) };
  };

  // ---- what each account lists ----------------------------------------------------------------
  const record = (serverId: string, accountId: string) => {
    const tools = connections.discoveredTools(serverId, accountId);
    const snapshot = connections.snapshot(serverId).find((s) => s.accountId === accountId);
    // Reported during discovery, before the connection says "connected": the tools are already its own.
    if (!snapshot) return;
    listings.record({
      serverId,
      accountId,
      listedAt: clock.now(),
      endpointHash: snapshot.endpointHash,
      instructions: snapshot.instructions ?? null,
      tools: tools.map((t) => ({
        name: t.name,
        ...(t.title !== undefined ? { title: t.title } : {}),
        ...(t.displayDescription !== undefined ? { description: t.displayDescription } : {}),
        inputSchema: t.inputSchema,
        ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
        ...(t.annotations ? { annotations: t.annotations } : {}),
        contractHash: t.contractHash,
      })),
    });
  };
  const offTools = connections.on('toolsChanged', (change) => {
    // After the stored listings are read, so a first listing is compared with the last one.
    void ready.then(() => record(change.serverId, change.accountId));
  });
  const offServers = servers.onChange((change) => {
    if (change.serverId === null) return;
    // At once, before anything else is decided: a removed account is no longer the active one, so
    // the server's other accounts are usable again.
    if (change.reason === 'removed' || change.reason === 'account-removed') {
      const live = new Set(servers.accountsOf(change.serverId).map((a) => a.id));
      policy.forgetActiveAccounts(change.serverId, (accountId) => live.has(accountId));
    }
    if (change.reason === 'removed') void forgetServer(change.serverId);
    else if (change.reason === 'account-removed') void forgetMissingAccounts(change.serverId);
  });

  /** A removed server's listings and rules go with it (its id is never reused). */
  async function forgetServer(serverId: string): Promise<void> {
    await listings.forget(serverId);
    await revokeWhere((s) => s === serverId, () => true);
  }

  async function forgetMissingAccounts(serverId: string): Promise<void> {
    const live = new Set(servers.accountsOf(serverId).map((a) => a.id));
    for (const accountId of listings.accountsOf(serverId)) if (!live.has(accountId)) await listings.forget(serverId, accountId);
    await revokeWhere((s) => s === serverId, (a) => a !== null && !live.has(a));
  }

  /** Removes (journaled, source system) every rule whose server and account match. */
  async function revokeWhere(server: (serverId: string) => boolean, account: (accountId: string | null) => boolean): Promise<number> {
    const state = policy.current();
    const doomed = [
      ...state.user.filter((r) => 'serverId' in r.scope && server(r.scope.serverId) && account(r.scope.accountId)).map((r) => r.id),
      ...state.conversation.filter((r) => server(r.serverId) && account(r.accountId)).map((r) => r.id),
    ];
    for (const id of doomed) {
      const change = await policy.revoke(id, 'system');
      if (change) events.emit('permissions:changed', { ruleId: id, scope: change.scope.kind });
    }
    return doomed.length;
  }

  // ---- the matrix --------------------------------------------------------------------------------
  const connectionState = (serverId: string, accountId: string): MatrixAccount['connection'] => {
    const s = connections.snapshot(serverId).find((x) => x.accountId === accountId)?.status.state;
    return s === 'connected' || s === 'connecting' || s === 'error' || s === 'auth_required' ? s : 'disconnected';
  };
  const sources: MatrixSources = {
    definitions: () => servers.definitions(),
    accountsOf: (id) => servers.accountsOf(id),
    registry: connections,
    connectionState,
    activeAccount: (serverId, conversationId) => gate.activeAccount(serverId, conversationId),
    listings,
    policy: current,
    paths: options.paths,
    conversationTitle: (id) => options.conversationTitle?.(id),
  };

  /** A tool as the gate would see it: live, or rebuilt from its last listing with the endpoint configured now. */
  function toolFor(serverId: string, accountId: string, toolName: string): { tool: ToolDescriptor; source: 'live' | 'last-listing' } {
    const live = connections.getTool(serverId, accountId, toolName);
    if (live) return { tool: live, source: 'live' };
    const def = servers.getServer(serverId);
    const account = servers.accountsOf(serverId).find((a) => a.id === accountId);
    if (!def || !account) throw new WardenError('NOT_FOUND', `serverId/accountId: no account "${accountId}" of server "${serverId}"`);
    const listed = listings.last(serverId, accountId)?.tools.find((t) => t.name === toolName);
    if (!listed) throw new WardenError('NOT_FOUND', `toolName: ${def.name} (${account.label}) has never listed ${toolName}; connect it first`);
    return {
      source: 'last-listing',
      tool: {
        serverId,
        accountId,
        name: listed.name,
        inputSchema: listed.inputSchema,
        ...(listed.annotations ? { annotations: listed.annotations } : {}),
        contractHash: listed.contractHash,
        endpointHash: endpointHash(def),
        serverLabel: def.name,
        accountLabel: account.label,
        serverKind: serverKindOf(def),
        // Where the process will start, the same way the connection layer says it for a live tool.
        ...(def.transport === 'stdio' ? { workingFolder: spawnedWorkingFolder(def.cwd) } : {}),
      },
    };
  }

  /** Names for the confirmations' words (never an id: a lookup that misses gets generic words). */
  const names: NameLookup = {
    server: (serverId) => servers.getServer(serverId)?.name,
    account: (serverId, accountId) => servers.accountsOf(serverId).find((a) => a.id === accountId)?.label,
    conversation: (id) => options.conversationTitle?.(id),
    tool: (serverId, accountId, toolName) => {
      const live = accountId ? connections.getTool(serverId, accountId, toolName) : connections.listTools({ serverId }).find((t) => t.name === toolName);
      if (live) return { ...(live.description !== undefined ? { description: live.description } : {}), ...(live.annotations ? { annotations: live.annotations } : {}) };
      for (const a of accountId ? [accountId] : listings.accountsOf(serverId)) {
        const listed = listings.last(serverId, a)?.tools.find((t) => t.name === toolName);
        if (listed) return { ...(listed.description !== undefined ? { description: listed.description } : {}), ...(listed.annotations ? { annotations: listed.annotations } : {}) };
      }
      return undefined;
    },
    toolCount: (serverId, accountId) => connections.listTools({ serverId, ...(accountId ? { accountId } : {}) }).length,
  };
  gateModule.useNames(names);

  // ---- pins and loosening ----------------------------------------------------------------------
  /** What an Always Allow is pinned to: the tool's contract now, or every tool the account lists now. */
  function pinFor(change: PermissionChange): GrantPin | null {
    if (change.mode !== 'allow' || change.scope === 'global') return null;
    if ('toolName' in change && change.toolName) {
      const accounts = change.accountId ? [change.accountId] : servers.accountsOf(change.serverId).map((a) => a.id);
      for (const a of accounts) {
        const live = connections.getTool(change.serverId, a, change.toolName);
        if (live) return { contractHash: live.contractHash, endpointHash: live.endpointHash };
      }
      throw new WardenError('NOT_FOUND', `toolName: ${labelsOf(change.serverId, null).server} does not currently list ${change.toolName}; connect it before allowing it`);
    }
    const tools = connections.listTools({ serverId: change.serverId, ...(change.accountId ? { accountId: change.accountId } : {}) });
    const any = tools[0];
    if (!any) throw new WardenError('NOT_FOUND', `serverId: ${labelsOf(change.serverId, change.accountId).server} has no listed tools; connect it before allowing it`);
    // Covers exactly the tools listed now (by contract): tools the server adds later still ask.
    return { contractHash: null, endpointHash: any.endpointHash, tools: Object.fromEntries(tools.map((t) => [t.name, t.contractHash])) };
  }

  // The loosening check compares decisions over every tool Warden knows, listed now or last listed.
  gateModule.useKnownTools(() => {
    const known = [...connections.listTools()];
    const live = new Set(known.map((t) => `${t.serverId}\u0000${t.accountId}\u0000${t.name}`));
    for (const def of servers.definitions()) {
      for (const account of servers.accountsOf(def.id)) {
        for (const listed of listings.last(def.id, account.id)?.tools ?? []) {
          if (!live.has(`${def.id}\u0000${account.id}\u0000${listed.name}`)) known.push(toolFor(def.id, account.id, listed.name).tool);
        }
      }
    }
    return known;
  });

  async function confirm(preview: ApprovalPreview): Promise<void> {
    if ((await prompter.prompt(preview)) !== 'approve') {
      throw new WardenError('NOT_CONFIRMED', 'The change was not confirmed in Warden’s dialog; nothing changed');
    }
  }

  function emitChanged(ruleId: string, scope: string): void {
    events.emit('permissions:changed', { ruleId, scope });
  }

  async function setMany(changes: PermissionChange[]) {
    for (const [i, c] of changes.entries()) {
      if (c.scope === 'global' && c.mode === 'allow') {
        throw new WardenError('UNSUPPORTED', `changes.${i}.mode: Always Allow for every tool of every server is not offered; it would grant tools no server has listed yet`);
      }
    }
    const pins = changes.map(pinFor);
    const loosening = changes.filter((c, i) => gateModule.mayLoosen(c, pins[i]!));
    if (loosening.length > 0) await confirm(bulkConfirmation(loosening, names));
    const results: Array<{ ruleId: string; oldMode: PermissionChange['mode'] | null }> = [];
    for (const [i, c] of changes.entries()) {
      const old = policy.find(PolicyStore.ruleIdFor(c));
      const r = await policy.set(c, pins[i]!, 'user');
      emitChanged(r.ruleId, c.scope);
      // What was there before, so the view can offer Undo (an unknown old mode is put back as Disabled).
      results.push({ ruleId: r.ruleId, oldMode: old ? (old.mode === 'allow' || old.mode === 'ask' ? old.mode : 'disabled') : null });
    }
    return { changed: changes.length, results };
  }

  // ---- rug pulls ---------------------------------------------------------------------------------
  /** The version an Always Allow of this tool was pinned to, if a grant covers it. */
  function pinnedHash(serverId: string, accountId: string, toolName: string): string | null {
    const d = decide({ serverId, accountId, toolName, conversationId: null, arguments: {} }, current(), {
      tool: { contractHash: '\u0000unknown', endpointHash: '\u0000unknown' },
      paths: options.paths,
    });
    const rule = d.ruleId ? policy.find(d.ruleId) : undefined;
    const pin = rule?.pin;
    if (!pin) return null;
    return pin.contractHash ?? pin.tools?.[toolName] ?? null;
  }

  function changeDetail(serverId: string, accountId: string, toolName: string): ToolChangeDetail {
    const { tool } = toolFor(serverId, accountId, toolName);
    const versions = listings.versions(serverId, accountId, toolName);
    const after = versions.at(-1);
    if (!after) throw new WardenError('NOT_FOUND', `toolName: no listing of ${toolName} is kept; connect the server first`);
    const row = buildMatrix(sources, null).rows.find((r) => r.serverId === serverId && r.accountId === accountId && r.toolName === toolName);
    const kind = row?.changed === 'since-allowed' ? 'since-allowed' : 'since-listed';
    let before: ContractVersion | undefined;
    if (kind === 'since-allowed') {
      const hash = pinnedHash(serverId, accountId, toolName);
      before = hash ? listings.version(serverId, accountId, toolName, hash) : undefined;
    } else {
      before = listings.unreviewed(serverId, accountId).find((c) => c.toolName === toolName)?.before ?? versions.at(-2);
    }
    if (!row || row.changed === 'none') throw new WardenError('NOT_FOUND', `toolName: ${toolName} on ${tool.serverLabel} (${tool.accountLabel}) has not changed`);
    const empty: ContractVersion = { tool: { name: toolName, inputSchema: {}, contractHash: '' }, instructions: null, firstSeenAt: 0 };
    const diff = contractDiff(before ?? empty, after);
    return {
      serverId,
      accountId,
      toolName,
      serverLabel: tool.serverLabel ?? serverId,
      accountLabel: tool.accountLabel ?? accountId,
      kind,
      afterSeenAt: after.firstSeenAt,
      beforeSeenAt: before?.firstSeenAt ?? null,
      beforeKnown: before !== undefined,
      fields: diff.fields,
      summary: before ? diff.summary : ['The version you allowed is no longer kept, so only the one listed now can be shown.'],
      effective: row.effective,
      explanation: row.explanation,
    };
  }

  async function resolveChange(serverId: string, accountId: string, toolName: string, action: 'keep-asking' | 'allow-new' | 'disable') {
    const detail = changeDetail(serverId, accountId, toolName);
    // Keeping a tool that was never allowed at Ask changes no rule: the person has seen the change.
    const keepsRules = action === 'keep-asking' && detail.kind === 'since-listed';
    const change: PermissionChange = { scope: 'tool', serverId, accountId, toolName, mode: action === 'allow-new' ? 'allow' : action === 'disable' ? 'disabled' : 'ask' };
    if (action === 'allow-new') {
      await confirm(newVersionConfirmation({ serverId, accountId, toolName, summary: detail.summary, sinceAllowed: detail.kind === 'since-allowed' }, names));
    }
    if (!keepsRules) {
      const r = await policy.set(change, pinFor(change), 'user');
      emitChanged(r.ruleId, 'tool');
    }
    const version = listings.versions(serverId, accountId, toolName).at(-1);
    if (version) listings.markReviewed(serverId, accountId, toolName, version.tool.contractHash);
    const row = buildMatrix(sources, null).rows.find((x) => x.serverId === serverId && x.accountId === accountId && x.toolName === toolName);
    return { action, effective: row?.effective ?? ('ask' as const), explanation: row?.explanation ?? '' };
  }

  // ---- accounts ------------------------------------------------------------------------------
  async function setActive(serverId: string, accountId: string) {
    const def = servers.getServer(serverId);
    const account = servers.accountsOf(serverId).find((a) => a.id === accountId);
    if (!def) throw new WardenError('NOT_FOUND', `serverId: no server "${serverId}"`);
    if (!account) throw new WardenError('NOT_FOUND', `accountId: ${def.name} has no account "${accountId}"`);
    const waiting = gate.pending().filter((o) => o.identity.serverId === serverId && o.identity.accountId !== accountId);
    const { from: previous } = await gateModule.switchAccount({ serverId, accountId, conversationId: null, accountLabel: account.label });
    const cancelled = waiting.filter((o) => gate.getLive(o.operationId)?.state !== 'awaiting_approval');
    const byAccount = new Map<string, number>();
    for (const o of cancelled) byAccount.set(o.labels.account, (byAccount.get(o.labels.account) ?? 0) + 1);
    const consequences = [...byAccount].map(([label, n]) => `${n} pending approval${n === 1 ? '' : 's'} for ${label} ${n === 1 ? 'was' : 'were'} cancelled`);
    const message = `${account.label} is now the active account of ${def.name}: its tools are the ones offered. ${consequences.length ? `${consequences.join('; ')}.` : 'Nothing was waiting for approval on the other accounts.'}`;
    return { serverId, accountId, previousAccountId: previous, cancelled: cancelled.length, message };
  }

  /** The active account of a server in one conversation, or in all without a choice of their own (null; the `accounts:switch` channel). */
  async function switchInConversation(conversationId: string | null, serverId: string, accountId: string) {
    const def = servers.getServer(serverId);
    if (!def) throw new WardenError('NOT_FOUND', `serverId: no server "${serverId}"`);
    const account = servers.accountsOf(serverId).find((a) => a.id === accountId);
    if (!account) {
      const elsewhere = servers.definitions().find((d) => servers.accountsOf(d.id).some((a) => a.id === accountId));
      if (elsewhere) throw new WardenError('VALIDATION_FAILED', `accountId: account "${accountId}" belongs to server "${elsewhere.id}", not "${serverId}"`);
      throw new WardenError('NOT_FOUND', `accountId: no account "${accountId}"`);
    }
    const { from } = await gateModule.switchAccount({ serverId, accountId, conversationId, accountLabel: account.label });
    events.emit('accounts:switched', { conversationId, serverId, accountId, previousAccountId: from });
    return { conversationId, serverId, accountId, previousAccountId: from };
  }

  async function removalImpact(accountId: string) {
    const def = servers.definitions().find((d) => servers.accountsOf(d.id).some((a) => a.id === accountId));
    if (!def) throw new WardenError('NOT_FOUND', `accountId: no account "${accountId}"`);
    const account = servers.accountsOf(def.id).find((a) => a.id === accountId)!;
    const view = (await servers.listAccounts(def.id)).find((a) => a.id === accountId);
    const secrets = (view?.secrets ?? []).filter((s) => s.hasSecret).map((s) => s.name);
    const state = policy.current();
    const rules = state.user.filter((r) => 'accountId' in r.scope && r.scope.serverId === def.id && r.scope.accountId === accountId).length;
    const overrides = state.conversation.filter((r) => r.serverId === def.id && r.accountId === accountId).length;
    const pending = gate.pending().filter((o) => o.identity.serverId === def.id && o.identity.accountId === accountId).length;
    const oauth = def.transport === 'http' && def.auth.kind === 'oauth';
    const blocked = servers.accountsOf(def.id).length <= 1 ? `${account.label} is the only account of ${def.name}; remove the server instead` : null;
    const lines = [
      secrets.length || oauth
        ? `Its secrets in your system keychain are deleted${secrets.length ? `: ${secrets.join(', ')}` : ''}${oauth ? `${secrets.length ? ', and' : ':'} its sign-in (revoked at ${new URL(def.url).host} first)` : ''}.`
        : 'It has no secrets in your keychain.',
      rules ? `Its ${rules} permission rule${rules === 1 ? ' is' : 's are'} deleted.` : 'It has no permission rules of its own.',
      ...(overrides ? [`${overrides} conversation override${overrides === 1 ? ' is' : 's are'} deleted.`] : []),
      ...(pending ? [`${pending} call${pending === 1 ? '' : 's'} waiting for approval will not run.`] : []),
      `Rules for every account of ${def.name} stay.`,
    ];
    return { accountId, serverLabel: def.name, accountLabel: account.label, secrets, rules, conversationOverrides: overrides, pendingApprovals: pending, blocked, lines };
  }

  const handlers: PermissionsHandlers = {
    'permissions:matrix': ({ conversationId, search, limit }) => firstRowsOf(buildMatrix(sources, conversationId, search), limit),
    'permissions:check': ({ serverId, accountId, toolName, conversationId, arguments: args, draft }) => {
      const { tool } = toolFor(serverId, accountId, toolName);
      let state = current();
      if (draft) state = PolicyStore.apply(state, { scope: 'tool-constraint', serverId, accountId: draft.anyAccount ? null : accountId, toolName, constraints: draft.constraints, mode: draft.mode }, draft.mode === 'allow' ? { contractHash: tool.contractHash, endpointHash: tool.endpointHash } : null).next;
      const verdict = gate.simulate({ serverId, accountId, toolName, conversationId, arguments: args }, { state, tool });
      return { outcome: verdict.outcome, reason: verdict.reason, summary: verdict.summary };
    },
    'permissions:tool-schema': ({ serverId, accountId, toolName }) => {
      const { tool, source } = toolFor(serverId, accountId, toolName);
      return { inputSchema: tool.inputSchema, source };
    },
    'permissions:set': (change) => gateModule.setPermission(change),
    'permissions:revoke': ({ ruleId }) => gateModule.revokePermission(ruleId),
    'permissions:set-many': ({ changes }) => setMany(changes),
    'permissions:change-detail': ({ serverId, accountId, toolName }) => changeDetail(serverId, accountId, toolName),
    'permissions:resolve-change': ({ serverId, accountId, toolName, action }) => resolveChange(serverId, accountId, toolName, action),
    'permissions:choose-folder': async ({ title }) => {
      if (!options.chooseFolder) throw new WardenError('UNSUPPORTED', 'This window has no folder chooser; type the folder instead');
      return { path: await options.chooseFolder({ title: title ?? 'Choose a folder for this rule' }) };
    },
    'accounts:set-active': ({ serverId, accountId }) => setActive(serverId, accountId),
    'accounts:switch': ({ conversationId, serverId, accountId }) => switchInConversation(conversationId, serverId, accountId),
    'accounts:removal-impact': ({ accountId }) => removalImpact(accountId),
  };

  return {
    handlers,
    listings,
    ready,
    async close() {
      offTools();
      offServers();
      await listings.flush();
    },
  };
}
