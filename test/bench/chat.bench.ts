/**
 * The chat loop's own cost, measured against a loopback provider and an in-process tool, through
 * the real core (gate, policy, in-memory journal, contract events, conversation store):
 *
 *  - Warden's time per tool round, excluding provider and tool time: from the end of one model
 *    reply stream to the start of the next request, minus the time spent inside the tool.
 *    Targets: median < 1 ms, p99 < 5 ms.
 *  - First streamed token: from the provider adapter having parsed the first text chunk to a
 *    contract-event listener holding it serialized (what main hands to `webContents.send`).
 *    Target: median < 5 ms.
 *  - The provider round trip of the same run (request sent → reply stream ended), for scale.
 *
 * The provider is this file's own minimal loopback SSE server and client, so the
 * benchmark depends on no test fixture: one HTTP POST per round on 127.0.0.1,
 * answered as `text/event-stream` with a text chunk, one tool call and a finish event.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createCore } from '../../electron/core/app-core';
import type { ToolDescriptor, ToolExecutor, ToolRegistry } from '../../electron/core/gate/ports';
import { ModelError, type ModelProvider, type ModelRequest, type ModelStreamEvent } from '../../electron/core/models/provider';
import { percentiles, type BenchModule } from './harness';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';

const TURNS = Number(process.env.WARDEN_BENCH_CHAT_TURNS ?? 40);
const ROUNDS = 5;

/** A loopback server speaking a tiny SSE protocol: round < ROUNDS → text + a tool call; else text only. */
function startProvider(): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { round, tool } = JSON.parse(body) as { round: number; tool: string };
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
      res.write(`data: ${JSON.stringify({ type: 'text', text: `Round ${round}. ` })}\n\n`);
      if (round < ROUNDS) res.write(`data: ${JSON.stringify({ type: 'tool', id: `c${round}`, name: tool, args: '{"text":"hi"}' })}\n\n`);
      res.end(`data: ${JSON.stringify({ type: 'finish', stop: round < ROUNDS ? 'tool_calls' : 'end_turn' })}\n\n`);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Timings the provider and the tool record for the bench. */
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const marks = { cpuStart: [] as number[], cpuEnd: [] as number[], providerStart: [] as number[], providerEnd: [] as number[], firstChunkAt: new Map<string, number>(), toolMs: [] as number[] };

/** A minimal SSE ModelProvider over fetch. */
class LoopbackModel implements ModelProvider {
  readonly kind = 'openai' as const;
  constructor(private readonly url: string) {}
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const round = request.messages.filter((m) => m.role === 'assistant').length + 1;
    marks.providerStart.push(performance.now());
    marks.cpuStart.push(cpuMs());
    try {
      const res = await fetch(this.url, { method: 'POST', body: JSON.stringify({ round, tool: request.tools[0]?.name ?? 'none' }), signal: request.signal });
      const decoder = new TextDecoder();
      let buffer = '';
      let first = true;
      for await (const chunk of res.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const line = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const event = JSON.parse(line.replace(/^data: /, '')) as { type: string; text?: string; id?: string; name?: string; args?: string; stop?: 'end_turn' | 'tool_calls' };
          if (event.type === 'text') {
            if (first) marks.firstChunkAt.set(event.text!, performance.now());
            first = false;
            yield { type: 'text-delta', text: event.text! };
          } else if (event.type === 'tool') yield { type: 'tool-call', call: { id: event.id!, name: event.name!, argumentsJson: event.args! } };
          else yield { type: 'finish', stopReason: event.stop!, usage: null };
        }
      }
    } catch (error) {
      if (request.signal.aborted) throw new ModelError('CANCELLED', 'stopped');
      throw error;
    } finally {
      marks.providerEnd.push(performance.now());
      marks.cpuEnd.push(cpuMs());
    }
  }
  async listModels() {
    return null;
  }
}

/** One always-allowed in-process tool. */
const tool: ToolDescriptor = Object.freeze({
  serverId: 'bench',
  accountId: 'default',
  name: 'echo',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  contractHash: 'c'.repeat(64),
  endpointHash: 'e'.repeat(64),
  serverLabel: 'Bench',
  accountLabel: 'Default',
});
const registry: ToolRegistry = { getTool: (s, a, n) => (s === 'bench' && a === 'default' && n === 'echo' ? tool : undefined), listTools: () => [tool] };
const executor: ToolExecutor = {
  async call(_target, args) {
    const t0 = performance.now();
    const result = { content: [{ type: 'text', text: `echo: ${String(args.text)}` }] };
    marks.toolMs.push(performance.now() - t0);
    return result;
  },
};

const bench: BenchModule = {
  title: 'Chat loop: Warden time per tool round and first-token latency (loopback provider, in-process tool)',
  async run(report) {
    const server = await startProvider();
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const model = new LoopbackModel(url);
    const core = createCore({
      confirmServerChange: confirmEveryServerChange,
      version: 'bench',
      gate: {
        registry,
        executor,
        initialPolicy: { user: [{ id: 'allow-echo', scope: { kind: 'tool', serverId: 'bench', accountId: 'default', toolName: 'echo' }, mode: 'allow', pin: null }] },
      },
      chat: { providers: () => ({ get: async () => model, list: async () => [{ providerId: 'loop', kind: 'openai', label: 'Loopback', defaultModel: 'loop' }] }), limits: { perToolPerMinute: 1e9 } },
    });
    const firstToken: number[] = [];
    const off = core.events.subscribe((event, payload) => {
      if (event !== 'chat:delta') return;
      const p = payload as { text: string };
      // What main does with an event: serialize it for the window.
      JSON.stringify({ event, payload });
      const at = marks.firstChunkAt.get(p.text);
      if (at !== undefined) {
        firstToken.push(performance.now() - at);
        marks.firstChunkAt.delete(p.text);
      }
    });
    const warden: number[] = [];
    const wardenCpu: number[] = [];
    const provider: number[] = [];
    try {
      for (let turn = 0; turn < TURNS + 5; turn++) {
        marks.providerStart.length = 0;
        marks.cpuStart.length = 0;
        marks.cpuEnd.length = 0;
        marks.providerEnd.length = 0;
        marks.toolMs.length = 0;
        const c = await core.chat.create({ providerId: 'loop', model: 'loop' });
        await core.chat.send(c.id, 'go');
        while (core.chat.get(c.id).state !== 'idle') await new Promise((r) => setImmediate(r));
        const calls = core.chat.get(c.id).messages.flatMap((m) => m.toolCalls);
        if (calls.length !== ROUNDS - 1 || calls.some((x) => x.status !== 'succeeded')) throw new Error(`bench turn went wrong: ${JSON.stringify(calls.map((x) => [x.status, x.why]))}`);
        if (turn < 5) continue; // warm-up
        for (let r = 0; r < ROUNDS; r++) provider.push(marks.providerEnd[r]! - marks.providerStart[r]!);
        for (let r = 0; r + 1 < ROUNDS; r++) {
          warden.push(marks.providerStart[r + 1]! - marks.providerEnd[r]! - (marks.toolMs[r] ?? 0));
          wardenCpu.push(marks.cpuStart[r + 1]! - marks.cpuEnd[r]! - (marks.toolMs[r] ?? 0));
        }
        await core.chat.delete(c.id);
      }
    } finally {
      off();
      await core.close();
      await new Promise((r) => server.close(r));
    }
    const [w50, w90, w99] = percentiles(warden, [50, 90, 99]);
    if (process.env.WARDEN_BENCH_DEBUG) console.log('warden ms sorted tail', [...warden].sort((a, b) => a - b).slice(-12).map((x) => x.toFixed(2)).join(' '), 'p90', w90);
    const [f50] = percentiles(firstToken.slice(5), [50]);
    const [p50] = percentiles(provider, [50]);
    report({ name: 'chat_provider_round_trip_median', value: p50!, unit: 'ms' });
    report({ name: 'chat_warden_time_per_tool_round_median', value: w50!, unit: 'ms', target: 'median < 1 ms', met: w50! < 1, baseline: 'chat_provider_round_trip_median', ratio: w50! / p50! });
    report({ name: 'chat_warden_time_per_tool_round_p99', value: w99!, unit: 'ms', target: 'p99 < 5 ms', met: w99! < 5 });
    // The same gap in CPU time of this process: what Warden itself spent, without the time the
    // shared machine kept it waiting (read the wall-clock p99 next to the load it ran under).
    const [c50, c99] = percentiles(wardenCpu, [50, 99]);
    report({ name: 'chat_warden_cpu_per_tool_round_median', value: c50!, unit: 'ms' });
    report({ name: 'chat_warden_cpu_per_tool_round_p99', value: c99!, unit: 'ms' });
    report({ name: 'chat_first_token_to_contract_median', value: f50!, unit: 'ms', target: 'median < 5 ms', met: f50! < 5, baseline: 'chat_provider_round_trip_median', ratio: f50! / p50! });
  },
};

export default bench;
