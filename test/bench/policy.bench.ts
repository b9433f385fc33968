/**
 * decide() with 10,000 rules over 1,000 tools: median and p99 microseconds per decision.
 * Target: p99 under 50 µs. Rules are indexed by (server, account, tool) at compile time,
 * so a decision costs a handful of map lookups regardless of how many rules exist.
 */
import { decide } from '../../electron/core/policy/engine';
import type { ArgumentConstraint, ConversationOverride, OrgRule, PolicyContext, PolicyRequest, PolicyState, UserRule } from '../../shared/domain/policy';
import { percentiles, type BenchModule } from './harness';

/** Small deterministic PRNG so every run decides the same workload. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function buildWorkload() {
  const rand = prng(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const servers = Array.from({ length: 20 }, (_, i) => `server-${i}`);
  const accounts = ['work', 'personal'];
  const tools = servers.flatMap((s) => Array.from({ length: 50 }, (_, i) => ({ serverId: s, toolName: `tool_${i}` }))); // 1,000 tools
  const modes = ['allow', 'ask', 'disabled'] as const;
  const user: UserRule[] = [];
  const conversation: ConversationOverride[] = [];
  const organization: OrgRule[] = [];
  let id = 0;
  const constraintsFor = (): ArgumentConstraint[] =>
    pick([
      [{ op: 'pathUnder', field: 'path', value: `/project/${Math.floor(rand() * 20)}` }],
      [{ op: 'oneOf', field: 'repo', value: ['acme/a', 'acme/b', 'acme/c'] }],
      [{ op: 'matches', field: 'branch', value: 'feature/**' }],
      [{ op: 'max', field: 'n', value: 100 }, { op: 'maxLength', field: 'text', value: 200 }],
    ]);
  for (const t of tools) {
    for (const a of accounts) {
      user.push({ id: `r${id++}`, scope: { kind: 'tool', serverId: t.serverId, accountId: a, toolName: t.toolName }, mode: pick(modes), pin: { contractHash: 'c', endpointHash: 'e' } });
      for (let k = 0; k < 3; k++) {
        user.push({ id: `r${id++}`, scope: { kind: 'tool-constraint', serverId: t.serverId, accountId: a, toolName: t.toolName, constraints: constraintsFor() }, mode: pick(modes), pin: null });
      }
    }
  }
  for (const s of servers) for (const a of accounts) user.push({ id: `r${id++}`, scope: { kind: 'server', serverId: s, accountId: a }, mode: pick(modes), pin: null });
  user.push({ id: `r${id++}`, scope: { kind: 'global' }, mode: 'ask', pin: null });
  while (user.length + conversation.length + organization.length < 10_000) {
    const t = pick(tools);
    if (organization.length < 100) organization.push({ id: `o${id++}`, serverId: t.serverId, accountId: null, toolName: t.toolName, mode: pick(['forbid', 'ask', 'allow']) });
    else conversation.push({ id: `c${id++}`, conversationId: `conv-${Math.floor(rand() * 200)}`, serverId: t.serverId, accountId: null, toolName: rand() < 0.5 ? t.toolName : null, mode: pick(['allow', 'disabled', 'ask']), pin: null });
  }
  const state: PolicyState = { organization, conversation, user, safeMode: false };
  const requests: Array<{ req: PolicyRequest; ctx: PolicyContext }> = Array.from({ length: 5_000 }, () => {
    const t = pick(tools);
    return {
      req: {
        serverId: t.serverId,
        accountId: pick(accounts),
        toolName: t.toolName,
        conversationId: rand() < 0.5 ? `conv-${Math.floor(rand() * 200)}` : null,
        arguments: { path: `/project/${Math.floor(rand() * 20)}/x/../y.txt`, repo: pick(['acme/a', 'acme/z']), branch: pick(['feature/x', 'main']), n: Math.floor(rand() * 200), text: 'hello' },
      },
      ctx: { tool: { contractHash: rand() < 0.9 ? 'c' : 'changed', endpointHash: 'e' }, paths: 'posix' },
    };
  });
  return { state, requests, ruleCount: user.length + conversation.length + organization.length, toolCount: tools.length };
}

const bench: BenchModule = {
  title: 'Policy engine: decide() with 10,000 rules over 1,000 tools',
  async run(report) {
    const { state, requests, ruleCount, toolCount } = buildWorkload();
    if (ruleCount !== 10_000 || toolCount !== 1_000) throw new Error(`workload has ${ruleCount} rules / ${toolCount} tools`);
    // Warm up (includes the one-time compile of the rule index).
    const compileStart = process.hrtime.bigint();
    decide(requests[0]!.req, state, requests[0]!.ctx);
    const compileUs = Number(process.hrtime.bigint() - compileStart) / 1000;
    for (let i = 0; i < 20_000; i++) {
      const w = requests[i % requests.length]!;
      decide(w.req, state, w.ctx);
    }
    const samples: number[] = [];
    const counts = { allow: 0, ask: 0, deny: 0 };
    for (let i = 0; i < 100_000; i++) {
      const w = requests[i % requests.length]!;
      const t0 = process.hrtime.bigint();
      const d = decide(w.req, state, w.ctx);
      samples.push(Number(process.hrtime.bigint() - t0) / 1000);
      counts[d.decision]++;
    }
    const [median, p99] = percentiles(samples, [50, 99]);
    report({ name: 'policy.decide.compile_once', value: compileUs, unit: 'µs' });
    report({ name: 'policy.decide.median', value: median!, unit: 'µs/decision' });
    report({ name: 'policy.decide.p99', value: p99!, unit: 'µs/decision', target: 'p99 < 50 µs', met: p99! < 50 });
    console.log(`  (decisions: ${counts.allow} allow, ${counts.ask} ask, ${counts.deny} deny over ${samples.length} samples)`);
  },
};
export default bench;
