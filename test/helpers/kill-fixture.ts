/**
 * Runs a fixture core (a script under test/fixtures/) in its own Node process until its output
 * says it reached the moment to crash at, then SIGKILLs it — a real crash, no shutdown code runs —
 * and the stdio server it started, whose process group id is the last number the line names
 * (Warden starts servers in their own group; a crash leaves them behind, as on a real machine).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsxLoader = path.join(root, 'node_modules/tsx/dist/loader.mjs');

export interface KillFixtureOptions {
  /** The fixture, relative to the repository root. */
  fixture: string;
  /** Extra environment for the fixture (its folder, files it reads). */
  env: Record<string, string>;
  /** The line the fixture prints at the moment to crash; its last group is the server's process group id. */
  ready: RegExp;
  /** A further condition to wait for after the line (e.g. the server really received the call). */
  alsoWait?: () => boolean;
  /** What the fixture was waiting for, for the failure message. */
  what: string;
  timeoutMs: number;
}

/** Returns the matched line once the fixture and its server are gone. */
export async function killFixtureWhen(options: KillFixtureOptions): Promise<RegExpExecArray> {
  const child = spawn(process.execPath, ['--import', tsxLoader, path.join(root, options.fixture)], {
    env: { ...process.env, ...options.env, TSX_LOADER: tsxLoader },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    const deadline = Date.now() + options.timeoutMs;
    let line: RegExpExecArray | null = null;
    while (!(line = options.ready.exec(out)) || (options.alsoWait && !options.alsoWait())) {
      if (child.exitCode !== null) throw new Error(`${options.fixture} exited early: ${err}`);
      if (Date.now() > deadline) throw new Error(`${options.fixture}: ${options.what} never happened: ${out} ${err}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    await exited;
    try {
      process.kill(-Number(line[line.length - 1]), 'SIGKILL');
    } catch {
      // already gone
    }
    return line;
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}
