/**
 * The loosening rule (electron/core/policy/loosening.ts), checked against its definition: a change
 * loosens when some call is decided more permissively after it than before (deny < ask < allow).
 * The rule must see every such change even when Warden knows no tool at all (a disconnected
 * server, a tool added later): the decision comparison it is given here never finds anything,
 * so the shape of the rules alone has to catch each loosening. And a Disabled change never loosens.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decide } from '../../../electron/core/policy/engine';
import { changeMayLoosen, removalMayLoosen } from '../../../electron/core/policy/loosening';
import { PolicyStore } from '../../../electron/core/policy/store';
import type { PermissionChange } from '../../../shared/contract/permissions';
import type { Decision } from '../../../shared/domain/operations';
import type { GrantPin, PolicyState } from '../../../shared/domain/policy';

const servers = ['s1', 's2'];
const accounts = ['a', 'b'];
const tools = ['t1', 't2'];
const conversations = [null, 'c1'];
const pin: GrantPin = { contractHash: 'c', endpointHash: 'e' };
const RANK: Record<Decision, number> = { deny: 0, ask: 1, allow: 2 };

const mode = fc.constantFrom('allow' as const, 'ask' as const, 'disabled' as const);
const server = fc.constantFrom(...servers);
const account = fc.option(fc.constantFrom(...accounts), { nil: null });
const tool = fc.constantFrom(...tools);
const change: fc.Arbitrary<PermissionChange> = fc.oneof(
  mode.filter((m) => m !== 'allow').map((m) => ({ scope: 'global' as const, mode: m })),
  fc.record({ scope: fc.constant('server' as const), serverId: server, accountId: account, mode }),
  fc.record({ scope: fc.constant('tool' as const), serverId: server, accountId: account, toolName: tool, mode }),
  fc.record({ scope: fc.constant('conversation' as const), conversationId: fc.constant('c1'), serverId: server, accountId: account, toolName: fc.option(tool, { nil: null }), mode }),
);
/** A state built the way Warden builds one: rules set one change at a time, an optional Disabled default, a stray unreadable mode. */
const state: fc.Arbitrary<PolicyState> = fc
  .record({ changes: fc.array(change, { maxLength: 6 }), defaultDisabled: fc.boolean(), unreadable: fc.boolean() })
  .map(({ changes, defaultDisabled, unreadable }) => {
    let s: PolicyState = { organization: [], conversation: [], user: [], safeMode: false, ...(defaultDisabled ? { defaultMode: 'disabled' as const } : {}) };
    for (const c of changes) s = PolicyStore.apply(s, c, c.mode === 'allow' ? pin : null).next;
    if (unreadable && s.user[0]) s = { ...s, user: [{ ...s.user[0], mode: 'Block' }, ...s.user.slice(1)] };
    return s;
  });

/** Whether some call of the small universe is decided more permissively under `after`. */
function someCallLoosens(before: PolicyState, after: PolicyState): boolean {
  for (const serverId of servers)
    for (const accountId of accounts)
      for (const toolName of tools)
        for (const conversationId of conversations) {
          const req = { serverId, accountId, toolName, conversationId, arguments: {} };
          const ctx = { tool: { contractHash: 'c', endpointHash: 'e' }, paths: 'posix' as const };
          if (RANK[decide(req, after, ctx).decision] > RANK[decide(req, before, ctx).decision]) return true;
        }
  return false;
}

const seesNoTool = () => false;

describe('what counts as loosening', () => {
  it('every change that decides some call more permissively is judged loosening, even with no tool known', () => {
    fc.assert(
      fc.property(state, change, (before, c) => {
        const p = c.mode === 'allow' ? pin : null;
        const after = PolicyStore.apply(before, c, p).next;
        if (someCallLoosens(before, after)) expect(changeMayLoosen(c, p, before, seesNoTool)).toBe(true);
      }),
      { numRuns: 1500 },
    );
  });

  it('a Disabled change never decides a call more permissively, and is never judged loosening', () => {
    fc.assert(
      fc.property(state, change, (before, c) => {
        const disabled = { ...c, mode: 'disabled' as const };
        expect(someCallLoosens(before, PolicyStore.apply(before, disabled, null).next)).toBe(false);
        expect(changeMayLoosen(disabled, null, before, seesNoTool)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('removing a rule that decides some call more permissively is judged loosening, even with no tool known', () => {
    fc.assert(
      fc.property(state, fc.nat(), (before, pick) => {
        const rules = [...before.user, ...before.conversation];
        fc.pre(rules.length > 0);
        const ruleId = rules[pick % rules.length]!.id;
        const after = { ...before, user: before.user.filter((r) => r.id !== ruleId), conversation: before.conversation.filter((r) => r.id !== ruleId) };
        if (someCallLoosens(before, after)) expect(removalMayLoosen(ruleId, before, seesNoTool)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
