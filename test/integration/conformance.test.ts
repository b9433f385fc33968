/**
 * MCP conformance: runs the client scenarios of @modelcontextprotocol/conformance
 * for protocol 2025-11-25 — the core scenarios and the auth suite — against Warden's adapter
 * (test/conformance/client.ts), and fails on any unexpected failure or warning.
 *
 * The runner needs Node 22 (tools/node22); the adapter runs under tsx on the project's Node. The
 * allow-list is test/conformance/expected-failures.yml, each entry explained in
 * test/conformance/README-section.md. Everything is local: no internet.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const NODE22 = join(ROOT, 'tools/node22/node_modules/node/bin/node');
const RUNNER = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const ADAPTER = `${join(ROOT, 'node_modules/.bin/tsx')} ${join(ROOT, 'test/conformance/client.ts')}`;
const SPEC = '2025-11-25';

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string;
  description?: string;
  errorMessage?: string;
  details?: Record<string, unknown>;
}

/** Runs the runner with `args`; resolves with its output once it exits. Its process group is killed on timeout. */
function runRunner(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    // Detached: the runner spawns a shell + adapter per scenario; the whole group is killed if it hangs.
    const child = spawn(NODE22, [RUNNER, ...args], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
      reject(new Error(`conformance runner did not finish within ${timeoutMs} ms\n${stdout.slice(-4000)}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** Scenario name → its checks, read from the runner's output directory. */
function readResults(outDir: string): Map<string, Check[]> {
  const results = new Map<string, Check[]>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name === 'checks.json') {
        const scenario = relative(outDir, dir).replace(/\\/g, '/').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
        results.set(scenario, JSON.parse(readFileSync(p, 'utf8')) as Check[]);
      }
    }
  };
  walk(outDir);
  return results;
}

/** The `client:` entries of expected-failures.yml (a flat list; parsed without a YAML dependency). */
function allowList(): string[] {
  const text = readFileSync(join(ROOT, 'test/conformance/expected-failures.yml'), 'utf8');
  const out: string[] = [];
  let inClient = false;
  for (const line of text.split('\n')) {
    if (/^\S/.test(line)) inClient = /^client:\s*$/.test(line);
    const m = /^\s+-\s+(\S+)\s*$/.exec(line);
    if (inClient && m) out.push(m[1]!);
  }
  return out;
}

const outRoot = mkdtempSync(join(tmpdir(), 'warden-conformance-'));
afterAll(() => rmSync(outRoot, { recursive: true, force: true }));

/** Runs one scenario into its own output directory and returns its checks. */
async function runScenario(scenario: string, attempt = 0): Promise<{ checks: Check[]; stdout: string }> {
  const outDir = join(outRoot, `${scenario.replace(/\//g, '_')}-${attempt}`);
  const run = await runRunner(['client', '--command', ADAPTER, '--scenario', scenario, '--timeout', '120000', '-o', outDir], 200_000);
  const results = readResults(outDir);
  return { checks: results.get(scenario) ?? [], stdout: run.stdout + run.stderr };
}

/** True when the only complaint is sse-retry's reconnect timing being slightly late (machine load). */
function onlySlightlyLate(checks: Check[]): boolean {
  const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  return bad.length > 0 && bad.every((c) => c.id === 'client-sse-retry-timing' && c.details?.slightlyLate === true);
}

// The scenarios run 3 at a time (2 shared cores); sse-retry, whose check measures a 500 ms
// reconnect delay with a 200 ms tolerance, runs alone afterwards, and a "slightly late" (not early,
// not very late) reading is re-measured up to twice, since that is what CPU contention looks like.
const TIMING_SENSITIVE = 'sse-retry';
const CONCURRENCY = 3;

describe('MCP conformance, client scenarios (protocol 2025-11-25)', () => {
  it('core scenarios and the auth suite pass, except the justified allow-list', { timeout: 600_000 }, async () => {
    const listed = await runRunner(['list', '--client', '--spec-version', SPEC], 60_000);
    const expectedScenarios = [...listed.stdout.matchAll(/^\s+-\s+(\S+)/gm)].map((m) => m[1]!);
    expect(expectedScenarios).toEqual(expect.arrayContaining(['initialize', 'tools_call', 'sse-retry', 'auth/metadata-default', 'auth/scope-step-up']));

    const results = new Map<string, Check[]>();
    const logs: string[] = [];
    const queue = expectedScenarios.filter((s) => s !== TIMING_SENSITIVE);
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let s = queue.shift(); s !== undefined; s = queue.shift()) {
          const { checks, stdout } = await runScenario(s);
          results.set(s, checks);
          logs.push(stdout.slice(-1500));
        }
      }),
    );
    if (expectedScenarios.includes(TIMING_SENSITIVE)) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const { checks, stdout } = await runScenario(TIMING_SENSITIVE, attempt);
        results.set(TIMING_SENSITIVE, checks);
        logs.push(stdout.slice(-1500));
        if (!onlySlightlyLate(checks)) break;
      }
    }
    const allowed = allowList();
    const readme = readFileSync(join(ROOT, 'test/conformance/README-section.md'), 'utf8');

    // Every scenario of the spec version ran (core + auth), none silently skipped.
    expect([...results.keys()].sort()).toEqual([...expectedScenarios].sort());

    const problems: string[] = [];
    const failing: string[] = [];
    for (const [scenario, checks] of results) {
      const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
      if (bad.length > 0) failing.push(scenario);
      if (!checks.some((c) => c.status === 'SUCCESS')) problems.push(`${scenario}: no passing check at all`);
      if (bad.length > 0 && !allowed.includes(scenario)) {
        problems.push(`${scenario}: ${bad.map((c) => `${c.id} ${c.status}: ${c.errorMessage ?? c.description ?? ''}`).join('; ')}`);
      }
    }
    for (const scenario of allowed) {
      if (!failing.includes(scenario)) problems.push(`${scenario}: allow-listed but passes now — remove it from expected-failures.yml and the README`);
      if (!readme.includes(`\`${scenario}\``)) problems.push(`${scenario}: allow-listed without a reason in README-section.md`);
    }
    expect(problems, `runner output (tails):\n${logs.join('\n---\n').slice(-6000)}`).toEqual([]);
    expect(results.size).toBeGreaterThanOrEqual(18);
  });
});
