/**
 * The chat round on the path the app runs, timed at its boundaries.
 *
 * Runs: `createCore` assembled as electron/main/app.ts does — the durable ledger
 * `openLedgerForApp` opens, conversations, listings, roots and sampling folders on disk, settings
 * files — with a model provider added through `models:add-provider` and so the real adapter on
 * the official SDK (`@anthropic-ai/sdk`, then `openai`), talking to the loopback provider that
 * speaks each wire protocol (test/fixtures/models), and a real MCP server over stdio
 * (test/fixtures/servers/stamped-echo.ts) whose `echo` tool is allowed. Messages go through the
 * `chat:send-message` handler main binds to IPC; events are taken as main takes them and
 * serialized as Electron's IPC does (V8 serialization).
 * Stand-ins, and why: the keychain is a Map (the app's is the OS keychain, read at start and
 * when keys change, not on a round's path), the native dialog says yes (once, to allow `echo`), settings are `conf` files (electron-store is the same
 * library under Electron), and there is no window (the event is serialized, not sent).
 *
 * Each message makes TOOL_ROUNDS tool rounds and a final answer. Per tool round:
 *   Warden's time = (provider received request r+1) − (provider finished writing reply r)
 *                   − (tool answered − tool received)
 * The provider stamps its side in-process (`RecordedRequest.at`, `.endedAt`); the tool stamps
 * its own on the clock processes share (`performance.timeOrigin + performance.now()`). What is
 * left is all Warden: the SDK reading the stream, the adapter, the gate and its durable
 * `executing` record, the MCP client both ways, the conversation, and the next request.
 * First token: from the provider writing a reply's first event to the `chat:delta` event
 * serialized for the window.
 */
import { mkdtempSync, openSync, closeSync, fdatasyncSync, writeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serialize } from 'node:v8';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createCore, type WardenCore } from '../../electron/core/app-core';
import { openLedgerForApp } from '../../electron/core/ledger';
import type { ListableSecretStore } from '../../electron/core/secrets/keytar-secret-store';
import { openConfSettingsStore } from '../../electron/core/settings/conf-settings-store';
import type { Conversation } from '../../shared/contract/chat';
import { startAnthropicFixture, startOpenAIFixture, type ModelFixture } from '../fixtures/models';
import { confirmEveryServerChange } from '../host/standin-server-confirmer';
import { percentiles, type BenchModule, type Report } from './harness';

const TURNS = Number(process.env.WARDEN_BENCH_CHAT_TURNS ?? 60);
const WARM_UP = 5;
const TOOL_ROUNDS = 4;
const KEY = 'sk-bench-chat-0123456789';
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsxLoader = join(root, 'node_modules/tsx/dist/loader.mjs');
/** Events of each kind the core pushed (printed with WARDEN_BENCH_DEBUG set). */
const eventCounts = new Map<string, number>();
const STAMP = /⟦stamp (\d+\.\d+) (\d+\.\d+)⟧/;

class MapKeychain implements ListableSecretStore {
  private readonly values = new Map<string, string>();
  get = async (key: string) => this.values.get(key) ?? null;
  set = async (key: string, value: string) => void this.values.set(key, value);
  delete = async (key: string) => this.values.delete(key);
  keys = async (prefix: string) => [...this.values.keys()].filter((k) => k.startsWith(prefix));
}

/** The core as main assembles it, in a fresh user-data folder, with the stamped echo server connected and allowed. */
async function startApp(userData: string): Promise<{ core: WardenCore; echoName: (conversationId: string) => string }> {
  const { ledger, onSecretValue } = await openLedgerForApp(userData, { keychain: new MapKeychain() });
  const core = createCore({
    version: 'bench',
    ledger,
    dataFolder: userData,
    confirmServerChange: confirmEveryServerChange,
    // The per-tool rate cap (20 a minute) would stop a bench at its second message; every other limit is the app's.
    chat: { dataDir: join(userData, 'conversations'), limits: { perToolPerMinute: 1e9 } },
    listingsDir: join(userData, 'listings'),
    rootsDir: join(userData, 'roots'),
    sampling: { dir: join(userData, 'sampling') },
    servers: { settingsStore: openConfSettingsStore(userData), secrets: new MapKeychain(), onSecretValue },
    models: { settingsStore: openConfSettingsStore(userData, 'models') },
    connections: { reconnect: { maxAttempts: 0 } },
    // Main's native dialog, answered by the person: here it confirms allowing `echo`, once.
    gate: { prompter: { prompt: async () => 'approve' } },
  });
  await core.recovered;
  const added = await core.handlers['servers:add']({
    definition: { name: 'Stamped', transport: 'stdio', command: process.execPath, args: ['--import', tsxLoader, join(root, 'test/fixtures/servers/stamped-echo.ts')], env: [] },
    accountLabel: 'Bench',
  });
  const serverId = added.definition.id;
  const accountId = added.accounts[0]!.id;
  const status = await core.connections.connect(serverId, accountId);
  if (status.state !== 'connected') throw new Error(`chat bench: the stamped echo server did not connect: ${JSON.stringify(status)}`);
  await core.handlers['permissions:set']({ scope: 'tool', serverId, accountId, toolName: 'echo', mode: 'allow' });
  const echoName = (conversationId: string) => core.chat.tools(conversationId).find((t) => t.toolName === 'echo' && t.offered)!.modelName;
  return { core, echoName };
}

interface Samples {
  warden: number[];
  /** This process's CPU time over the same gap: what Warden spent, without the time a loaded machine kept it waiting. */
  wardenCpu: number[];
  beforeTool: number[];
  afterTool: number[];
  tool: number[];
  provider: number[];
  firstToken: number[];
}

/** Runs TURNS messages through one protocol and returns the boundary timings. */
async function measure(core: WardenCore, echoName: (id: string) => string, kind: 'anthropic' | 'openai', fixture: ModelFixture): Promise<Samples> {
  const { provider } = await core.handlers['models:add-provider']({ kind, label: `Loopback ${kind}`, baseUrl: fixture.baseUrl, apiKey: KEY });
  const out: Samples = { warden: [], wardenCpu: [], beforeTool: [], afterTool: [], tool: [], provider: [], firstToken: [] };
  let deltas: number[] = [];
  let idle: (() => void) | null = null;
  let watching = '';
  const off = core.events.subscribe((event, payload) => {
    // What main does with every event: hands it to webContents.send, which serializes it.
    serialize(payload);
    if (process.env.WARDEN_BENCH_DEBUG) eventCounts.set(event, (eventCounts.get(event) ?? 0) + 1);
    if (event === 'chat:delta' && (payload as { conversationId: string }).conversationId === watching) deltas.push(performance.now());
    if (event === 'chat:changed') {
      const p = payload as { conversationId: string; summary: { state: string } | null };
      if (p.conversationId === watching && p.summary?.state === 'idle') idle?.();
    }
  });
  try {
    for (let turn = 0; turn < TURNS + WARM_UP; turn++) {
      const c = (await core.handlers['chat:create']({ providerId: provider.providerId, model: 'bench-model' })) as Conversation;
      const name = echoName(c.id);
      for (let r = 0; r < TOOL_ROUNDS; r++) fixture.enqueue({ kind: 'reply', text: [`Round ${r}. `], toolCalls: [{ id: `call_${turn}_${r}`, name, argumentsJson: `{"text":"hi ${r}"}`, pieces: 1 }] });
      fixture.enqueue({ kind: 'reply', text: ['Done.'] });
      const from = fixture.completions().length;
      deltas = [];
      watching = c.id;
      const done = new Promise<void>((resolve) => (idle = resolve));
      await core.handlers['chat:send-message']({ conversationId: c.id, text: 'Echo four times' });
      await done;
      idle = null;
      const requests = fixture.completions().slice(from);
      const calls = core.chat.get(c.id).messages.flatMap((m) => m.toolCalls);
      if (requests.length !== TOOL_ROUNDS + 1 || calls.length !== TOOL_ROUNDS || calls.some((x) => x.status !== 'succeeded')) {
        throw new Error(`chat bench: turn ${turn} went wrong: ${requests.length} requests, ${JSON.stringify(calls.map((x) => [x.status, x.why]))}`);
      }
      if (turn >= WARM_UP) {
        for (let r = 0; r < TOOL_ROUNDS; r++) {
          const stamp = STAMP.exec(calls[r]!.resultText ?? '');
          if (!stamp) throw new Error(`chat bench: call ${r} has no stamp: ${calls[r]!.resultText}`);
          const received = Number(stamp[1]) - performance.timeOrigin;
          const answered = Number(stamp[2]) - performance.timeOrigin;
          const ended = requests[r]!.endedAt!;
          const next = requests[r + 1]!.at;
          out.beforeTool.push(received - ended);
          out.afterTool.push(next - answered);
          out.tool.push(answered - received);
          out.warden.push(next - ended - (answered - received));
          out.wardenCpu.push(requests[r + 1]!.cpuAt! - requests[r]!.cpuEndedAt!);
        }
        for (const [r, req] of requests.entries()) {
          out.provider.push(req.endedAt! - req.at);
          if (deltas[r] !== undefined) out.firstToken.push(deltas[r]! - req.firstEventAt!);
        }
      }
      await core.handlers['chat:delete']({ conversationId: c.id });
    }
  } finally {
    off();
  }
  return out;
}

/**
 * The official SDK alone against the same loopback provider and the same replies (one tool call
 * each), with its default HTTP client, no Warden: from the provider finishing a reply to the next
 * request arriving. What any client built on the official SDK pays per round on this machine, so
 * Warden's own time can be read beside it.
 */
async function sdkFloor(kind: 'anthropic' | 'openai', fixture: ModelFixture, rounds: number): Promise<number[]> {
  const tools = [{ name: 'echo', description: 'Echoes its text.', schema: { type: 'object' as const, properties: { text: { type: 'string' } } } }];
  const anthropic = new Anthropic({ apiKey: KEY, baseURL: fixture.baseUrl, maxRetries: 0 });
  const openai = new OpenAI({ apiKey: KEY, baseURL: fixture.baseUrl, maxRetries: 0 });
  const from = fixture.completions().length;
  for (let r = 0; r < rounds + 1; r++) {
    fixture.enqueue({ kind: 'reply', text: [`Round ${r}. `], toolCalls: [{ id: `floor_${r}`, name: 'echo', argumentsJson: `{"text":"hi ${r}"}`, pieces: 1 }] });
    if (kind === 'anthropic') {
      const stream = await anthropic.messages.create({ model: 'bench-model', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: 'Echo' }], tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.schema })) });
      for await (const event of stream) void event;
    } else {
      const stream = await openai.chat.completions.create({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'Echo' }], tools: tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.schema } })) });
      for await (const chunk of stream) void chunk;
    }
  }
  const requests = fixture.completions().slice(from);
  return requests.slice(1).map((next, i) => next.at - requests[i]!.endedAt!);
}

/** One record-sized write + fdatasync on the same disk, in the same run: the sync any durable call pays at least. */
function syncFloor(dir: string, n = 200): number[] {
  const fd = openSync(join(dir, 'floor.bin'), 'w');
  const record = Buffer.alloc(800, 'x');
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      writeSync(fd, record);
      fdatasyncSync(fd);
      out.push(performance.now() - t0);
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

function reportProtocol(report: Report, kind: string, s: Samples): void {
  const p = (xs: number[], q: number) => percentiles(xs, [q])[0]!;
  const prefix = `chat.${kind}.`;
  report({ name: `${prefix}provider_reply_median`, value: p(s.provider, 50), unit: 'ms' });
  report({ name: `${prefix}tool_median`, value: p(s.tool, 50), unit: 'ms' });
  report({ name: `${prefix}warden_before_tool_median`, value: p(s.beforeTool, 50), unit: 'ms (reply end → tool has the call)' });
  report({ name: `${prefix}warden_after_tool_median`, value: p(s.afterTool, 50), unit: 'ms (tool answered → next request arrives)' });
  report({ name: `${prefix}warden_time_per_tool_round_median`, value: p(s.warden, 50), unit: 'ms', target: 'median < 2 ms', met: p(s.warden, 50) < 2 });
  report({ name: `${prefix}warden_time_per_tool_round_p99`, value: p(s.warden, 99), unit: 'ms', target: 'p99 < 10 ms', met: p(s.warden, 99) < 10 });
  report({ name: `${prefix}warden_cpu_per_tool_round_median`, value: p(s.wardenCpu, 50), unit: 'ms CPU of the core process' });
  report({ name: `${prefix}warden_cpu_per_tool_round_p99`, value: p(s.wardenCpu, 99), unit: 'ms CPU of the core process' });
  report({ name: `${prefix}first_token_to_window_event_median`, value: p(s.firstToken, 50), unit: 'ms', target: 'median < 5 ms', met: p(s.firstToken, 50) < 5 });
  report({ name: `${prefix}tool_rounds_measured`, value: s.warden.length, unit: 'rounds' });
}

const bench: BenchModule = {
  title: 'Chat round on the real path, beside the official SDK alone: createCore with the durable ledger and conversations on disk, the official SDK adapters (Anthropic, OpenAI) against the loopback provider, a stdio MCP server (keychain a Map, dialogs say yes, no window)',
  async run(report) {
    const userData = mkdtempSync(join(tmpdir(), 'warden-bench-chat-'));
    const anthropic = await startAnthropicFixture({ apiKey: KEY, models: [{ id: 'bench-model' }] });
    const openai = await startOpenAIFixture({ apiKey: KEY, models: [{ id: 'bench-model' }] });
    const { core, echoName } = await startApp(userData);
    try {
      const floor = syncFloor(userData);
      const [f50] = percentiles(floor, [50]);
      report({ name: 'chat.floor_write_fdatasync_median', value: f50!, unit: 'ms (one record write + fdatasync, same disk, same run)' });
      for (const [kind, fixture] of [['anthropic', anthropic], ['openai', openai]] as const) {
        reportProtocol(report, kind, await measure(core, echoName, kind, fixture));
        const sdk = await sdkFloor(kind, fixture, TURNS * TOOL_ROUNDS);
        const [m, q99] = percentiles(sdk, [50, 99]);
        report({ name: `chat.${kind}.sdk_alone_per_round_median`, value: m!, unit: "ms (the official SDK with no Warden: this machine's floor for a round)" });
        report({ name: `chat.${kind}.sdk_alone_per_round_p99`, value: q99!, unit: 'ms' });
      }
      if (process.env.WARDEN_BENCH_DEBUG) console.log('events per message', Object.fromEntries([...eventCounts].map(([k, v]) => [k, v / (2 * (TURNS + WARM_UP))])));
    } finally {
      await core.close();
      await Promise.all([anthropic.close(), openai.close()]);
      rmSync(userData, { recursive: true, force: true });
    }
  },
};

export default bench;
