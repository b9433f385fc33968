/**
 * Model adapter benchmarks, measured in one run against loopback servers that speak each
 * provider's wire protocol (test/fixtures/models), through the official SDKs:
 *
 * 1. The adapters' own time per streamed token: from the moment a token's bytes come out of the
 *    HTTP response body (stamped by a pass-through on the response stream under the SDK) to the
 *    moment its `text-delta` event reaches the adapter's consumer. This is SSE parsing, JSON
 *    parsing, translation and the async-iterator hops: what an adapter adds to a token a person
 *    is waiting for. Tokens are paced (about 1 ms apart, like a fast model) so each one is
 *    measured as it arrives, not as part of a batch.
 * 2. The same with the SDK's raw stream iterated directly (no adapter): the floor any adapter on
 *    that SDK pays. The difference is Warden's own translation, retry and watchdog wrapping.
 * 3. In the same run, the provider round trip: request sent → first token, and → `finish`.
 *
 * The loop's own target (first token on the renderer side of the contract within 5 ms of
 * arriving) includes this adapter time; it is reported against that budget here.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { AnthropicProvider } from '../../electron/core/models/anthropic-provider';
import { OpenAIProvider } from '../../electron/core/models/openai-provider';
import type { ModelProvider } from '../../electron/core/models/provider';
import { startAnthropicFixture, startOpenAIFixture, type ModelFixture } from '../fixtures/models';
import { percentiles, type BenchModule } from './harness';

const ROUNDS = Number(process.env.WARDEN_BENCH_MODEL_ROUNDS ?? 20);
const TOKENS = Number(process.env.WARDEN_BENCH_MODEL_TOKENS ?? 60);
const KEY = 'sk-bench-0000000000000000';

/** Token text carries its own number so its arrival can be matched to its event. */
const token = (round: number, i: number) => `‹${round}.${i}› `;
const TOKEN_RE = /‹(\d+\.\d+)›/g;

/**
 * A fetch whose response bodies pass through a stamp: the time each token's bytes came out of
 * the network stream. Only the stamp's regex scan runs here; it is counted as arrival, so it is
 * not charged to the adapter.
 */
function stampingFetch(arrivals: Map<string, number>): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body) return response;
    const decoder = new TextDecoder();
    const stamp = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const at = performance.now();
        for (const m of decoder.decode(chunk, { stream: true }).matchAll(TOKEN_RE)) arrivals.set(m[1]!, at);
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(stamp), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

interface Measured {
  /** ms from arrival to text-delta, one sample per token. */
  adapter: number[];
  /** ms from stream() to the first text-delta, one per round. */
  firstToken: number[];
  /** ms from stream() to finish, one per round. */
  roundTrip: number[];
}

async function measure(fixture: ModelFixture, make: (fetch: typeof globalThis.fetch) => ModelProvider): Promise<Measured> {
  const arrivals = new Map<string, number>();
  const provider = make(stampingFetch(arrivals));
  const out: Measured = { adapter: [], firstToken: [], roundTrip: [] };
  // Round 0 warms up the SDK, the sockets and the JIT; it is not counted.
  for (let round = 0; round <= ROUNDS; round++) {
    fixture.enqueue({ kind: 'reply', text: Array.from({ length: TOKENS }, (_, i) => token(round, i)), delayMs: 1 });
    arrivals.clear();
    const started = performance.now();
    let first = -1;
    const samples: number[] = [];
    for await (const event of provider.stream({
      model: 'bench-model',
      system: '',
      messages: [{ role: 'user', text: 'go' }],
      tools: [],
      maxTokens: 1024,
      signal: new AbortController().signal,
    })) {
      if (event.type === 'text-delta') {
        const now = performance.now();
        if (first < 0) first = now - started;
        for (const m of event.text.matchAll(TOKEN_RE)) {
          const at = arrivals.get(m[1]!);
          if (at === undefined) throw new Error(`token ${m[1]} was never seen arriving`);
          samples.push(now - at);
        }
      } else if (event.type === 'finish' && round > 0) {
        out.roundTrip.push(performance.now() - started);
        out.firstToken.push(first);
        out.adapter.push(...samples);
      }
    }
    if (samples.length !== TOKENS) throw new Error(`expected ${TOKENS} tokens, got ${samples.length}`);
  }
  return out;
}

/** Arrival → text for the SDK's raw stream alone, iterated the way an adapter must at least do. */
async function measureSdkFloor(fixture: ModelFixture, texts: (fetch: typeof globalThis.fetch, round: number) => AsyncIterable<string>): Promise<number[]> {
  const arrivals = new Map<string, number>();
  const f = stampingFetch(arrivals);
  const out: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    fixture.enqueue({ kind: 'reply', text: Array.from({ length: TOKENS }, (_, i) => token(round, i)), delayMs: 1 });
    arrivals.clear();
    const samples: number[] = [];
    for await (const text of texts(f, round)) {
      const now = performance.now();
      for (const m of text.matchAll(TOKEN_RE)) samples.push(now - arrivals.get(m[1]!)!);
    }
    if (samples.length !== TOKENS) throw new Error(`expected ${TOKENS} tokens, got ${samples.length}`);
    if (round > 0) out.push(...samples);
  }
  return out;
}

async function* anthropicSdkTexts(baseURL: string, fetch: typeof globalThis.fetch): AsyncIterable<string> {
  const client = new Anthropic({ apiKey: KEY, baseURL, fetch, maxRetries: 0, openTelemetry: false });
  const stream = await client.messages.create({ model: 'bench-model', max_tokens: 1024, messages: [{ role: 'user', content: 'go' }], stream: true });
  for await (const e of stream) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') yield e.delta.text;
}

async function* openaiSdkTexts(baseURL: string, fetch: typeof globalThis.fetch): AsyncIterable<string> {
  const client = new OpenAI({ apiKey: KEY, baseURL, fetch, maxRetries: 0 });
  const stream = await client.chat.completions.create({ model: 'bench-model', messages: [{ role: 'user', content: 'go' }], stream: true });
  for await (const c of stream) {
    const text = c.choices[0]?.delta?.content;
    if (text) yield text;
  }
}

const bench: BenchModule = {
  title: 'Model adapters: token arrival → text-delta, and the provider round trip (loopback, official SDKs)',
  async run(report) {
    const anthropic = await startAnthropicFixture({ apiKey: KEY });
    const openai = await startOpenAIFixture({ apiKey: KEY });
    try {
      const variants: Array<[string, ModelFixture, (f: typeof fetch) => ModelProvider, (f: typeof fetch) => AsyncIterable<string>]> = [
        ['anthropic', anthropic, (f) => new AnthropicProvider({ baseUrl: anthropic.baseUrl, apiKey: KEY, fetch: f }), (f) => anthropicSdkTexts(anthropic.baseUrl, f)],
        ['openai', openai, (f) => new OpenAIProvider({ baseUrl: openai.baseUrl, apiKey: KEY, fetch: f }), (f) => openaiSdkTexts(openai.baseUrl, f)],
      ];
      for (const [name, fixture, make, sdkTexts] of variants) {
        const m = await measure(fixture, make);
        const floor = await measureSdkFloor(fixture, sdkTexts);
        const [floor50] = percentiles(floor, [50]) as [number];
        const [p50, p99] = percentiles(m.adapter, [50, 99]) as [number, number];
        const [rt50] = percentiles(m.roundTrip, [50]) as [number];
        const [ft50] = percentiles(m.firstToken, [50]) as [number];
        const prefix = `models.${name}.`;
        report({ name: `${prefix}provider_round_trip_median`, value: rt50, unit: 'ms/reply' });
        report({ name: `${prefix}provider_first_token_median`, value: ft50, unit: 'ms' });
        report({
          name: `${prefix}token_arrival_to_text_delta_median`,
          value: p50 * 1000,
          unit: 'µs/token',
          baseline: `${prefix}provider_first_token_median`,
          ratio: p50 / ft50,
          target: 'median < 5 ms (the whole first-token budget)',
          met: p50 < 5,
        });
        report({ name: `${prefix}token_arrival_to_text_delta_p99`, value: p99 * 1000, unit: 'µs/token' });
        report({ name: `${prefix}sdk_raw_stream_floor_median`, value: floor50 * 1000, unit: 'µs/token' });
        report({
          name: `${prefix}adapter_vs_sdk_floor`,
          value: (p50 - floor50) * 1000,
          unit: 'µs/token added by Warden',
          baseline: `${prefix}sdk_raw_stream_floor_median`,
          ratio: p50 / floor50,
        });
        report({ name: `${prefix}tokens_measured`, value: m.adapter.length, unit: 'tokens' });
      }
    } finally {
      await Promise.all([anthropic.close(), openai.close()]);
    }
  },
};
export default bench;
