/**
 * A hostile (or broken) model provider from the attacker's side: it answers with far more than any
 * reply Warden asks for — endless text, endless tool-call arguments, one SSE line that never ends,
 * a model listing of hundreds of megabytes. Warden must stop reading, end the turn with a plain
 * reason, and keep what it holds bounded, instead of buffering whatever the other side sends
 * until the main process runs out of memory. And the names it gives its models are its own text,
 * cleaned before any view shows them.
 *
 * Through the core as the app assembles it (createCore, the contract dispatch, the real adapters
 * on the official SDKs) against raw loopback HTTP servers speaking each provider's wire format.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../../shared/contract/chat';
import { startOpenAIFixture } from '../../fixtures/models';
import { call, settled, startChatCore, until, type ChatCore } from './helpers';

/** Far more than the cap; the server stops on its own here if the client never hangs up. */
const FLOOD_BYTES = 48 * 1024 * 1024;
/** What Warden may have read before stopping (its cap is well under this). */
const READ_AT_MOST = 24 * 1024 * 1024;

interface Flood {
  baseUrl: string;
  /** Bytes written before the client hung up or the flood ended. */
  written(): number;
  /** True once the client closed the connection before the flood ended. */
  hungUp(): boolean;
  close(): Promise<void>;
}

type Writer = (res: ServerResponse, budget: number, state: { written: number; gone: boolean }) => Promise<void>;

/** A loopback server whose completion endpoint floods with `write`, and whose other paths list one model. */
async function startFlood(prefix: string, completionPath: string, write: Writer, listing?: Writer): Promise<Flood> {
  const state = { written: 0, gone: false };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      res.on('close', () => {
        if (!res.writableEnded) state.gone = true;
      });
      if (req.method === 'POST' && req.url === `${prefix}${completionPath}`) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        void write(res, FLOOD_BYTES, state);
      } else if (listing && req.method === 'GET' && req.url?.startsWith(`${prefix}/models`)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        void listing(res, FLOOD_BYTES, state);
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"no such path"}}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${prefix}`,
    written: () => state.written,
    hungUp: () => state.gone,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes `head`, then `piece` until the budget is spent or the client left, then `tail`. */
function flood(head: string, piece: (i: number) => string, tail: string): Writer {
  return async (res, budget, state) => {
    const send = (text: string) =>
      new Promise<void>((resolve) => {
        state.written += Buffer.byteLength(text);
        if (res.write(text)) resolve();
        else res.once('drain', resolve);
      });
    await send(head);
    for (let i = 0; state.written < budget && !state.gone && !res.destroyed; i++) await send(piece(i));
    if (!state.gone && !res.destroyed) res.end(tail);
  };
}

const CHUNK = 'x'.repeat(64 * 1024);
const openaiChunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-flood', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const anthropicEvent = (name: string, data: Record<string, unknown>) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
const anthropicStart = anthropicEvent('message_start', {
  message: { id: 'msg_flood', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } },
});
const anthropicEnd = (stop: string) => anthropicEvent('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 1 } }) + anthropicEvent('message_stop', {});

let t: ChatCore | undefined;
let server: Flood | undefined;
afterEach(async () => {
  await t?.core.close();
  await server?.close();
  t = undefined;
  server = undefined;
});

/** A core with a provider at the flood's address, and a conversation using it. */
async function chatWith(kind: 'openai' | 'anthropic'): Promise<{ conversationId: string; providerId: string }> {
  t = await startChatCore({ models: { adapter: { maxRetries: 0, connectTimeoutMs: 10_000, idleTimeoutMs: 10_000 } } });
  const { provider } = await call<{ provider: { providerId: string } }>(t.core, 'models:add-provider', { kind, label: `Flood ${kind}`, baseUrl: server!.baseUrl, apiKey: 'sk-flood-0123456789' });
  const c = await call<Conversation>(t.core, 'chat:create', { providerId: provider.providerId, model: 'm' });
  return { conversationId: c.id, providerId: provider.providerId };
}

/** Sends a message and expects the turn to end with a plain reason, having read a bounded amount. */
async function expectStoppedReading(conversationId: string, why = /sent more than \d+ MB in one response/): Promise<Conversation> {
  await call(t!.core, 'chat:send-message', { conversationId, text: 'hello' });
  const done = await settled(t!.core, conversationId);
  expect(done.messages.at(-1)).toMatchObject({ role: 'notice', tone: 'error', text: expect.stringMatching(why) });
  await until(() => server!.hungUp(), 'Warden to hang up', 5000);
  expect(server!.written()).toBeLessThan(READ_AT_MOST);
  expect(JSON.stringify(done).length).toBeLessThan(READ_AT_MOST);
  // Nothing the provider sent entered the gate.
  expect(done.messages.flatMap((m) => m.toolCalls)).toEqual([]);
  return done;
}

describe('a provider that sends far more than any reply', () => {
  it('endless text deltas (OpenAI-compatible): Warden stops reading and ends the turn with a plain reason', async () => {
    server = await startFlood('/v1', '/chat/completions', flood(openaiChunk({ role: 'assistant', content: '' }), () => openaiChunk({ content: CHUNK }), openaiChunk({}, 'stop') + 'data: [DONE]\n\n'));
    const { conversationId } = await chatWith('openai');
    await expectStoppedReading(conversationId);
  });

  it('one SSE line that never ends: Warden does not buffer it (the SDK would rescan it on every chunk)', async () => {
    server = await startFlood('/v1', '/chat/completions', flood('data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"finish_reason":null,"delta":{"content":"', () => CHUNK, '"}}]}\n\n' + openaiChunk({}, 'stop') + 'data: [DONE]\n\n'));
    const { conversationId } = await chatWith('openai');
    await expectStoppedReading(conversationId, /sent a stream line of more than 1 MB/);
    expect(server.written()).toBeLessThan(4 * 1024 * 1024);
  });

  it('endless tool-call arguments (Anthropic): no call of that reply reaches the gate', async () => {
    const head = anthropicStart + anthropicEvent('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_flood', name: 'Warden_demo_built-in__notes_add', input: {} } }) + anthropicEvent('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"text":"' } });
    const piece = () => anthropicEvent('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: CHUNK } });
    const tail = anthropicEvent('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '"}' } }) + anthropicEvent('content_block_stop', { index: 0 }) + anthropicEnd('tool_use');
    server = await startFlood('', '/v1/messages', flood(head, piece, tail));
    const { conversationId } = await chatWith('anthropic');
    await expectStoppedReading(conversationId);
    expect(t!.demos.flatMap((d) => d.calls)).toEqual([]);
  });

  it('a model listing of hundreds of megabytes: the listing fails with a plain reason instead of filling memory', async () => {
    const listing = flood('{"object":"list","data":[', (i) => `${i ? ',' : ''}{"id":"model-${i}-${CHUNK.slice(0, 4000)}","object":"model","created":1,"owned_by":"x"}`, ']}');
    server = await startFlood('/v1', '/chat/completions', flood('', () => '', ''), listing);
    const { providerId } = await chatWith('openai');
    const listed = await call<{ models: unknown; problem: { code: string; message: string } | null }>(t!.core, 'models:list-models', { providerId });
    expect(listed).toMatchObject({ models: null, problem: { code: 'PROVIDER_ERROR', message: expect.stringMatching(/sent more than \d+ MB in one response/) } });
    await until(() => server!.hungUp(), 'Warden to hang up', 5000);
    expect(server.written()).toBeLessThan(READ_AT_MOST);
  });
});

describe('a hostile provider naming its models', () => {
  it("the chat's model picker gets the listing cleaned as the Models panel does: valid ids once each, no control or bidi characters", async () => {
    const provider = await startOpenAIFixture({
      models: [
        { id: 'good-model' },
        { id: 'good-model' },
        // Displayed right to left after the override: reads as "evil-model" followed by "exe.gnp".
        { id: 'evil-\u202Eexe.gnp' },
        { id: 'ansi-\u001b[2J\u001b[31mred' },
        { id: 'x'.repeat(5000) },
      ],
    });
    server = { baseUrl: provider.baseUrl, written: () => 0, hungUp: () => false, close: () => provider.close() };
    t = await startChatCore();
    const { provider: added } = await call<{ provider: { providerId: string } }>(t.core, 'models:add-provider', { kind: 'openai', label: 'Hostile', baseUrl: provider.baseUrl, defaultModel: 'good-model' });
    const panel = await call<{ models: Array<{ id: string; label: string }> }>(t.core, 'models:list-models', { providerId: added.providerId });
    const picker = await call<{ models: Array<{ id: string; label: string }> }>(t.core, 'chat:models', { providerId: added.providerId });
    expect(picker.models).toEqual(panel.models);
    // An id that hides or reorders text is not a model anyone can pick: it is dropped, like the ANSI one.
    expect(picker.models.map((m) => m.id)).toEqual(['good-model']);
    // eslint-disable-next-line no-control-regex
    for (const m of picker.models) expect(m.label).not.toMatch(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069]/);
  });
});
