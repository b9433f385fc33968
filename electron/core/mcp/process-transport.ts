/**
 * The stdio transport for local servers: spawns the exact command with its arguments (never
 * through a shell), speaks newline-delimited JSON-RPC on stdin/stdout, captures stderr into the
 * server's log ring, and on close kills the whole process tree, not just the direct child.
 *
 * Why not the SDK's StdioClientTransport: it kills only the direct child (a server started
 * through `npx`/`uvx`/a wrapper leaves its real process running), it lets one malformed line
 * from the server surface as an unattributed error, and it does not report how the process
 * ended. This class implements the same SDK `Transport` interface, so the SDK `Client` drives it
 * unchanged.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { parseJsonRpcLine } from './jsonrpc';
import type { LogRing } from './log-ring';
import { later } from '../turns';

/** Marks an error this transport already wrote to the log, so the connection does not log it twice. */
export const LOGGED = Symbol('warden.logged');

function logged<E extends Error>(error: E): E {
  (error as E & { [LOGGED]?: true })[LOGGED] = true;
  return error;
}

/**
 * Rejected by `start` when the process could not be started at all. `spawnCode` is the errno
 * (`ENOENT`, `EACCES`); `cwdMissing` is true when ENOENT was about the working folder, not the
 * command (Node reports both as ENOENT).
 */
export class ProcessStartError extends Error {
  constructor(
    message: string,
    readonly spawnCode: string | undefined,
    readonly cwdMissing: boolean,
  ) {
    super(message);
    this.name = 'ProcessStartError';
  }
}

/** Rejected by `send` when no process is running: the message certainly did not leave. */
export class TransportNotConnectedError extends Error {
  readonly notSent = true as const;
  constructor(message = 'The server process is not running') {
    super(message);
    this.name = 'TransportNotConnectedError';
  }
}

export interface ProcessTransportOptions {
  command: string;
  args: readonly string[];
  cwd?: string;
  /** Variables added to the minimal inherited environment (HOME, PATH, …); values may be secrets. */
  env: Record<string, string>;
  log: LogRing;
  /** Longest stdout line accepted before the stream is treated as broken (default 16 MiB). */
  maxLineBytes?: number;
  /** How long to wait after closing stdin before SIGTERM, and after SIGTERM before SIGKILL. */
  gracefulExitMs?: number;
  /** Told about each stdout line that is not a JSON-RPC message (after it has been logged). */
  onMalformed?: (line: string, error: Error) => void;
}

const IS_WINDOWS = process.platform === 'win32';
/** Lines read and waiting to be handed on past which stdout is paused (resumed at half). */
const MAX_WAITING_LINES = 1024;

/** An SDK `Transport` over a spawned process with process-tree cleanup. */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: ChildProcess | undefined;
  /** Pieces of the stdout line not finished yet (none of them holds a newline), and their total length. */
  private stdoutPieces: string[] = [];
  private stdoutPending = 0;
  /** Whole lines read and not handed on yet (from `linesHead`), and whether a delivery is queued. */
  private lines: string[] = [];
  private linesHead = 0;
  private delivering = false;
  private stdoutPaused = false;
  /** The stream ended while lines were waiting: close once they are handed on. */
  private closeWhenDelivered = false;
  private closed = false;
  private exited: Promise<void> | undefined;
  private closeNotified = false;
  private closing: Promise<void> | undefined;
  /** How the process ended (`code 3`, `signal SIGKILL`), once it has. */
  exitDescription: string | undefined;
  /** The exit code and signal, once the process has ended. */
  exit: { code: number | null; signal: string | null } | undefined;
  /** The last non-empty line the process wrote to stderr (raw; sanitize before display). */
  lastStderrLine: string | undefined;
  /** The first stdout line that was not JSON-RPC (raw, at most 300 characters). */
  firstMalformedLine: string | undefined;
  /** The unfinished end of the stderr stream, to find its last line. */
  private stderrTail = '';

  constructor(private readonly options: ProcessTransportOptions) {}

  /** Pid of the spawned process (the process-group leader on POSIX), once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Spawns the process; resolves once it runs, rejects with a clear message if it cannot start. */
  start(): Promise<void> {
    if (this.child) throw new Error('ProcessTransport already started');
    const { command, args, cwd, env, log } = this.options;
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(command, [...args], {
          cwd,
          env: { ...getDefaultEnvironment(), ...env },
          stdio: ['pipe', 'pipe', 'pipe'],
          shell: false,
          // Own process group on POSIX, so close() can signal the whole tree at once.
          detached: !IS_WINDOWS,
          windowsHide: true,
        });
      } catch (error) {
        reject(new ProcessStartError(`Could not start ${command}: ${errorText(error)}`, (error as NodeJS.ErrnoException).code, false));
        return;
      }
      this.child = child;
      let started = false;
      this.exited = new Promise((done) => child.once('exit', () => done()));
      child.once('error', (error: NodeJS.ErrnoException) => {
        if (started) {
          this.onerror?.(logged(error));
          return;
        }
        // Node reports a missing working folder as ENOENT too; only the folder can tell them apart.
        void (error.code === 'ENOENT' && cwd !== undefined ? folderMissing(cwd) : Promise.resolve(false)).then((cwdMissing) => {
          const why = cwdMissing ? `working folder not found: ${cwd}` : error.code === 'ENOENT' ? `command not found: ${command}` : errorText(error);
          log.note(`could not start: ${why}`);
          reject(new ProcessStartError(`Could not start ${command}: ${why}`, error.code, cwdMissing));
        });
      });
      child.once('spawn', () => {
        started = true;
        log.note(`started pid ${child.pid}`);
        resolve();
      });
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => this.onStdout(chunk));
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (chunk: string) => {
        log.appendChunk(chunk);
        this.noteStderr(chunk);
      });
      child.stdin!.on('error', (error) => log.note(`stdin error: ${errorText(error)}`));
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        this.exitDescription = signal ? `signal ${signal}` : `code ${code}`;
        log.flush();
        log.note(`process exited (${this.exitDescription})`);
        // stdout may still hold the last lines; 'close' fires once they are read. A grandchild
        // holding the pipes open must not delay the news that the server is gone.
        const fallback = setTimeout(() => this.notifyClosed(), 250);
        child.once('close', () => {
          clearTimeout(fallback);
          this.notifyClosed();
        });
      });
    });
  }

  private onStdout(chunk: string): void {
    // Usually one chunk is one or more whole lines: split in place with a moving start index, one
    // slice per line. A line longer than a chunk is kept as a list of its pieces and joined once
    // when its newline arrives: joining or re-scanning the growing line on every chunk would cost
    // time quadratic in its length (seconds of main thread for one large result).
    let start = 0;
    let newline = chunk.indexOf('\n');
    if (newline !== -1 && this.stdoutPieces.length > 0) {
      this.stdoutPieces.push(chunk.slice(0, newline));
      const line = this.stdoutPieces.join('');
      this.stdoutPieces = [];
      this.stdoutPending = 0;
      const end = line.charCodeAt(line.length - 1) === 13 ? line.length - 1 : line.length;
      if (end > 0) this.queueLine(end === line.length ? line : line.slice(0, end));
      start = newline + 1;
      newline = chunk.indexOf('\n', start);
    }
    while (newline !== -1) {
      const end = newline > start && chunk.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      if (end > start) this.queueLine(chunk.slice(start, end));
      start = newline + 1;
      newline = chunk.indexOf('\n', start);
    }
    if (start === chunk.length) return;
    this.stdoutPieces.push(start === 0 ? chunk : chunk.slice(start));
    this.stdoutPending += chunk.length - start;
    const limit = this.options.maxLineBytes ?? 16 * 1024 * 1024;
    if (this.stdoutPending > limit) {
      this.stdoutPieces = [];
      this.stdoutPending = 0;
      const error = new Error(`server wrote a stdout line longer than ${limit} bytes; closing the connection`);
      this.options.log.note(`protocol error: ${error.message}`);
      this.onerror?.(logged(error));
      void this.close();
    }
  }

  /** Keeps the last non-empty stderr line (what a server that fails at start usually says why in). */
  private noteStderr(chunk: string): void {
    const text = (this.stderrTail + chunk).slice(-4096);
    const lines = text.split(/\r?\n/);
    this.stderrTail = lines.pop() ?? '';
    for (let i = lines.length - 1; i >= 0; i--) {
      if (lines[i]!.trim() !== '') {
        this.lastStderrLine = lines[i]!.trim().slice(0, 300);
        break;
      }
    }
    if (this.stderrTail.trim() !== '') this.lastStderrLine = this.stderrTail.trim().slice(0, 300);
  }

  /**
   * Lines are handed on one per turn of the event loop (turns.ts), in order: one read often holds
   * dozens of answers, and each answer settles a call whose caller goes on at once (the gate's
   * bookkeeping, the next request), so handling them all in the read's task would stall the main
   * process for as long as all of them take. While many lines wait, stdout is paused: a flooding
   * server fills its pipe, not Warden's memory.
   */
  private queueLine(line: string): void {
    this.lines.push(line);
    if (!this.stdoutPaused && this.lines.length - this.linesHead >= MAX_WAITING_LINES) {
      this.stdoutPaused = true;
      this.child?.stdout?.pause();
    }
    if (!this.delivering) {
      this.delivering = true;
      later(this.deliverNext);
    }
  }

  private readonly deliverNext = (): void => {
    const line = this.lines[this.linesHead]!;
    this.lines[this.linesHead++] = '';
    if (this.linesHead === this.lines.length) {
      this.lines = [];
      this.linesHead = 0;
      this.delivering = false;
    } else later(this.deliverNext);
    if (this.stdoutPaused && this.lines.length - this.linesHead <= MAX_WAITING_LINES / 2) {
      this.stdoutPaused = false;
      this.child?.stdout?.resume();
    }
    this.onLine(line);
    // The close waits for the lines read before it: answers the server sent before it exited.
    if (!this.delivering && this.closeWhenDelivered) this.notifyClosed();
  };

  private onLine(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = parseJsonRpcLine(line);
    } catch (cause) {
      // A blank (whitespace-only) line is not a message and not an error either.
      if (line.trim() === '') return;
      this.firstMalformedLine ??= line.slice(0, 300);
      const error = new Error(`malformed JSON-RPC from server: ${line.slice(0, 200)}${line.length > 200 ? '…' : ''}`);
      this.options.log.note(`protocol error: ${error.message} (${errorText(cause).split('\n')[0]})`);
      this.options.onMalformed?.(line, error);
      this.onerror?.(logged(error));
      return;
    }
    // Whatever the client does with a message (the SDK's routing, our progress forwarding) must
    // not abort this chunk's remaining lines: they were read and would otherwise be lost.
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.options.log.note(`error while handling a message from the server: ${errorText(error).split('\n')[0]}`);
      try {
        this.onerror?.(logged(error instanceof Error ? error : new Error(errorText(error))));
      } catch {
        // the error is in the log; nothing else can be done with it here
      }
    }
  }

  /** Writes one message; rejects with TransportNotConnectedError if the process is not running. */
  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (this.closed || !stdin || !stdin.writable || this.exitDescription !== undefined) {
      return Promise.reject(new TransportNotConnectedError());
    }
    // Resolve as soon as the bytes are queued (as the SDK's own transport does); wait only when
    // the pipe pushes back. Write errors surface through stdin's 'error' and the process exit.
    if (stdin.write(JSON.stringify(message) + '\n')) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onDrain = () => {
        stdin.off('close', onClose);
        resolve();
      };
      const onClose = () => {
        stdin.off('drain', onDrain);
        reject(new Error('the server closed its stdin before the message was written'));
      };
      stdin.once('drain', onDrain);
      stdin.once('close', onClose);
    });
  }

  /**
   * Stops the server: closes stdin (the MCP-specified polite request), then SIGTERM and finally
   * SIGKILL to the whole process group. Resolves once the direct child has exited.
   */
  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async stop(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (child?.pid !== undefined && this.exitDescription === undefined) {
      const grace = this.options.gracefulExitMs ?? 500;
      try {
        child.stdin?.end();
      } catch {
        // already closed
      }
      if (!(await waitFor(this.exited!, grace))) {
        killTree(child.pid, 'SIGTERM');
        if (!(await waitFor(this.exited!, grace * 2))) killTree(child.pid, 'SIGKILL');
      }
      await this.exited;
    }
    // The direct child is gone; anything it left in its group goes too.
    if (child?.pid !== undefined) killTree(child.pid, 'SIGKILL');
    this.notifyClosed();
  }

  private notifyClosed(): void {
    if (this.closeNotified) return;
    if (this.delivering) {
      this.closeWhenDelivered = true;
      return;
    }
    this.closeNotified = true;
    this.closed = true;
    this.onclose?.();
  }
}

/** Signals every process in the group led by `pid` (POSIX) or the tree rooted at it (Windows). */
export function killTree(pid: number, signal: NodeJS.Signals): void {
  if (IS_WINDOWS) {
    // taskkill /T walks the tree; /F forces. Spawned directly, no shell.
    spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true }).on('error', () => {});
    return;
  }
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already empty.
  }
}

/** True when `cwd` does not exist (checked only after a spawn failed, off the event loop). */
async function folderMissing(cwd: string): Promise<boolean> {
  try {
    await stat(cwd);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

async function waitFor(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
