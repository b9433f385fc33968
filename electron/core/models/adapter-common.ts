/**
 * What the Anthropic and OpenAI-compatible adapters share: how a request is retried, timed out,
 * stopped and turned into a `ModelError`, and how both SDKs are set up.
 *
 * Deliberate choices about the SDKs' own options (both SDKs are Stainless-generated and behave
 * alike):
 * - `maxRetries: 0`. The SDKs retry 408/409/429/5xx silently, and honour any `retry-after` up to
 *   24 days. Warden retries itself so that every wait is announced (`retry` events the chat shows),
 *   bounded (`maxRetries`, `maxRetryDelayMs`), cancellable by Stop, and never repeats a reply the
 *   person already saw part of (only before the first streamed event).
 * - `timeout` is the SDKs' wait for response headers only: their timer is cleared when `fetch`
 *   resolves, so a stream that stalls after the headers would hang for ever. An idle watchdog here
 *   covers the whole reply: no stream event for `idleTimeoutMs` ends it with TIMEOUT.
 * - `logLevel: 'warn'` with a logger that scrubs the key, so an `ANTHROPIC_LOG=debug` or
 *   `OPENAI_LOG=debug` in the environment cannot make the SDK print requests, and nothing the
 *   SDK logs carries the key.
 * - Credentials, base URL, organization and project are always passed explicitly, so the SDKs
 *   never read `*_API_KEY`, `*_BASE_URL` or credential profiles from the environment or disk and
 *   send them to a base URL the person configured for something else.
 * - `fetch` is wrapped (provider-fetch.ts): requests may go only to the provider's own origin and redirects are never
 *   followed, so the key cannot be carried to another host; and a response body is read only up
 *   to `maxResponseBytes`, so a provider that streams without end (text, tool-call arguments, one
 *   SSE line that never ends, a huge model listing) cannot make the SDK or the loop buffer it
 *   until the main process runs out of memory.
 */
import type { ConnectFailure } from '../../../shared/domain/connect-failure';
import { networkFailureOf } from '../net/network-failure';
import { sanitizeForDisplay } from '../text/sanitize';
import { ModelError, type ModelErrorCode, type ModelRequest, type ModelStreamEvent } from './provider';
import { DEFAULT_MAX_RESPONSE_BYTES } from './provider-fetch';

/** Options every network adapter takes. */
export interface AdapterOptions {
  /** The provider's base URL, already validated (https, or http on loopback). */
  baseUrl: string;
  /** The API key for this base URL's origin, or null when none is stored. */
  apiKey: string | null;
  /** How long to wait for the response headers (the SDK's `timeout`). Default 120 s: a local server may first load the model. */
  connectTimeoutMs?: number;
  /** How long a reply may go without any stream event before it ends with TIMEOUT. Default 120 s. */
  idleTimeoutMs?: number;
  /** Retries after a 429/5xx/overload that happened before anything was streamed. Default 3. */
  maxRetries?: number;
  /** The longest single wait before a retry; a `retry-after` longer than this fails at once. Default 60 s. */
  maxRetryDelayMs?: number;
  /** First backoff when the provider names no delay; doubled each retry. Default 1 s. */
  retryBaseDelayMs?: number;
  /** How long listing models may take (headers and body). Default 20 s. */
  listTimeoutMs?: number;
  /**
   * The most bytes read from one response before Warden stops reading it. Default 16 MiB: a reply
   * of the 4,096 tokens Warden asks for is about 1 MiB of SSE, and no model listing comes near it.
   */
  maxResponseBytes?: number;
  /** Where SDK warnings go, already scrubbed of the key. Default console.warn. */
  log?: (line: string) => void;
  /** The fetch under the SDK (the bench wraps it to time arrivals). Default the global fetch. */
  fetch?: typeof fetch;
}


/** Options with their defaults applied. */
export type ResolvedAdapterOptions = Required<Omit<AdapterOptions, 'apiKey'>> & { apiKey: string | null; host: string; origin: string };

/** Applies the defaults documented on `AdapterOptions`. */
export function resolveAdapterOptions(options: AdapterOptions): ResolvedAdapterOptions {
  const url = new URL(options.baseUrl);
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    connectTimeoutMs: options.connectTimeoutMs ?? 120_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 120_000,
    maxRetries: options.maxRetries ?? 3,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 60_000,
    retryBaseDelayMs: options.retryBaseDelayMs ?? 1000,
    listTimeoutMs: options.listTimeoutMs ?? 20_000,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    log: options.log ?? ((line) => console.warn(line)),
    fetch: options.fetch ?? globalThis.fetch,
    host: url.host,
    origin: url.origin,
  };
}

/** Replaces every occurrence of `key` (as is and URL-encoded) in `text`. */
export function scrubKey(text: string, key: string | null): string {
  if (!key) return text;
  let out = text.split(key).join('[REDACTED]');
  const encoded = encodeURIComponent(key);
  if (encoded !== key) out = out.split(encoded).join('[REDACTED]');
  return out;
}

/** Provider text for a message: sanitized, key scrubbed, one line, capped. */
export function providerText(text: string, key: string | null, max = 300): string {
  const clean = scrubKey(sanitizeForDisplay(text), key).replace(/\s+/g, ' ').trim();
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

/** A logger for the SDKs: warnings and errors go to `log` without the key; debug and info are dropped. */
export function sdkLogger(log: (line: string) => void, key: string | null) {
  const write = (level: string) => (message: string, ...rest: unknown[]) => {
    const parts = [message, ...rest].map((p) => (typeof p === 'string' ? p : safeJson(p)));
    log(scrubKey(`[warden] model SDK ${level}: ${parts.join(' ')}`, key));
  };
  return { error: write('error'), warn: write('warn'), info: () => {}, debug: () => {} };
}

function safeJson(value: unknown): string {
  if (value instanceof Error) return value.message;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The SDK error classes an adapter recognises (each SDK has its own copies). */
export interface SdkErrorClasses {
  APIError: abstract new (...args: never[]) => Error & { status?: number | undefined; headers?: Headers | undefined; error?: unknown };
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
  APIUserAbortError: abstract new (...args: never[]) => Error;
}

/** A ModelError plus what the retry loop needs to know about it. */
export interface ClassifiedFailure {
  error: ModelError;
  retriable: boolean;
  /** The provider's own `retry-after` / `retry-after-ms`, in ms (null when it named none). */
  retryAfterMs: number | null;
}

/** What the classifier knows about the attempt that failed. */
export interface FailureContext {
  options: ResolvedAdapterOptions;
  model: string | null;
  /** Stop was pressed (the request's signal aborted). */
  cancelled: boolean;
  /** The idle watchdog ended the attempt. */
  timedOut: boolean;
  /** The response headers had arrived, so a connection failure now cuts a started reply. */
  responseStarted: boolean;
}

/** Reads `retry-after-ms` or `retry-after` (seconds or an HTTP date) in ms; null when absent or nonsense. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | null {
  if (!headers) return null;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms));
  const after = headers.get('retry-after');
  if (after === null) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(after)) return Math.ceil(Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The provider's own error message from an SDK error body (`{error: {message}}` or `{message}`). */
function bodyMessage(error: unknown): string | null {
  const body = (error as { error?: unknown }).error;
  if (typeof body === 'string') return body;
  if (body && typeof body === 'object') {
    const b = body as { message?: unknown; error?: { message?: unknown } | string };
    if (typeof b.error === 'string') return b.error;
    if (b.error && typeof b.error === 'object' && typeof b.error.message === 'string') return b.error.message;
    if (typeof b.message === 'string') return b.message;
  }
  return null;
}

/** The error body's `type` (`overloaded_error`, `rate_limit_error`), when the provider sent one. */
function bodyType(error: unknown): string | null {
  const body = (error as { error?: unknown }).error;
  if (body && typeof body === 'object') {
    const b = body as { type?: unknown; error?: { type?: unknown } };
    if (b.error && typeof b.error === 'object' && typeof b.error.type === 'string') return b.error.type;
    if (typeof b.type === 'string') return b.type;
  }
  return null;
}

const RETRIABLE_STATUS = new Set([408, 409, 425, 429, 500, 502, 503, 504, 529]);

/**
 * Turns anything an SDK call threw into a ModelError with a code the UI can explain and a
 * message that names the host and says what to do. Every part of a message that came from
 * outside (the provider's error text, a network error's description) has the key scrubbed out.
 */
export function classifyFailure(raw: unknown, classes: SdkErrorClasses, ctx: FailureContext): ClassifiedFailure {
  const { host, apiKey } = ctx.options;
  const done = (code: ModelErrorCode, message: string, status: number | null = null, retriable = false, after: number | null = null, failure: ConnectFailure | null = null): ClassifiedFailure => ({
    error: new ModelError(code, message, status, failure),
    retriable,
    retryAfterMs: after,
  });
  // What the person or the watchdog did comes first: the SDK reports both as an abort.
  if (ctx.cancelled) return done('CANCELLED', 'Stopped.');
  if (ctx.timedOut) {
    return done('TIMEOUT', `No answer from ${host} for ${Math.round(ctx.options.idleTimeoutMs / 1000)} s; the reply was stopped. Try again, or check that the server is not overloaded.`);
  }
  let error = raw;
  // The SDKs wrap what fetch threw (our origin and redirect refusals) as a connection error.
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (error instanceof classes.APIConnectionError && cause instanceof ModelError) error = cause;
  if (error instanceof ModelError) return { error: new ModelError(error.code, scrubKey(error.message, apiKey), error.status, error.failure), retriable: false, retryAfterMs: null };

  if (error instanceof classes.APIConnectionTimeoutError) {
    return done('TIMEOUT', `${host} did not answer within ${Math.round(ctx.options.connectTimeoutMs / 1000)} s. Check that the server is running and reachable.`);
  }
  if (error instanceof classes.APIUserAbortError) return done('CANCELLED', 'Stopped.');
  if (error instanceof classes.APIConnectionError) {
    const why = describeCause(cause ?? error, apiKey);
    if (ctx.responseStarted) return done('STREAM_CUT', `The connection to ${host} ended before the reply was complete (${why}).`);
    return done('NETWORK', `Could not reach ${host} (${why}). Check the base URL and that the server is running.`, null, false, null, networkFailureOf(cause ?? error, ctx.options.baseUrl) ?? null);
  }
  if (error instanceof classes.APIError) {
    const status = typeof error.status === 'number' ? error.status : null;
    const said = bodyMessage(error);
    const detail = said ? `: ${providerText(said, apiKey)}` : '';
    const type = bodyType(error);
    const after = retryAfterMs(error.headers);
    const model = ctx.model ? ` "${ctx.model}"` : '';
    if (status === null) {
      // An `error` event inside the stream (Anthropic `overloaded_error`, an OpenAI `{error}` chunk).
      const overloaded = type === 'overloaded_error' || type === 'rate_limit_error' || type === 'api_error';
      return done('PROVIDER_ERROR', `${host} reported an error in the middle of the reply${detail}.`, null, overloaded, after);
    }
    if (status === 401) return done('UNAUTHORIZED', `${host} refused the API key (HTTP 401)${detail}. Enter a valid key for this provider in Models.`, status);
    if (status === 403) {
      return done('FORBIDDEN', `${host} refused this request (HTTP 403)${detail}. The key may not be allowed to use model${model} or this endpoint.`, status);
    }
    if (status === 404) {
      return done('MODEL_NOT_FOUND', `${host} has no model${model} (HTTP 404)${detail}. Pick a model from the provider's list, or check the base URL (OpenAI-compatible servers usually end in /v1).`, status);
    }
    if (status === 429) return done('RATE_LIMITED', `${host} is limiting requests (HTTP 429)${detail}.`, status, true, after);
    if (status === 408) return done('TIMEOUT', `${host} timed out the request (HTTP 408)${detail}.`, status, true, after);
    if (status >= 500) return done('PROVIDER_ERROR', `${host} failed (HTTP ${status})${detail}.`, status, RETRIABLE_STATUS.has(status), after);
    return done('BAD_REQUEST', `${host} refused the request (HTTP ${status})${detail}.`, status, RETRIABLE_STATUS.has(status), after);
  }
  if (error instanceof SyntaxError) return done('PROVIDER_ERROR', `${host} sent a stream event that is not valid JSON (${providerText(error.message, apiKey, 120)}).`);
  const why = describeCause(error, apiKey);
  if (ctx.responseStarted) return done('STREAM_CUT', `The connection to ${host} ended before the reply was complete (${why}).`);
  return done('NETWORK', `Could not reach ${host} (${why}).`, null, false, null, networkFailureOf(error, ctx.options.baseUrl) ?? null);
}

/** A short reason from a network error and its causes (`ECONNREFUSED`, `terminated`, `other side closed`). */
function describeCause(error: unknown, key: string | null): string {
  const parts: string[] = [];
  let e: unknown = error;
  for (let depth = 0; e && depth < 4; depth++) {
    const err = e as { message?: unknown; code?: unknown; cause?: unknown };
    const text = [typeof err.code === 'string' ? err.code : null, typeof err.message === 'string' ? err.message : null].filter(Boolean).join(' ');
    if (text && !parts.includes(text)) parts.push(text);
    e = err.cause;
  }
  return providerText(parts.join(': ') || 'no details', key, 200) || 'no details';
}

/**
 * Resets when the stream shows life; when `ms` pass without any, fires once.
 *
 * Why a re-arming timer instead of clearTimeout/setTimeout per event: a reply has thousands of
 * events and touching must cost next to nothing on that path (one clock read).
 */
export class IdleWatchdog {
  private last = performance.now();
  private timer: NodeJS.Timeout | null;
  fired = false;

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {
    this.timer = setTimeout(this.check, ms);
  }

  /** Records activity (a stream event arrived, or the consumer asked for the next one). */
  readonly touch = (): void => {
    this.last = performance.now();
  };

  private readonly check = (): void => {
    const idle = performance.now() - this.last;
    if (idle >= this.ms) {
      this.fired = true;
      this.timer = null;
      this.onIdle();
    } else {
      this.timer = setTimeout(this.check, this.ms - idle);
    }
  };

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** Waits `ms`, or rejects with CANCELLED as soon as `signal` aborts. */
export function sleepUnlessStopped(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new ModelError('CANCELLED', 'Stopped.'));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ModelError('CANCELLED', 'Stopped.'));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** One attempt at a reply: yields events; calls `started()` once the response headers arrived. */
export type Attempt = (signal: AbortSignal, hooks: { touch: () => void; started: () => void }) => AsyncGenerator<ModelStreamEvent>;

/**
 * Runs attempts of one reply with Warden's retry policy (see the file comment): retries only a
 * retriable failure that happened before any event was streamed, announces each wait with a
 * `retry` event, gives up after `maxRetries` or when the provider asks for a longer wait than
 * `maxRetryDelayMs`, and turns Stop into CANCELLED at once — during a wait too.
 */
export async function* streamWithRetries(
  request: ModelRequest,
  options: ResolvedAdapterOptions,
  classes: SdkErrorClasses,
  attempt: Attempt,
): AsyncGenerator<ModelStreamEvent> {
  if (request.signal.aborted) throw new ModelError('CANCELLED', 'Stopped.');
  for (let retry = 0; ; retry++) {
    const controller = new AbortController();
    const stop = () => controller.abort();
    request.signal.addEventListener('abort', stop, { once: true });
    const watchdog = new IdleWatchdog(options.idleTimeoutMs, stop);
    let streamed = false;
    let responseStarted = false;
    let failure: ClassifiedFailure | null = null;
    try {
      for await (const event of attempt(controller.signal, { touch: watchdog.touch, started: () => (responseStarted = true) })) {
        streamed = true;
        yield event;
        // Time the consumer spends with an event is not the provider being silent.
        watchdog.touch();
      }
      // An attempt returns only after its `finish` event; a stream the SDK ended quietly (it
      // does so when its signal aborts) makes the attempt throw STREAM_CUT, which the classifier
      // turns into CANCELLED or TIMEOUT when Stop or the watchdog caused it.
      return;
    } catch (error) {
      failure = classifyFailure(error, classes, {
        options,
        model: request.model,
        cancelled: request.signal.aborted,
        timedOut: watchdog.fired,
        responseStarted,
      });
    } finally {
      watchdog.stop();
      request.signal.removeEventListener('abort', stop);
      // Ends the HTTP request if the consumer stopped iterating early (no-op after a full reply).
      controller.abort();
    }
    const { error, retriable, retryAfterMs: asked } = failure;
    if (streamed || !retriable) throw error;
    if (retry >= options.maxRetries) {
      throw new ModelError(error.code, `${error.message} Warden retried ${retry} time${retry === 1 ? '' : 's'}; try again later.`, error.status);
    }
    if (asked !== null && asked > options.maxRetryDelayMs) {
      throw new ModelError(
        error.code,
        `${error.message} It asks to wait ${Math.ceil(asked / 1000)} s, longer than Warden waits (${Math.round(options.maxRetryDelayMs / 1000)} s); try again later.`,
        error.status,
      );
    }
    // Exponential backoff with jitter when the provider named no delay.
    const delayMs = asked ?? Math.round(options.retryBaseDelayMs * 2 ** retry * (0.75 + Math.random() * 0.25));
    yield { type: 'retry', attempt: retry + 1, delayMs, reason: error.message };
    await sleepUnlessStopped(delayMs, request.signal);
  }
}

/** Parses JSON text as an object for replaying a tool call; `{}` when the model wrote anything else. */
export function argumentsObject(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
