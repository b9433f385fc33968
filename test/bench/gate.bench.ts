/**
 * Gate overhead on an allowed call: the gate (validation, canonical JSON, fingerprint, policy
 * twice, journal appends, snapshots) in front of an in-memory MCP server, vs the SDK client
 * calling the same server directly, measured in the same run with interleaved rounds.
 * Target (issue 3): ratio under 1.2.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { contractHash, endpointHash } from '../../electron/core/canonical';
import { Gate } from '../../electron/core/gate/gate';
import type { ToolCallResult, ToolDescriptor } from '../../electron/core/gate/ports';
import { MemoryJournal } from '../../electron/core/memory-journal';
import { systemClock } from '../../electron/core/ports';
import type { PolicyState } from '../../shared/domain/policy';
import { percentiles, type BenchModule } from './harness';

const bench: BenchModule = {
  title: 'Gate overhead: allowed call through the gate vs the SDK client directly (in-memory MCP server)',
  async run(report) {
    const server = new McpServer({ name: 'bench', version: '1.0.0' });
    server.registerTool('echo', { description: 'Echoes text', inputSchema: { text: z.string(), n: z.number().optional() } }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    const client = new Client({ name: 'bench-client', version: '1.0.0' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    await client.connect(b);
    try {
      const { tools } = await client.listTools();
      const t = tools[0]!;
      const descriptor: ToolDescriptor = {
        serverId: 'bench',
        accountId: 'default',
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema as Record<string, unknown>,
        contractHash: contractHash(t),
        endpointHash: endpointHash({ kind: 'stdio', command: 'node', args: ['bench.js'] }),
      };
      const registry = { getTool: (s: string, acc: string, n: string) => (s === 'bench' && acc === 'default' && n === 'echo' ? descriptor : undefined), listTools: () => [descriptor] };
      const executor = {
        call: async (target: { toolName: string }, args: Readonly<Record<string, unknown>>, options: { signal: AbortSignal }) =>
          (await client.callTool({ name: target.toolName, arguments: args as Record<string, unknown> }, undefined, { signal: options.signal })) as ToolCallResult,
      };
      const state: PolicyState = {
        organization: [],
        conversation: [],
        user: [{ id: 'allow-echo', scope: { kind: 'tool', serverId: 'bench', accountId: 'default', toolName: 'echo' }, mode: 'allow', pin: { contractHash: descriptor.contractHash, endpointHash: descriptor.endpointHash } }],
        safeMode: false,
      };
      const journal = new MemoryJournal(systemClock);
      const gate = new Gate({ journal, executor, registry, policy: { current: () => state }, clock: systemClock, scheduleExpiry: false });
      // The same gate over a journal that stores nothing: separates the gate's own work from the
      // in-memory journal's copying (which a durable ledger replaces anyway).
      const noJournal = { kind: 'memory' as const, append: async () => [], read: () => [], size: () => 0, close: async () => {} };
      const bareGate = new Gate({ journal: noJournal, executor, registry, policy: { current: () => state }, clock: systemClock, scheduleExpiry: false });
      const args = { text: 'hello from the bench', n: 7 };

      // The baseline is a cancellable call (as the gate's is): with an AbortController's signal.
      // Node 20's AbortSignal costs ~3 µs, which the gate avoids with its CallAbort, so the
      // no-signal call is reported too, for a ratio that gives the gate no credit for that.
      const direct = async () => {
        const ac = new AbortController();
        await client.callTool({ name: 'echo', arguments: args }, undefined, { signal: ac.signal });
      };
      const plain = async () => {
        await client.callTool({ name: 'echo', arguments: args });
      };
      let seq = 0;
      const bare = async () => {
        const op = await bareGate.request({ source: 'test', conversationId: 'bench', serverId: 'bench', accountId: 'default', toolName: 'echo', arguments: args, operationId: `bare-${seq++}` });
        if (op.state !== 'succeeded') throw new Error(`gate call ended ${op.state}: ${op.reason}`);
      };
      const gated = async () => {
        const op = await gate.request({ source: 'test', conversationId: 'bench', serverId: 'bench', accountId: 'default', toolName: 'echo', arguments: args, operationId: `op-${seq++}` });
        if (op.state !== 'succeeded') throw new Error(`gate call ended ${op.state}: ${op.reason}`);
      };

      // Warm up both paths, then interleave rounds so machine load hits both equally.
      for (let i = 0; i < 300; i++) {
        await direct();
        await gated();
        await bare();
        await plain();
      }
      const directSamples: number[] = [];
      const gateSamples: number[] = [];
      const bareSamples: number[] = [];
      const plainSamples: number[] = [];
      const rounds = 40;
      const perRound = 100;
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? [direct, gated, bare, plain] : [plain, bare, gated, direct];
        for (const fn of order) {
          const t0 = process.hrtime.bigint();
          for (let i = 0; i < perRound; i++) await fn();
          const us = Number(process.hrtime.bigint() - t0) / 1000 / perRound;
          (fn === direct ? directSamples : fn === gated ? gateSamples : fn === bare ? bareSamples : plainSamples).push(us);
        }
      }
      const [directMedian] = percentiles(directSamples, [50]);
      const [gateMedian] = percentiles(gateSamples, [50]);
      const [bareMedian] = percentiles(bareSamples, [50]);
      // Ratio per round (both measured back to back under the same load), then the median.
      const [ratio] = percentiles(gateSamples.map((g, i) => g / directSamples[i]!), [50]);
      const [bareRatio] = percentiles(bareSamples.map((g, i) => g / directSamples[i]!), [50]);
      const [plainMedian] = percentiles(plainSamples, [50]);
      const [plainRatio] = percentiles(gateSamples.map((g, i) => g / plainSamples[i]!), [50]);
      report({ name: 'gate.direct_sdk_call', value: directMedian!, unit: 'µs/call' });
      report({ name: 'gate.allowed_call', value: gateMedian!, unit: 'µs/call', baseline: 'gate.direct_sdk_call', ratio: ratio!, target: 'ratio < 1.2', met: ratio! < 1.2 });
      report({ name: 'gate.overhead', value: gateMedian! - directMedian!, unit: 'µs/call' });
      report({ name: 'gate.direct_sdk_call_no_signal', value: plainMedian!, unit: 'µs/call' });
      report({ name: 'gate.allowed_call_vs_no_signal_call', value: gateMedian!, unit: 'µs/call', baseline: 'gate.direct_sdk_call_no_signal', ratio: plainRatio! });
      report({ name: 'gate.allowed_call_no_journal', value: bareMedian!, unit: 'µs/call', baseline: 'gate.direct_sdk_call', ratio: bareRatio!, target: 'ratio < 1.2', met: bareRatio! < 1.2 });
      gate.close();
      bareGate.close();
    } finally {
      await client.close();
      await server.close();
    }
  },
};
export default bench;
