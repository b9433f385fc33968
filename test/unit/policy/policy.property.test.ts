import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decide } from '../../../electron/core/policy';
import type { ArgumentConstraint, ConversationOverride, OrgRule, PolicyContext, PolicyRequest, PolicyState, UserRule } from '../../../shared/domain/policy';

const servers = ['s1', 's2'];
const accounts = ['a1', 'a2'];
const tools = ['t1', 't2'];
const modeArb = fc.oneof(fc.constantFrom('allow', 'ask', 'disabled'), fc.constantFrom('Deny', 'ALLOW', '', null, 7));

const userRuleArb: fc.Arbitrary<UserRule> = fc.record({
  id: fc.constantFrom('r1', 'r2', 'r3'),
  mode: modeArb,
  pin: fc.option(fc.record({ contractHash: fc.constantFrom('c1', 'c2', null), endpointHash: fc.constantFrom('e1', 'e2', null) }), { nil: null }),
  scope: fc.oneof(
    fc.constant<UserRule['scope']>({ kind: 'global' }),
    fc.record({ kind: fc.constant('server' as const), serverId: fc.constantFrom(...servers), accountId: fc.constantFrom(...accounts, null) }),
    fc.record({ kind: fc.constant('tool' as const), serverId: fc.constantFrom(...servers), accountId: fc.constantFrom(...accounts, null), toolName: fc.constantFrom(...tools) }),
    fc.record({
      kind: fc.constant('tool-constraint' as const),
      serverId: fc.constantFrom(...servers),
      accountId: fc.constantFrom(...accounts, null),
      toolName: fc.constantFrom(...tools),
      constraints: fc.constantFrom<ArgumentConstraint[][]>(
        [{ op: 'pathUnder', field: 'path', value: '/p' }],
        [{ op: 'max', field: 'n', value: 3 }],
        [{ op: 'oneOf', field: 'n', value: [1, 2] }],
      ),
    }),
  ),
});
const orgArb: fc.Arbitrary<OrgRule> = fc.record({
  id: fc.constantFrom('x1', 'x2'),
  serverId: fc.constantFrom(...servers, null),
  accountId: fc.constantFrom(...accounts, null),
  toolName: fc.constantFrom(...tools, null),
  mode: fc.oneof(fc.constantFrom('forbid', 'ask', 'allow'), fc.constant('Forbid')),
});
const convArb: fc.Arbitrary<ConversationOverride> = fc.record({
  id: fc.constantFrom('x1', 'x2'),
  conversationId: fc.constantFrom('c1', 'c2'),
  serverId: fc.constantFrom(...servers),
  accountId: fc.constantFrom(...accounts, null),
  toolName: fc.constantFrom(...tools, null),
  mode: modeArb,
  pin: fc.constant(null),
});
const requestArb: fc.Arbitrary<PolicyRequest> = fc.record({
  serverId: fc.constantFrom(...servers),
  accountId: fc.constantFrom(...accounts),
  toolName: fc.constantFrom(...tools),
  conversationId: fc.constantFrom('c1', 'c2', null),
  arguments: fc.record({ path: fc.constantFrom('/p/x', '/p/../q', '/q'), n: fc.integer({ min: 0, max: 5 }) }),
});
const ctxArb: fc.Arbitrary<PolicyContext> = fc.record({
  tool: fc.option(fc.record({ contractHash: fc.constantFrom('c1', 'c2'), endpointHash: fc.constantFrom('e1', 'e2') }), { nil: undefined, freq: 8 }),
  paths: fc.constant('posix' as const),
});
const stateArb: fc.Arbitrary<PolicyState> = fc.record({
  organization: fc.array(orgArb, { maxLength: 3 }),
  conversation: fc.array(convArb, { maxLength: 4 }),
  user: fc.array(userRuleArb, { maxLength: 12 }),
  safeMode: fc.boolean(),
});

/** Deterministic permutation with duplicates: shuffled by the seed, some entries repeated. */
function permuteWithDuplicates<T>(list: T[], seed: number[]): T[] {
  const out = list.map((x, i) => ({ x, k: seed[i % Math.max(seed.length, 1)] ?? i }));
  out.sort((a, b) => a.k - b.k);
  const dupes = list.filter((_, i) => (seed[i] ?? 0) % 3 === 0);
  return [...out.map((o) => o.x), ...dupes];
}

describe('policy algebra (property tests)', () => {
  it('decisions are independent of rule order and duplicates', () => {
    fc.assert(
      fc.property(stateArb, requestArb, ctxArb, fc.array(fc.nat(100), { maxLength: 20 }), (s, r, c, seed) => {
        const shuffled: PolicyState = {
          organization: permuteWithDuplicates(s.organization, seed),
          conversation: permuteWithDuplicates(s.conversation, seed.slice().reverse()),
          user: permuteWithDuplicates(s.user, seed),
          safeMode: s.safeMode,
        };
        const a = decide(r, s, c);
        const b = decide(r, shuffled, c);
        expect({ decision: b.decision, layer: b.layer, ruleId: b.ruleId, pin: b.pin }).toEqual({ decision: a.decision, layer: a.layer, ruleId: a.ruleId, pin: a.pin });
      }),
      { numRuns: 1000 },
    );
  });

  it('a forbid at a higher layer always wins', () => {
    fc.assert(
      fc.property(stateArb, requestArb, ctxArb, fc.constantFrom('org', 'conversation'), (s, r, c, where) => {
        const forced: PolicyState =
          where === 'org'
            ? { ...s, organization: [...s.organization, { id: 'forbid', serverId: r.serverId, accountId: null, toolName: r.toolName, mode: 'forbid' }] }
            : {
                ...s,
                conversation: [...s.conversation, { id: 'off', conversationId: r.conversationId ?? 'c1', serverId: r.serverId, accountId: r.accountId, toolName: r.toolName, mode: 'disabled', pin: null }],
              };
        const req = where === 'conversation' ? { ...r, conversationId: r.conversationId ?? 'c1' } : r;
        expect(decide(req, forced, c).decision).toBe('deny');
      }),
      { numRuns: 1000 },
    );
  });

  it('adding a rule at a lower layer never loosens an organization ask cap', () => {
    fc.assert(
      fc.property(stateArb, requestArb, ctxArb, userRuleArb, (s, r, c, extra) => {
        const capped: PolicyState = { ...s, organization: [{ id: 'cap', serverId: null, accountId: null, toolName: null, mode: 'ask' }] };
        const d = decide(r, { ...capped, user: [...capped.user, extra] }, c);
        expect(d.decision).not.toBe('allow');
      }),
      { numRuns: 500 },
    );
  });

  it('is deterministic: the same inputs always give the same output', () => {
    fc.assert(
      fc.property(stateArb, requestArb, ctxArb, (s, r, c) => {
        expect(decide(r, structuredClone(s), c)).toEqual(decide(r, s, c));
      }),
      { numRuns: 300 },
    );
  });
});
