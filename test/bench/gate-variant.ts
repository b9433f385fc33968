/**
 * One variant of the gate-overhead benchmark, run in a process of its own by `gate.bench.ts`
 * (`node --import tsx test/bench/gate-variant.ts <variant>`), so no variant shares JIT state or
 * heap with another: in one process the SDK client's code saw several signal shapes and the
 * in-memory journals' growth made every variant pay for the others' garbage collection, which
 * swung the direct call alone between 14 and 38 µs from run to run.
 *
 * Every variant calls the same kind of in-memory MCP server (the SDK's McpServer with an `echo`
 * tool, over the SDK's InMemoryTransport). Prints one JSON line: `{ variant, samples }`, where
 * each sample is the mean µs/call of one round of `PER_ROUND` sequential calls.
 *
 * Variants:
 * - `direct`: the SDK client's callTool with an AbortController signal (a cancellable call, as the gate's is);
 * - `plain`: the SDK client's callTool with no signal;
 * - `gate`: `Gate.request` with Always Allow, the in-memory journal, the SDK client as executor;
 * - `bare`: the same gate over a journal that stores nothing (the gate's own work only);
 * - `floor`: only the steps the gate's guarantees require of every allowed call, written out by hand with none
 *   of the gate's bookkeeping (see `floorCall`). No gate keeping those guarantees can do less, so
 *   its ratio to `direct` is the lowest ratio reachable here with the in-memory journal;
 * - `floor_nostore`: the floor with a journal that stores nothing (what no journal can undercut).
 */
import { pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { CallAbort } from '../../electron/core/gate/call-abort';
import { contractHash, endpointHash } from '../../electron/core/canonical';
import { canonicalCopy, jsonCopy } from '../../electron/core/canonical/canonical-json';
import { fingerprint } from '../../electron/core/canonical/hashes';
import { MemoryHistory } from '../../electron/core/ledger/history';
import { Gate } from '../../electron/core/gate/gate';
import type { ToolCallResult, ToolDescriptor } from '../../electron/core/gate/ports';
import { MemoryJournal } from '../../electron/core/memory-journal';
import { decide } from '../../electron/core/policy/engine';
import { hostPaths } from '../../electron/core/paths/resolve';
import { systemClock, type Journal } from '../../electron/core/ports';
import type { PolicyState } from '../../shared/domain/policy';

export const VARIANTS = ['direct', 'plain', 'gate', 'bare', 'floor', 'floor_nostore'] as const;
export type Variant = (typeof VARIANTS)[number];

const WARMUP = Number(process.env.WARDEN_BENCH_WARMUP ?? 4000);
const ROUNDS = Number(process.env.WARDEN_BENCH_ROUNDS ?? 40);
const PER_ROUND = 100;

async function main(variant: Variant): Promise<void> {
  const server = new McpServer({ name: 'bench', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes text', inputSchema: { text: z.string(), n: z.number().optional() } }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  const client = new Client({ name: 'bench-client', version: '1.0.0' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  await client.connect(b);
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
  const registry = {
    getTool: (s: string, acc: string, n: string) => (s === 'bench' && acc === 'default' && n === 'echo' ? descriptor : undefined),
    listTools: () => [descriptor],
  };
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
  const args = { text: 'hello from the bench', n: 7 };
  let seq = 0;
  const nothing: Journal = { kind: 'memory', ordersOnCall: true, append: async () => [], size: () => 0, close: async () => {} };

  let call: () => Promise<void>;
  if (variant === 'direct') {
    call = async () => {
      const ac = new AbortController();
      await client.callTool({ name: 'echo', arguments: args }, undefined, { signal: ac.signal });
    };
  } else if (variant === 'plain') {
    call = async () => {
      await client.callTool({ name: 'echo', arguments: args });
    };
  } else if (variant === 'gate' || variant === 'bare') {
    const journal = variant === 'gate' ? new MemoryJournal(systemClock) : nothing;
    const history = journal instanceof MemoryJournal ? new MemoryHistory(() => journal.read()) : { find: async () => undefined, recordedOperations: async () => [] };
    const gate = new Gate({ journal, history, executor, registry, policy: { current: () => state }, clock: systemClock, scheduleExpiry: false });
    call = async () => {
      const op = await gate.request({ source: 'user', conversationId: 'bench', serverId: 'bench', accountId: 'default', toolName: 'echo', arguments: args });
      if (op.state !== 'succeeded') throw new Error(`gate call ended ${op.state}: ${op.reason}`);
    };
  } else {
    const journal = variant === 'floor' ? new MemoryJournal(systemClock) : nothing;
    const validator = new Ajv({ strict: false }).compile(descriptor.inputSchema);
    const decision = decide({ serverId: 'bench', accountId: 'default', toolName: 'echo', conversationId: 'bench', arguments: {} }, state, {
      tool: { contractHash: descriptor.contractHash, endpointHash: descriptor.endpointHash },
      paths: hostPaths().semantics,
      labels: { server: 'bench', account: 'default' },
    });
    if (decision.decision !== 'allow') throw new Error(`floor: the policy says ${decision.decision}`);
    const identity = Object.freeze({ serverId: 'bench', accountId: 'default', toolName: 'echo', endpointHash: descriptor.endpointHash, contractHash: descriptor.contractHash });
    // The required steps: a frozen canonical copy, ajv validation, the fingerprint, a policy
    // decision (the cached one, checked against its inputs as the gate's cache is), the four
    // journal records (proposed, approved, executing before the send; the outcome after), a
    // cancellable call, a frozen copy of the result, and a copy of the outcome for the caller.
    const floorCall = async (): Promise<void> => {
      const id = `floor-${seq++}`;
      const { canonical, copy } = canonicalCopy(args);
      if (!validator(copy)) throw new Error('floor: invalid arguments');
      const fp = fingerprint({ ...identity, canonicalArguments: canonical });
      if (registry.getTool('bench', 'default', 'echo')!.contractHash !== identity.contractHash) throw new Error('floor: tool changed');
      const now = Date.now();
      await journal.append([
        { type: 'op.proposed', payload: Object.freeze({ operationId: id, identity, arguments: copy, canonicalArguments: canonical, fingerprint: fp, requestedAt: now }) },
        { type: 'op.transition', payload: Object.freeze({ operationId: id, from: 'proposed', to: 'approved', reason: decision.reason, decision, fingerprint: fp }) },
        { type: 'op.transition', payload: Object.freeze({ operationId: id, from: 'approved', to: 'executing', reason: 'Sending', fingerprint: fp }) },
      ]);
      const abort = new CallAbort();
      const raw = await executor.call({ toolName: 'echo' }, copy, { signal: abort.signal });
      const result = Object.freeze({ isError: raw.isError === true, content: jsonCopy(raw.content as Array<Record<string, unknown>>, true) });
      void journal.append([{ type: 'op.transition', payload: Object.freeze({ operationId: id, from: 'executing', to: 'succeeded', reason: 'done', result }) }]);
      const out = { operationId: id, arguments: jsonCopy(copy, false), result: jsonCopy(result, false) };
      if (out.result.isError) throw new Error('floor: the tool reported an error');
    };
    call = floorCall;
  }

  for (let i = 0; i < WARMUP; i++) await call();
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < PER_ROUND; i++) await call();
    samples.push(Number(process.hrtime.bigint() - t0) / 1000 / PER_ROUND);
  }
  process.stdout.write(JSON.stringify({ variant, samples }) + '\n');
  await client.close();
  await server.close();
}

// Run only as a program (gate.bench.ts imports VARIANTS from here).
const variant = process.argv[2] as Variant | undefined;
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (variant === undefined || !VARIANTS.includes(variant)) {
    console.error(`unknown variant ${JSON.stringify(variant)}; expected one of ${VARIANTS.join(', ')}`);
    process.exit(2);
  }
  await main(variant);
}
