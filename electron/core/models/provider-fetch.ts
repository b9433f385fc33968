/**
 * The fetch both model SDKs send through: requests go only to the provider's own origin, a
 * redirect is never followed, and a response body is read only up to a bound, so the key cannot
 * be carried to another host and a provider that streams without end cannot make the main process
 * buffer it until it runs out of memory. (The adapters' other shared choices: adapter-common.ts.)
 */
import { ModelError } from './provider';

/** Default of `AdapterOptions.maxResponseBytes`. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/**
 * The fetch both SDKs send through: only to `origin`, never following a redirect.
 *
 * Why: the key is in a header of every request. The base URL was checked when it was saved, but
 * a redirect (or a URL an SDK builds from a response) could still point elsewhere; refusing here
 * keeps the key on the one origin it was entered for. Throws ModelError, which the SDKs wrap as
 * a connection error with it as the cause (`toModelError` unwraps it).
 */
export function originBoundFetch(base: typeof fetch, origin: string, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES): typeof fetch {
  return async (input, init) => {
    const raw = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const url = new URL(raw);
    if (url.origin !== origin) {
      throw new ModelError('BAD_REQUEST', `Refused to send a request for ${origin} to ${url.origin}: a provider's key only ever goes to its own host.`);
    }
    const response = await base(input, { ...init, redirect: 'manual' });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      const location = response.headers.get('location');
      let target = 'another address';
      if (location) {
        try {
          const to = new URL(location, url);
          target = `${to.origin}${to.pathname}`;
        } catch {
          /* keep the generic text */
        }
      }
      throw new ModelError(
        'PROVIDER_ERROR',
        `${url.host} redirected the request to ${target}; Warden never follows a redirect with your key. If you trust that address, use it as the base URL.`,
        response.status,
      );
    }
    return boundedBody(response, maxResponseBytes, url.host);
  };
}

/**
 * The longest line of an event stream read. The SDKs' SSE line decoders copy and rescan their
 * whole buffer for every chunk until a newline comes, so one endless line costs time that grows
 * with the square of its length, on the main thread. A reply's longest line is one event (a whole
 * tool call's arguments at most, a few tens of KB for the tokens Warden asks for).
 */
export const MAX_SSE_LINE_BYTES = 1024 * 1024;

/**
 * The response with a body that errors (and cancels the connection) once more than `limit` bytes
 * arrived, or, for an event stream, a line longer than MAX_SSE_LINE_BYTES. The error is a
 * ModelError, which the SDKs pass through to the adapter as it is.
 */
function boundedBody(response: Response, limit: number, host: string): Response {
  if (!response.body) return response;
  const eventStream = /text\/event-stream/i.test(response.headers.get('content-type') ?? '');
  const tooMuch = (what: string) =>
    new ModelError('PROVIDER_ERROR', `${host} sent ${what}, far more than any reply Warden asks for; Warden stopped reading it. The server may be misconfigured or hostile.`);
  let seen = 0;
  let line = 0;
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) return controller.error(tooMuch(`more than ${Math.round(limit / (1024 * 1024))} MB in one response`));
        if (eventStream) {
          const lf = chunk.lastIndexOf(0x0a);
          const end = Math.max(lf, chunk.lastIndexOf(0x0d));
          line = end < 0 ? line + chunk.byteLength : chunk.byteLength - end - 1;
          if (line > MAX_SSE_LINE_BYTES) return controller.error(tooMuch(`a stream line of more than ${MAX_SSE_LINE_BYTES / (1024 * 1024)} MB in one response`));
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
}
