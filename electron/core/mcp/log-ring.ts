/**
 * A per-server ring buffer of log lines (the server's stderr plus Warden's own notes about the
 * connection), shown in the Servers view. Bounded by line count and by bytes so a chatty or
 * hostile server cannot grow Warden's memory: the oldest lines are dropped first, and the number
 * dropped is kept so the UI can say so.
 */

/**
 * One captured line. `source` says who wrote it: the server process (stderr), Warden, or the
 * server through MCP's log messages (`server`).
 */
export interface LogLine {
  seq: number;
  /** Milliseconds since the epoch. */
  time: number;
  source: 'stderr' | 'warden' | 'server';
  /** Raw text as received (one line, no trailing newline, possibly truncated). Sanitize before display. */
  text: string;
}

export interface LogRingOptions {
  maxLines?: number;
  maxBytes?: number;
  /** Longer lines are cut to this many characters (with a marker) before they are stored. */
  maxLineLength?: number;
  now?: () => number;
}

import { Redactor } from '../redact/redactor';

/** Bounded FIFO of log lines with a partial-line assembler for streamed chunks. */
export class LogRing {
  private readonly lines: LogLine[] = [];
  private bytes = 0;
  private seq = 0;
  private partial = '';
  private droppedCount = 0;
  /** The one redactor implementation, fed with this connection's own secrets (encoded forms included). */
  private readonly secrets = new Redactor();
  private readonly maxLines: number;
  private readonly maxBytes: number;
  private readonly maxLineLength: number;
  private readonly now: () => number;

  constructor(options: LogRingOptions = {}) {
    this.maxLines = options.maxLines ?? 1000;
    this.maxBytes = options.maxBytes ?? 256 * 1024;
    this.maxLineLength = options.maxLineLength ?? 4096;
    this.now = options.now ?? Date.now;
  }

  /** Appends a streamed chunk of stderr; complete lines are stored, a trailing partial line waits. */
  appendChunk(chunk: string): void {
    const text = this.partial + chunk;
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    if (this.partial.length > this.maxLineLength) {
      parts.push(this.partial);
      this.partial = '';
    }
    for (const part of parts) this.push('stderr', part.replace(/\r$/, ''));
  }

  /** Flushes a pending partial line (the stream ended without a newline). */
  flush(): void {
    if (this.partial) this.push('stderr', this.partial);
    this.partial = '';
  }

  /** Stores one line written by Warden itself (connects, exits, protocol errors). */
  note(text: string): void {
    this.push('warden', text);
  }

  /** Stores one log message the server sent over MCP (already one line, level first). */
  server(text: string): void {
    this.push('server', text);
  }

  /**
   * Registers a secret value this connection uses; every later line has it replaced before it is
   * stored, so a server that prints its token never puts it in front of the UI.
   */
  addSecret(value: string): void {
    if (value.length >= 4) this.secrets.register(value);
  }

  private push(source: LogLine['source'], unscrubbed: string): void {
    const raw = this.secrets.scrubString(unscrubbed);
    const text = raw.length > this.maxLineLength ? `${raw.slice(0, this.maxLineLength)} …[truncated ${raw.length - this.maxLineLength} chars]` : raw;
    const line: LogLine = { seq: ++this.seq, time: this.now(), source, text };
    this.lines.push(line);
    this.bytes += text.length * 2;
    while (this.lines.length > this.maxLines || (this.bytes > this.maxBytes && this.lines.length > 1)) {
      const dropped = this.lines.shift()!;
      this.bytes -= dropped.text.length * 2;
      this.droppedCount += 1;
    }
  }

  /** Lines with `seq` greater than `afterSeq` (all retained lines by default), oldest first. */
  read(afterSeq = 0, limit = this.maxLines): LogLine[] {
    const out = this.lines.filter((l) => l.seq > afterSeq);
    return out.slice(Math.max(0, out.length - limit));
  }

  /** How many lines were dropped to stay within bounds. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Approximate retained size in bytes (UTF-16). */
  get size(): number {
    return this.bytes;
  }
}
