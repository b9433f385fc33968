/**
 * The one-message cap on HTTP answers: a JSON answer or one event of an event stream past the
 * limit is not read further and the connection is told; a long stream of small events is fine.
 */
import { describe, expect, it } from 'vitest';
import { cappedFetch, MessageTooLargeError } from '../../../electron/core/mcp/capped-fetch';

const enc = new TextEncoder();
/** A fake server answer from chunks of text. */
const answer = (chunks: string[], type: string, headers: Record<string, string> = {}) => async () =>
  new Response(
    new ReadableStream<Uint8Array>({
      start(c) {
        for (const chunk of chunks) c.enqueue(enc.encode(chunk));
        c.close();
      },
    }),
    { headers: { 'content-type': type, ...headers } },
  );

describe('cappedFetch', () => {
  it('a JSON answer within the limit is read as sent; one past it fails with a plain error and tells the connection', async () => {
    const told: string[] = [];
    const ok = cappedFetch(answer(['{"a":', '"12345"}'], 'application/json'), (why) => told.push(why), 64);
    expect(await (await ok('http://x')).json()).toEqual({ a: '12345' });
    const big = cappedFetch(answer(['{"a":"', 'x'.repeat(60), 'x'.repeat(60), '"}'], 'application/json'), (why) => told.push(why), 64);
    await expect((await big('http://x')).json()).rejects.toBeInstanceOf(MessageTooLargeError);
    expect(told).toEqual(["the server's answer is larger than 64 bytes, the most Warden reads of one message; it was not read"]);
  });

  it('an answer that may carry no body (204) is passed through as it came', async () => {
    const told: string[] = [];
    const f = cappedFetch(async () => new Response(null, { status: 204 }), (why) => told.push(why), 64);
    expect((await f('http://x')).status).toBe(204);
    expect(told).toEqual([]);
  });

  it('a declared Content-Length past the limit is refused before reading', async () => {
    const told: string[] = [];
    const f = cappedFetch(answer(['{}'], 'application/json', { 'content-length': '1000' }), (why) => told.push(why), 64);
    await expect(f('http://x')).rejects.toBeInstanceOf(MessageTooLargeError);
    expect(told).toHaveLength(1);
  });

  it('an event stream may run long: each event counts on its own (LF and CRLF, split across chunks)', async () => {
    const event = `data: ${'y'.repeat(40)}\n\n`;
    const crlf = `data: ${'z'.repeat(40)}\r\n\r\n`;
    const chunks = [...Array.from({ length: 50 }, () => event), crlf.slice(0, 47), crlf.slice(47), crlf.slice(0, 48), crlf.slice(48)];
    const told: string[] = [];
    const f = cappedFetch(answer(chunks, 'text/event-stream'), (why) => told.push(why), 64);
    expect((await (await f('http://x')).text()).length).toBe(chunks.join('').length);
    expect(told).toEqual([]);
    const one = cappedFetch(answer(['data: ', 'q'.repeat(50), 'q'.repeat(50), '\n\n'], 'text/event-stream'), (why) => told.push(why), 64);
    await expect((await one('http://x')).text()).rejects.toBeInstanceOf(MessageTooLargeError);
    expect(told).toHaveLength(1);
  });
});
