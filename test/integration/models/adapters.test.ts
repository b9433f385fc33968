/**
 * The Anthropic and OpenAI-compatible adapters, each through its official SDK, against loopback
 * servers that speak the provider's wire protocol (test/fixtures/models). One suite runs against
 * both: whatever the wire format, the loop sees the same events and the same errors.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicProvider } from '../../../electron/core/models/anthropic-provider';
import { OpenAIProvider } from '../../../electron/core/models/openai-provider';
import type { AdapterOptions } from '../../../electron/core/models/adapter-common';
import { ModelError, type ModelProvider, type ModelRequest, type ModelStreamEvent } from '../../../electron/core/models/provider';
import { startAnthropicFixture, startOpenAIFixture, type FixtureOptions, type ModelFixture } from '../../fixtures/models';

const KEY = 'sk-fixture-4f1c9e0b7a2d4c61b8e3';

interface Outcome {
  events: ModelStreamEvent[];
  error: ModelError | null;
  ms: number;
}

/** Runs a stream to its end, collecting events and the error it ended with. */
async function collect(stream: AsyncIterable<ModelStreamEvent>, onEvent?: (e: ModelStreamEvent) => void): Promise<Outcome> {
  const events: ModelStreamEvent[] = [];
  const started = performance.now();
  try {
    for await (const e of stream) {
      events.push(e);
      onEvent?.(e);
    }
    return { events, error: null, ms: performance.now() - started };
  } catch (error) {
    if (!(error instanceof ModelError)) throw error;
    return { events, error, ms: performance.now() - started };
  }
}

const text = (o: Outcome) => o.events.flatMap((e) => (e.type === 'text-delta' ? [e.text] : [])).join('');
const calls = (o: Outcome) => o.events.flatMap((e) => (e.type === 'tool-call' ? [e.call] : []));
const retries = (o: Outcome) => o.events.filter((e): e is Extract<ModelStreamEvent, { type: 'retry' }> => e.type === 'retry');
const finish = (o: Outcome) => o.events.find((e): e is Extract<ModelStreamEvent, { type: 'finish' }> => e.type === 'finish');

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'fixture-model',
    system: 'You are a test.',
    messages: [{ role: 'user', text: 'Hello' }],
    tools: [{ name: 'read_inbox', description: 'Reads the inbox', inputSchema: { type: 'object', properties: { folder: { type: 'string' } } } }],
    maxTokens: 256,
    signal: new AbortController().signal,
    ...overrides,
  };
}

const kinds = [
  {
    kind: 'anthropic' as const,
    start: (o: FixtureOptions) => startAnthropicFixture(o),
    make: (o: AdapterOptions): ModelProvider => new AnthropicProvider(o),
  },
  {
    kind: 'openai' as const,
    start: (o: FixtureOptions) => startOpenAIFixture(o),
    make: (o: AdapterOptions): ModelProvider => new OpenAIProvider(o),
  },
];

describe.each(kinds)('the $kind adapter through its official SDK against a loopback $kind server', ({ kind, start, make }) => {
  let fixture: ModelFixture;
  const logged: string[] = [];
  const adapter = (extra: Partial<AdapterOptions> = {}) =>
    make({ baseUrl: fixture.baseUrl, apiKey: KEY, maxRetries: 2, retryBaseDelayMs: 5, idleTimeoutMs: 5000, connectTimeoutMs: 5000, log: (l) => logged.push(l), ...extra });

  beforeAll(async () => {
    fixture = await start({ apiKey: KEY, models: [{ id: 'fixture-model', label: 'Fixture Model' }, { id: 'other-model' }] });
  });
  afterAll(() => fixture.close());
  afterEach(() => {
    expect(fixture.pending(), 'every scripted turn was used').toBe(0);
    fixture.requests.length = 0;
  });

  it('streams text deltas as they arrive and ends with finish, usage and the stop reason', async () => {
    fixture.enqueue({ kind: 'reply', text: ['Hel', 'lo, ', 'world'], usage: { input: 42, output: 7 } });
    const out = await collect(adapter().stream(request()));
    expect(out.error).toBeNull();
    expect(out.events.filter((e) => e.type === 'text-delta').map((e) => (e as { text: string }).text)).toEqual(['Hel', 'lo, ', 'world']);
    expect(out.events.at(-1)).toEqual({ type: 'finish', stopReason: 'end_turn', usage: { inputTokens: 42, outputTokens: 7 } });
    const [sent] = fixture.completions();
    expect(sent!.headers.authorization).toBe(`Bearer ${KEY}`);
    const body = sent!.body as Record<string, unknown>;
    expect(body.model).toBe('fixture-model');
    expect(body.stream).toBe(true);
    expect(JSON.stringify(body)).toContain('read_inbox');
    expect(JSON.stringify(body)).toContain('You are a test.');
  });

  it('several tool calls in one reply: each is emitted once, with its arguments accumulated from the deltas', async () => {
    fixture.enqueue({
      kind: 'reply',
      text: ['Checking both.'],
      toolCalls: [
        { id: 'call-a', name: 'read_inbox', argumentsJson: '{"folder":"work","limit":5}', pieces: 4 },
        { id: 'call-b', name: 'notes_read', argumentsJson: '{"path":"/notes/today.md"}', pieces: 3 },
        { id: 'call-c', name: 'no_args', argumentsJson: '' },
      ],
      interleaveToolCalls: true,
    });
    const out = await collect(adapter().stream(request()));
    expect(out.error).toBeNull();
    expect(calls(out)).toEqual([
      { id: 'call-a', name: 'read_inbox', argumentsJson: '{"folder":"work","limit":5}' },
      { id: 'call-b', name: 'notes_read', argumentsJson: '{"path":"/notes/today.md"}' },
      { id: 'call-c', name: 'no_args', argumentsJson: '{}' },
    ]);
    expect(finish(out)?.stopReason).toBe('tool_calls');
  });

  it('malformed tool arguments and invented tool names reach the loop exactly as the model wrote them', async () => {
    fixture.enqueue({
      kind: 'reply',
      toolCalls: [
        { id: 'bad-json', name: 'read_inbox', argumentsJson: '{"folder": "work", ' },
        { id: 'invented', name: 'delete_everything', argumentsJson: '{"confirm":true}' },
      ],
    });
    const out = await collect(adapter().stream(request()));
    expect(out.error).toBeNull();
    expect(calls(out)).toEqual([
      { id: 'bad-json', name: 'read_inbox', argumentsJson: '{"folder": "work", ' },
      { id: 'invented', name: 'delete_everything', argumentsJson: '{"confirm":true}' },
    ]);
  });

  it('a conversation with tool calls and results is translated to the wire format (malformed arguments replayed as {})', async () => {
    fixture.enqueue({ kind: 'reply', text: ['ok'] });
    await collect(
      adapter().stream(
        request({
          messages: [
            { role: 'user', text: 'Summarise my inbox' },
            {
              role: 'assistant',
              text: 'Reading.',
              toolCalls: [
                { id: 'c1', name: 'read_inbox', argumentsJson: '{"folder":"work"}' },
                { id: 'c2', name: 'read_inbox', argumentsJson: '{oops' },
              ],
            },
            {
              role: 'tool',
              results: [
                { callId: 'c1', name: 'read_inbox', content: '<tool_output untrusted="true">2 messages</tool_output>', isError: false },
                { callId: 'c2', name: 'read_inbox', content: 'invalid arguments', isError: true },
              ],
            },
            { role: 'user', text: 'And?' },
          ],
        }),
      ),
    );
    const body = fixture.completions()[0]!.body as { messages: Array<Record<string, unknown>> };
    if (kind === 'anthropic') {
      expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(body.messages[1]!.content).toEqual([
        { type: 'text', text: 'Reading.' },
        { type: 'tool_use', id: 'c1', name: 'read_inbox', input: { folder: 'work' } },
        { type: 'tool_use', id: 'c2', name: 'read_inbox', input: {} },
      ]);
      expect(body.messages[2]!.content).toEqual([
        { type: 'tool_result', tool_use_id: 'c1', content: '<tool_output untrusted="true">2 messages</tool_output>' },
        { type: 'tool_result', tool_use_id: 'c2', content: 'invalid arguments', is_error: true },
        { type: 'text', text: 'And?' },
      ]);
    } else {
      expect(body.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'user']);
      expect(body.messages[2]!.tool_calls).toEqual([
        { id: 'c1', type: 'function', function: { name: 'read_inbox', arguments: '{"folder":"work"}' } },
        { id: 'c2', type: 'function', function: { name: 'read_inbox', arguments: '{}' } },
      ]);
      expect(body.messages[3]).toEqual({ role: 'tool', tool_call_id: 'c1', content: '<tool_output untrusted="true">2 messages</tool_output>' });
    }
  });

  it('429 with retry-after: the adapter announces the wait, waits that long, and the retry succeeds', async () => {
    fixture.enqueue({ kind: 'status', status: 429, message: 'slow down', headers: { 'retry-after': '1' } }, { kind: 'reply', text: ['after the wait'] });
    const out = await collect(adapter().stream(request()));
    expect(out.error).toBeNull();
    expect(retries(out)).toEqual([{ type: 'retry', attempt: 1, delayMs: 1000, reason: expect.stringMatching(/HTTP 429.*slow down/) }]);
    expect(out.ms).toBeGreaterThanOrEqual(950);
    expect(text(out)).toBe('after the wait');
    expect(fixture.completions()).toHaveLength(2);
  });

  it('429 after the retries ran out is RATE_LIMITED; a retry-after beyond the cap fails at once instead of waiting', async () => {
    fixture.enqueue(
      { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
      { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
      { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
    );
    const exhausted = await collect(adapter().stream(request()));
    expect(exhausted.error?.code).toBe('RATE_LIMITED');
    expect(exhausted.error?.status).toBe(429);
    expect(exhausted.error?.message).toMatch(/retried 2 times/);
    expect(retries(exhausted).map((r) => r.attempt)).toEqual([1, 2]);

    fixture.requests.length = 0;
    fixture.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '3600' } });
    const tooLong = await collect(adapter({ maxRetryDelayMs: 30_000 }).stream(request()));
    expect(tooLong.error?.code).toBe('RATE_LIMITED');
    expect(tooLong.error?.message).toMatch(/asks to wait 3600 s, longer than Warden waits \(30 s\)/);
    expect(retries(tooLong)).toEqual([]);
    expect(tooLong.ms).toBeLessThan(2000);
  });

  it('500 is retried with backoff; 5xx that persists is PROVIDER_ERROR', async () => {
    fixture.enqueue({ kind: 'status', status: 500, message: 'boom' }, { kind: 'reply', text: ['recovered'] });
    const recovered = await collect(adapter().stream(request()));
    expect(recovered.error).toBeNull();
    expect(retries(recovered)).toHaveLength(1);
    expect(text(recovered)).toBe('recovered');

    fixture.enqueue({ kind: 'status', status: 503 }, { kind: 'status', status: 503 }, { kind: 'status', status: 503 });
    const failed = await collect(adapter().stream(request()));
    expect(failed.error).toMatchObject({ code: 'PROVIDER_ERROR', status: 503 });
  });

  it.each([
    [401, 'UNAUTHORIZED', /refused the API key/],
    [403, 'FORBIDDEN', /may not be allowed to use model "fixture-model"/],
    [404, 'MODEL_NOT_FOUND', /has no model "fixture-model"/],
    [400, 'BAD_REQUEST', /refused the request \(HTTP 400\)/],
  ] as const)('HTTP %i is %s at once, with a message that says what to fix (no retry)', async (status, code, message) => {
    fixture.enqueue({ kind: 'status', status, message: 'provider says no' });
    const out = await collect(adapter().stream(request()));
    expect(out.error).toMatchObject({ code, status });
    expect(out.error!.message).toMatch(message);
    expect(out.error!.message).toContain('provider says no');
    expect(fixture.completions()).toHaveLength(1);
  });

  it('a wrong key is UNAUTHORIZED, and a server that echoes the key back never gets it into the message', async () => {
    const hostile = await start({ apiKey: 'the-right-key', echoCredentialOnAuthFailure: true, models: [] });
    try {
      const out = await collect(make({ baseUrl: hostile.baseUrl, apiKey: KEY, maxRetries: 0 }).stream(request()));
      expect(out.error?.code).toBe('UNAUTHORIZED');
      expect(out.error!.message).toContain('[REDACTED]');
      expect(out.error!.message).not.toContain(KEY);
      await expect(make({ baseUrl: hostile.baseUrl, apiKey: KEY }).listModels()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
      expect(logged.join('\n')).not.toContain(KEY);
    } finally {
      await hostile.close();
    }
  });

  it('a stream cut mid-way is STREAM_CUT after the text that did arrive, and is not retried', async () => {
    fixture.enqueue({ kind: 'reply', text: ['partial ', 'answer ', 'never ', 'finished'], cutAfterEvents: kind === 'anthropic' ? 5 : 3 });
    const out = await collect(adapter().stream(request()));
    expect(out.error?.code).toBe('STREAM_CUT');
    expect(out.error!.message).toMatch(/ended before the reply was complete/);
    expect(text(out)).toBe('partial answer ');
    expect(finish(out)).toBeUndefined();
    expect(fixture.completions()).toHaveLength(1);
  });

  it('an error event inside the stream: retried when nothing was streamed yet, PROVIDER_ERROR once text was shown', async () => {
    fixture.enqueue({ kind: 'reply', text: ['x'], errorAfterEvents: { after: 1, type: 'overloaded_error', message: 'Overloaded' } }, { kind: 'reply', text: ['second try'] });
    const retried = await collect(adapter().stream(request()));
    expect(retried.error).toBeNull();
    expect(retries(retried)).toHaveLength(1);
    expect(text(retried)).toBe('second try');

    fixture.enqueue({ kind: 'reply', text: ['seen ', 'by the person'], errorAfterEvents: { after: kind === 'anthropic' ? 4 : 2, type: 'overloaded_error', message: 'Overloaded' } });
    const failed = await collect(adapter().stream(request()));
    expect(failed.error?.code).toBe('PROVIDER_ERROR');
    expect(failed.error!.message).toMatch(/Overloaded/);
    expect(text(failed)).toBe('seen ');
  });

  it('a slow stream stopped mid-way ends at once with CANCELLED and the connection is closed', async () => {
    fixture.enqueue({ kind: 'reply', text: Array.from({ length: 40 }, (_, i) => `w${i} `), delayMs: 100 });
    const controller = new AbortController();
    let stoppedAt = 0;
    const out = await collect(adapter().stream(request({ signal: controller.signal })), (e) => {
      if (e.type === 'text-delta' && e.text === 'w1 ') {
        stoppedAt = performance.now();
        controller.abort();
      }
    });
    const ended = performance.now();
    expect(out.error?.code).toBe('CANCELLED');
    expect(ended - stoppedAt).toBeLessThan(250);
    expect(text(out)).toBe('w0 w1 ');
    await expect.poll(() => fixture.hangUps, { timeout: 3000 }).toBeGreaterThan(0);
  });

  it('Stop during a retry wait ends at once', async () => {
    fixture.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '20' } });
    const controller = new AbortController();
    const out = await collect(adapter({ maxRetryDelayMs: 60_000 }).stream(request({ signal: controller.signal })), (e) => {
      if (e.type === 'retry') setTimeout(() => controller.abort(), 50);
    });
    expect(out.error?.code).toBe('CANCELLED');
    expect(out.ms).toBeLessThan(3000);
  });

  it('a provider that goes silent after the headers is TIMEOUT after the idle limit', async () => {
    fixture.enqueue({ kind: 'hang' });
    const out = await collect(adapter({ idleTimeoutMs: 400 }).stream(request()));
    expect(out.error?.code).toBe('TIMEOUT');
    expect(out.ms).toBeGreaterThanOrEqual(380);
    expect(out.ms).toBeLessThan(3000);
  });

  it('a server that is not running is NETWORK, naming the host', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const out = await collect(make({ baseUrl: `http://127.0.0.1:${port}${kind === 'openai' ? '/v1' : ''}`, apiKey: KEY, maxRetries: 0 }).stream(request()));
    expect(out.error?.code).toBe('NETWORK');
    expect(out.error!.message).toContain(`127.0.0.1:${port}`);
  });

  it('a redirect is never followed: the key does not reach the other host', async () => {
    const elsewhere = await start({ models: [] });
    try {
      fixture.enqueue({ kind: 'redirect', location: `${elsewhere.baseUrl}${kind === 'anthropic' ? '/v1/messages' : '/chat/completions'}` });
      const out = await collect(adapter().stream(request()));
      expect(out.error?.code).toBe('PROVIDER_ERROR');
      expect(out.error!.message).toMatch(/never follows a redirect with your key/);
      expect(elsewhere.requests).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('lists the models the provider offers; a server without a listing endpoint answers null', async () => {
    const models = await adapter().listModels();
    expect(models?.map((m) => m.id).sort()).toEqual(['fixture-model', 'other-model']);
    if (kind === 'anthropic') expect(models?.find((m) => m.id === 'fixture-model')?.label).toBe('Fixture Model');
    const cannot = await start({ apiKey: KEY, models: 'missing' });
    try {
      expect(await make({ baseUrl: cannot.baseUrl, apiKey: KEY }).listModels()).toBeNull();
    } finally {
      await cannot.close();
    }
  });

  it('credentials and base URLs in the environment are never used', async () => {
    const saved = { ...process.env };
    const other = await start({ models: [] });
    try {
      process.env.ANTHROPIC_BASE_URL = other.baseUrl;
      process.env.OPENAI_BASE_URL = other.baseUrl;
      process.env.ANTHROPIC_API_KEY = 'env-key-must-not-be-sent';
      process.env.OPENAI_API_KEY = 'env-key-must-not-be-sent';
      process.env.OPENAI_ORG_ID = 'org-env';
      fixture.enqueue({ kind: 'reply', text: ['ok'] });
      const out = await collect(adapter().stream(request()));
      expect(out.error).toBeNull();
      expect(other.requests).toHaveLength(0);
      const headers = fixture.completions()[0]!.headers;
      expect(headers.authorization).toBe(`Bearer ${KEY}`);
      expect(JSON.stringify(headers)).not.toContain('env-key-must-not-be-sent');
      expect(headers['openai-organization']).toBeUndefined();
    } finally {
      process.env = saved;
      await other.close();
    }
  });
});

describe('OpenAI-compatible servers that differ from OpenAI', () => {
  it('a server that refuses stream_options is asked again without it, and usage is then unknown', async () => {
    const server = await startOpenAIFixture({ models: [] });
    try {
      server.enqueue({ kind: 'status', status: 400, message: "Unrecognized request argument supplied: stream_options" }, { kind: 'reply', text: ['fine'] }, { kind: 'reply', text: ['again'] });
      const provider = new OpenAIProvider({ baseUrl: server.baseUrl, apiKey: null });
      const first = await collect(provider.stream(request()));
      expect(text(first)).toBe('fine');
      expect(finish(first)).toEqual({ type: 'finish', stopReason: 'end_turn', usage: null });
      expect(retries(first)).toEqual([]);
      expect(text(await collect(provider.stream(request())))).toBe('again');
      const sent = server.completions().map((r) => 'stream_options' in (r.body as object));
      expect(sent).toEqual([true, false, false]);
    } finally {
      await server.close();
    }
  });

  it('compatible servers get max_tokens; the request body carries the model, the tools and the limit', async () => {
    const server = await startOpenAIFixture({ models: [] });
    try {
      server.enqueue({ kind: 'reply', text: ['x'] });
      await collect(new OpenAIProvider({ baseUrl: server.baseUrl, apiKey: null }).stream(request({ maxTokens: 77 })));
      const body = server.completions()[0]!.body as Record<string, unknown>;
      expect(body).toMatchObject({ model: 'fixture-model', max_tokens: 77, stream: true, stream_options: { include_usage: true } });
      expect(body.tools).toEqual([{ type: 'function', function: { name: 'read_inbox', description: 'Reads the inbox', parameters: { type: 'object', properties: { folder: { type: 'string' } } } } }]);
    } finally {
      await server.close();
    }
  });
});

describe('keys the adapters send', () => {
  it('an OpenAI-compatible server on this machine without a key gets no Authorization header at all', async () => {
    const local = await startOpenAIFixture({ models: [{ id: 'llama3.1:8b' }] });
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'env-key-must-not-be-sent';
    try {
      local.enqueue({ kind: 'reply', text: ['local answer'] });
      const provider = new OpenAIProvider({ baseUrl: local.baseUrl, apiKey: null });
      const out = await collect(provider.stream(request({ model: 'llama3.1:8b' })));
      expect(text(out)).toBe('local answer');
      expect(await provider.listModels()).toEqual([{ id: 'llama3.1:8b', label: 'llama3.1:8b' }]);
      for (const r of local.requests) {
        expect(r.headers.authorization).toBeUndefined();
        expect(JSON.stringify(r.headers)).not.toContain('env-key-must-not-be-sent');
      }
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
      await local.close();
    }
  });

  it('an Anthropic provider without a key fails UNAUTHORIZED before sending anything', async () => {
    const fixture = await startAnthropicFixture({ models: [] });
    try {
      const out = await collect(new AnthropicProvider({ baseUrl: fixture.baseUrl, apiKey: null }).stream(request()));
      expect(out.error?.code).toBe('UNAUTHORIZED');
      expect(out.error!.message).toMatch(/No API key is stored/);
      expect(fixture.requests).toHaveLength(0);
    } finally {
      await fixture.close();
    }
  });
});
