/**
 * The fetch every HTTP connection uses, with one message capped in size before anything reads it
 * whole: a JSON answer may be at most `maxBytes` long, and so may each event of an event stream
 * (a stream as such may run for hours; only one event is ever assembled at a time).
 *
 * Why here: the SDK's Streamable HTTP transport reads a JSON answer with `response.json()` and
 * assembles an event's data in full before Warden sees the message, so the cap on a tool result or
 * a read resource (256 KiB kept, `gate/result-cap.ts`) comes after a 50 MB answer was already in
 * memory, twice. The limit is the one a stdio server has for one line (`maxLineBytes` in
 * process-transport.ts, 16 MiB): far above the 256 KiB kept of any result — the gate still reads
 * the whole answer to record its length and hash — so a server behaves the same over both
 * transports, and memory stays bounded by a few times 16 MiB whatever a server sends.
 *
 * A message past the limit is not read further (the body is cancelled) and `onTooLarge` is told:
 * the connection closes it, as a stdio connection ends at an overlong line, so a pending request
 * ends at once (a tool call whose answer was refused is an unknown outcome, never retried) instead
 * of waiting for a timeout.
 */

/** The fetch shape the SDK's HTTP transports take. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Longest single message accepted over HTTP: the same as one stdio line. */
export const MAX_HTTP_MESSAGE_BYTES = 16 * 1024 * 1024;

/** Thrown into the SDK's read of a message past the limit. */
export class MessageTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the server's answer is larger than ${formatMiB(limitBytes)}, the most Warden reads of one message; it was not read`);
    this.name = 'MessageTooLargeError';
  }
}

function formatMiB(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/**
 * Wraps `inner` (the OAuth-guarded fetch, or the global one) so every response body is capped as
 * described above. `onTooLarge` is called once per refused message, with why in words.
 */
export function cappedFetch(inner: FetchLike | undefined, onTooLarge: (why: string) => void, maxBytes = MAX_HTTP_MESSAGE_BYTES): FetchLike {
  const base: FetchLike = inner ?? ((url, init) => fetch(url, init));
  return async (url, init) => {
    const response = await base(url, init);
    // No body, or a status that may not carry one (a Response cannot be rebuilt around it).
    if (!response.body || NULL_BODY_STATUS.has(response.status)) return response;
    const eventStream = (response.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
    const declared = Number(response.headers.get('content-length') ?? NaN);
    const refuse = (controller?: TransformStreamDefaultController<Uint8Array>) => {
      const error = new MessageTooLargeError(maxBytes);
      onTooLarge(error.message);
      controller?.error(error);
      return error;
    };
    if (!eventStream && Number.isFinite(declared) && declared > maxBytes) {
      // Said to be too large before a byte is read: none is.
      await response.body.cancel().catch(() => undefined);
      throw refuse();
    }
    const counter = eventStream ? eventCounter(maxBytes) : totalCounter(maxBytes);
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (counter(chunk)) refuse(controller);
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

const NULL_BODY_STATUS: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

/** True once the whole body is past `max`. */
function totalCounter(max: number): (chunk: Uint8Array) => boolean {
  let total = 0;
  return (chunk) => (total += chunk.byteLength) > max;
}

const LF = 10;
const CR = 13;

/**
 * True once one event of an event stream is past `max`. Events end at a blank line; the bytes of
 * every line since the last blank one count (line ends included), carried across chunks.
 */
function eventCounter(max: number): (chunk: Uint8Array) => boolean {
  let event = 0;
  let line = 0;
  let endedWithCR = false;
  return (chunk) => {
    let at = 0;
    const carriedCR = endedWithCR;
    endedWithCR = chunk.length > 0 && chunk[chunk.length - 1] === CR;
    for (;;) {
      const lf = chunk.indexOf(LF, at);
      const end = lf === -1 ? chunk.length : lf;
      // A CR just before the LF ends the line; it is not part of its content (even when the
      // previous chunk ended with it).
      line += end - at - (lf !== -1 && end > at && chunk[end - 1] === CR ? 1 : 0);
      if (lf === 0 && carriedCR) line -= 1;
      if (event + line > max) return true;
      if (lf === -1) return false;
      if (line === 0) event = 0;
      else event += line + 1;
      line = 0;
      at = lf + 1;
    }
  };
}
