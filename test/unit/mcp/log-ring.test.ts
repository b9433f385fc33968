import { describe, expect, it } from 'vitest';
import { LogRing } from '../../../electron/core/mcp/log-ring';

describe('LogRing', () => {
  it('assembles lines across chunks and keeps a trailing partial line until it completes', () => {
    const ring = new LogRing();
    ring.appendChunk('hel');
    ring.appendChunk('lo\r\nwor');
    expect(ring.read().map((l) => l.text)).toEqual(['hello']);
    ring.appendChunk('ld\n');
    expect(ring.read().map((l) => l.text)).toEqual(['hello', 'world']);
    ring.appendChunk('tail');
    ring.flush();
    expect(ring.read().at(-1)).toMatchObject({ text: 'tail', source: 'stderr' });
  });

  it('stays within its line bound, dropping the oldest lines and counting them', () => {
    const ring = new LogRing({ maxLines: 5 });
    for (let i = 0; i < 12; i++) ring.note(`line ${i}`);
    expect(ring.read().map((l) => l.text)).toEqual(['line 7', 'line 8', 'line 9', 'line 10', 'line 11']);
    expect(ring.dropped).toBe(7);
  });

  it('stays within its byte bound however much a server writes', () => {
    const ring = new LogRing({ maxBytes: 10_000, maxLineLength: 1000 });
    for (let i = 0; i < 1000; i++) ring.appendChunk('x'.repeat(300) + '\n');
    expect(ring.size).toBeLessThanOrEqual(10_000);
    expect(ring.read().length).toBeGreaterThan(0);
  });

  it('cuts an endless line without a newline instead of buffering it forever', () => {
    const ring = new LogRing({ maxLineLength: 100 });
    for (let i = 0; i < 50; i++) ring.appendChunk('y'.repeat(50));
    const lines = ring.read();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.text.length < 200)).toBe(true);
  });

  it('reads incrementally after a sequence number', () => {
    const ring = new LogRing();
    ring.note('a');
    ring.note('b');
    const [first] = ring.read();
    expect(ring.read(first!.seq).map((l) => l.text)).toEqual(['b']);
  });
});

describe('LogRing secret scrubbing', () => {
  it('replaces every registered secret value before a line is stored, including in partial-line assembly', () => {
    const ring = new LogRing();
    ring.addSecret('s3cr3t-value');
    ring.appendChunk('token=s3cr3t-');
    ring.appendChunk('value and again s3cr3t-value\n');
    ring.note('warden saw s3cr3t-value');
    expect(ring.read().map((l) => l.text)).toEqual(['token=[REDACTED] and again [REDACTED]', 'warden saw [REDACTED]']);
    expect(JSON.stringify(ring.read())).not.toContain('s3cr3t');
  });
});
