/**
 * The permission store: holds the current PolicyState (immutable, replaced on every change) and
 * journals every change with old value, new value, scope, time and source.
 *
 * It is the only writer of user and conversation rules. Tool results, server text and model
 * output have no path to it: changes come only from the contract (a person in the UI), the
 * managed organization file, or an import.
 */
import { createHash } from 'node:crypto';
import { journalEntry, type PolicyScopeRecord } from '../../../shared/domain/journal-events';
import type { ConversationOverride, GrantPin, OrgRule, PolicyState, RuleOrigin, UserRule } from '../../../shared/domain/policy';
import type { PermissionChange } from '../../../shared/contract/permissions';
import { WardenError } from '../../../shared/result';
import { canonicalJson } from '../canonical/canonical-json';
import type { Clock, Journal } from '../ports';
import { rootsRuleId } from './engine';

/** Who made a change, as recorded in the journal. */
export type ChangeSource = 'user' | 'organization' | 'import' | 'system';

/** The outcome of one change. */
export interface RuleChange {
  ruleId: string;
  scope: PolicyScopeRecord;
  old: Record<string, unknown> | null;
  new: Record<string, unknown> | null;
}

/** Options of the store. */
export interface PolicyStoreOptions {
  journal: Journal;
  clock: Clock;
  initial?: Partial<PolicyState>;
  /** Persists user/conversation rules (settings); awaited before listeners hear about a change. */
  persist?: (state: PolicyState) => void | Promise<void>;
}

const EMPTY: PolicyState = { organization: [], conversation: [], user: [], safeMode: false };

/** The current policy plus the journaled ways to change it. */
export class PolicyStore {
  private state: PolicyState;
  private readonly listeners = new Set<(change: RuleChange) => void | Promise<void>>();

  constructor(private readonly options: PolicyStoreOptions) {
    this.state = freezeState(structuredClone({ ...EMPTY, ...options.initial }));
  }

  /** The current state (frozen; replaced, never mutated). */
  current(): PolicyState {
    return this.state;
  }

  /** Finds a user or conversation rule by id. */
  find(ruleId: string): UserRule | ConversationOverride | undefined {
    return this.state.user.find((r) => r.id === ruleId) ?? this.state.conversation.find((r) => r.id === ruleId);
  }

  /** The rule id a change at this scope writes to (one rule per scope, so a set replaces). */
  static ruleIdFor(change: PermissionChange): string {
    switch (change.scope) {
      case 'global':
        return 'user:global';
      case 'server':
        return `user:server:${change.serverId}:${change.accountId ?? '*'}`;
      case 'tool':
        return `user:tool:${change.serverId}:${change.accountId ?? '*'}:${change.toolName}`;
      case 'tool-constraint':
        return `user:constraint:${change.serverId}:${change.accountId ?? '*'}:${change.toolName}:${createHash('sha256').update(canonicalJson(change.constraints)).digest('hex').slice(0, 16)}`;
      case 'conversation':
        return `conv:${change.conversationId}:${change.serverId}:${change.accountId ?? '*'}:${change.toolName ?? '*'}`;
    }
  }

  /**
   * Sets a mode at a scope, pinning an allow to the hashes given, and journals old/new.
   *
   * Why: one rule per scope keeps "set" idempotent and "revoke" unambiguous; pins make Always
   * Allow fall back to ask when the tool or server changes. `origin` records who put the rule in
   * place (the demo's seed says so); by default a person's change is the person's and an import's
   * is the import's.
   */
  async set(change: PermissionChange, pin: GrantPin | null, source: ChangeSource, origin: RuleOrigin | undefined = originOf(source)): Promise<RuleChange> {
    const ruleId = PolicyStore.ruleIdFor(change);
    const old = this.find(ruleId) ?? null;
    const { next, rule } = PolicyStore.apply(this.state, change, pin, origin, this.options.clock.now());
    return this.commit(next, { ruleId, scope: scopeRecordOf(rule), old: old ? plain(old) : null, new: plain(rule) }, source);
  }

  /**
   * The state after a change, without committing it (pure).
   *
   * Why: the permission handlers compare effective decisions before and after to tell whether a
   * change loosens anything (and so needs the person's confirmation in a native dialog).
   */
  static apply(state: PolicyState, change: PermissionChange, pin: GrantPin | null, origin: RuleOrigin | undefined = 'person', at?: number): { next: PolicyState; rule: UserRule | ConversationOverride } {
    const ruleId = PolicyStore.ruleIdFor(change);
    const rulePin = change.mode === 'allow' ? pin : null;
    if (change.scope === 'conversation') {
      const rule: ConversationOverride = { id: ruleId, conversationId: change.conversationId, serverId: change.serverId, accountId: change.accountId, toolName: change.toolName, mode: change.mode, pin: rulePin };
      return { next: { ...state, conversation: [...state.conversation.filter((r) => r.id !== ruleId), rule] }, rule };
    }
    const scope: UserRule['scope'] =
      change.scope === 'global'
        ? { kind: 'global' }
        : change.scope === 'server'
          ? { kind: 'server', serverId: change.serverId, accountId: change.accountId }
          : change.scope === 'tool'
            ? { kind: 'tool', serverId: change.serverId, accountId: change.accountId, toolName: change.toolName }
            : { kind: 'tool-constraint', serverId: change.serverId, accountId: change.accountId, toolName: change.toolName, constraints: change.constraints };
    const rule: UserRule = { id: ruleId, scope, mode: change.mode, pin: rulePin, ...(origin ? { setBy: origin } : {}), ...(at !== undefined ? { setAt: at } : {}) };
    return { next: { ...state, user: [...state.user.filter((r) => r.id !== ruleId), rule] }, rule };
  }

  /** Removes a user or conversation rule; journals it. Returns null when no such rule exists. */
  async revoke(ruleId: string, source: ChangeSource): Promise<RuleChange | null> {
    const old = this.find(ruleId);
    if (!old) return null;
    const next: PolicyState = { ...this.state, user: this.state.user.filter((r) => r.id !== ruleId), conversation: this.state.conversation.filter((r) => r.id !== ruleId) };
    return this.commit(next, { ruleId, scope: scopeRecordOf(old), old: plain(old), new: null }, source);
  }

  /** Replaces the organization layer (from the managed policy file); journaled per rule. */
  async setOrganization(rules: OrgRule[]): Promise<void> {
    const before = new Map(this.state.organization.map((r) => [r.id, r]));
    const after = new Map(rules.map((r) => [r.id, r]));
    this.state = freezeState({ ...this.state, organization: structuredClone(rules) });
    const at = this.options.clock.now();
    const entries = [];
    for (const id of new Set([...before.keys(), ...after.keys()])) {
      const o = before.get(id) ?? null;
      const n = after.get(id) ?? null;
      if (o && n && canonicalJson(o) === canonicalJson(n)) continue;
      const ref = (n ?? o)!;
      entries.push(
        journalEntry('policy.changed', {
          ruleId: id,
          scope: { kind: 'organization', serverId: ref.serverId, accountId: ref.accountId, toolName: ref.toolName, conversationId: null },
          old: o ? plain(o) : null,
          new: n ? plain(n) : null,
          source: 'organization',
          at,
        }),
      );
    }
    if (entries.length) await this.options.journal.append(entries);
    for (const l of this.listeners) await l({ ruleId: 'organization', scope: { kind: 'organization', serverId: null, accountId: null, toolName: null, conversationId: null }, old: null, new: null });
  }

  /**
   * Makes `accountId` the active account of a server (in one conversation, or everywhere else when
   * `conversationId` is null) and journals the switch. Rule listeners are not told: the caller
   * decides pending calls again, saying why (a switch is not a rule change).
   */
  async switchAccount(input: { serverId: string; conversationId: string | null; accountId: string; source: 'user' | 'system' }): Promise<{ from: string | null }> {
    const chosen = this.state.activeAccounts ?? [];
    const from = chosen.find((a) => a.serverId === input.serverId && a.conversationId === input.conversationId)?.accountId ?? null;
    const rest = chosen.filter((a) => !(a.serverId === input.serverId && a.conversationId === input.conversationId));
    this.state = freezeState({ ...this.state, activeAccounts: [...rest, { serverId: input.serverId, conversationId: input.conversationId, accountId: input.accountId }] });
    await this.options.journal.append([
      journalEntry('account.switched', { serverId: input.serverId, conversationId: input.conversationId, from, to: input.accountId, source: input.source, at: this.options.clock.now() }),
    ]);
    return { from };
  }

  /**
   * Forgets the active-account choices of a server whose account is not in `keep` (a removed
   * account, or every account of a removed server), so its other accounts are usable again.
   */
  forgetActiveAccounts(serverId: string, keep: (accountId: string) => boolean): void {
    const chosen = this.state.activeAccounts ?? [];
    const left = chosen.filter((a) => a.serverId !== serverId || keep(a.accountId));
    if (left.length !== chosen.length) this.state = freezeState({ ...this.state, activeAccounts: left });
  }

  /**
   * Turns a server's folder wall on or off: while on, a call of its tools with a path outside the
   * folders of its account asks first. Journaled and persisted like a rule; listeners hear it.
   * The caller confirms turning it off (a loosening) before calling this.
   */
  async setRootsEnforced(serverId: string, enforced: boolean, source: ChangeSource): Promise<RuleChange | null> {
    const current = this.state.enforcedRoots ?? [];
    const was = current.includes(serverId);
    if (was === enforced) return null;
    const next: PolicyState = { ...this.state, enforcedRoots: enforced ? [...current, serverId] : current.filter((id) => id !== serverId) };
    return this.commit(next, { ruleId: rootsRuleId(serverId), scope: { kind: 'server', serverId, accountId: null, toolName: null, conversationId: null }, old: { enforceRoots: was }, new: { enforceRoots: enforced } }, source);
  }

  /**
   * The folders (server, account) was given, as the roots service holds them. In memory (the
   * roots service keeps them on disk) and not journaled here: adding one needed the person's own
   * pick in the native chooser. The caller decides pending calls again.
   */
  setRootFolders(serverId: string, accountId: string, folders: readonly string[]): boolean {
    const all = this.state.rootFolders ?? [];
    const before = all.find((r) => r.serverId === serverId && r.accountId === accountId)?.folders ?? [];
    if (before.length === folders.length && before.every((f, i) => f === folders[i])) return false;
    const rest = all.filter((r) => !(r.serverId === serverId && r.accountId === accountId));
    this.state = freezeState({ ...this.state, rootFolders: folders.length ? [...rest, { serverId, accountId, folders: [...folders] }] : rest });
    return true;
  }

  /** Subscribes to changes (after they are journaled and persisted). */
  onChange(listener: (change: RuleChange) => void | Promise<void>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async commit(next: PolicyState, change: RuleChange, source: ChangeSource): Promise<RuleChange> {
    if (source !== 'user' && source !== 'import' && source !== 'system') throw new WardenError('INVALID_REQUEST', `source: ${String(source)} cannot change user rules`);
    this.state = freezeState(next);
    await this.options.journal.append([
      journalEntry('policy.changed', { ruleId: change.ruleId, scope: change.scope, old: change.old, new: change.new, source, at: this.options.clock.now() }),
    ]);
    await this.options.persist?.(this.state);
    for (const l of this.listeners) await l(change);
    return change;
  }
}

/** Who a change from `source` makes the rule's author, unless the caller says otherwise. */
function originOf(source: ChangeSource): RuleOrigin | undefined {
  return source === 'user' ? 'person' : source === 'import' ? 'import' : undefined;
}

function scopeRecordOf(rule: UserRule | ConversationOverride): PolicyScopeRecord {
  if ('conversationId' in rule) {
    return { kind: 'conversation', serverId: rule.serverId, accountId: rule.accountId, toolName: rule.toolName, conversationId: rule.conversationId };
  }
  const s = rule.scope;
  return {
    kind: s.kind,
    serverId: 'serverId' in s ? s.serverId : null,
    accountId: 'accountId' in s ? s.accountId : null,
    toolName: 'toolName' in s ? s.toolName : null,
    conversationId: null,
  };
}

function plain(v: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
}

function freezeState(state: PolicyState): PolicyState {
  const deep = (v: unknown): unknown => {
    if (v && typeof v === 'object' && !Object.isFrozen(v)) {
      for (const x of Object.values(v)) deep(x);
      Object.freeze(v);
    }
    return v;
  };
  return deep(state) as PolicyState;
}
