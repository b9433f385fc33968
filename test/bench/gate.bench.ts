/**
 * Gate overhead on an allowed call: the gate (validation, canonical JSON, fingerprint,
 * policy, journal records, the operation record, copies for the caller) in front of an in-memory
 * MCP server, vs the SDK client calling the same kind of server directly. Target: ratio < 1.2.
 *
 * Each variant runs in a fresh process of its own (`gate-variant.ts`), in alternating order, for
 * `PAIRS` rounds; a ratio is taken per round (each variant's median µs/call in that round, over
 * the direct call's median in the same round), and the median of those ratios is reported.
 * Alongside the gate: the gate without a journal (its own work only), the SDK call without a
 * signal (so the gate gets no credit for CallAbort being cheaper than Node's AbortSignal), and
 * the floor (only the work the gate's guarantees require, hand-written, no bookkeeping), which bounds from
 * below what any gate could reach on this machine, with the in-memory journal and with a journal
 * that stores nothing.
 *
 * If `tools/node22` is installed (the Node line Electron ships), the same is measured on it too.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { percentiles, type BenchModule, type Report } from './harness';
import { VARIANTS, type Variant } from './gate-variant';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const PAIRS = Number(process.env.WARDEN_BENCH_PAIRS ?? 5);
const run = promisify(execFile);

async function measure(node: string, variant: Variant): Promise<number> {
  const { stdout } = await run(node, ['--import', 'tsx', join(here, 'gate-variant.ts'), variant], { cwd: root, maxBuffer: 1 << 20 });
  const line = stdout.trim().split('\n').pop()!;
  const parsed = JSON.parse(line) as { variant: string; samples: number[] };
  if (parsed.variant !== variant || parsed.samples.length === 0) throw new Error(`gate-variant ${variant} printed ${line}`);
  return percentiles(parsed.samples, [50])[0]!;
}

async function runOn(node: string, prefix: string, report: Report, judged: boolean): Promise<void> {
  const medians: Record<Variant, number[]> = { direct: [], plain: [], gate: [], bare: [], floor: [], floor_nostore: [] };
  for (let k = 0; k < PAIRS; k++) {
    const order = k % 2 === 0 ? [...VARIANTS] : [...VARIANTS].reverse();
    for (const v of order) medians[v].push(await measure(node, v));
  }
  const med = (xs: number[]) => percentiles(xs, [50])[0]!;
  const ratio = (v: Variant, base: Variant) => med(medians[v].map((x, i) => x / medians[base][i]!));
  const target = judged ? { target: 'ratio < 1.2' } : {};
  const gateRatio = ratio('gate', 'direct');
  report({ name: `${prefix}direct_sdk_call`, value: med(medians.direct), unit: 'µs/call' });
  report({ name: `${prefix}allowed_call`, value: med(medians.gate), unit: 'µs/call', baseline: `${prefix}direct_sdk_call`, ratio: gateRatio, ...target, ...(judged ? { met: gateRatio < 1.2 } : {}) });
  report({ name: `${prefix}overhead`, value: med(medians.gate.map((g, i) => g - medians.direct[i]!)), unit: 'µs/call' });
  report({ name: `${prefix}allowed_call_no_journal`, value: med(medians.bare), unit: 'µs/call', baseline: `${prefix}direct_sdk_call`, ratio: ratio('bare', 'direct') });
  report({ name: `${prefix}direct_sdk_call_no_signal`, value: med(medians.plain), unit: 'µs/call' });
  report({ name: `${prefix}allowed_call_vs_no_signal_call`, value: med(medians.gate), unit: 'µs/call', baseline: `${prefix}direct_sdk_call_no_signal`, ratio: ratio('gate', 'plain') });
  report({ name: `${prefix}required_work_floor`, value: med(medians.floor), unit: 'µs/call', baseline: `${prefix}direct_sdk_call`, ratio: ratio('floor', 'direct') });
  report({ name: `${prefix}required_work_floor_vs_no_signal_call`, value: med(medians.floor), unit: 'µs/call', baseline: `${prefix}direct_sdk_call_no_signal`, ratio: ratio('floor', 'plain') });
  report({ name: `${prefix}required_work_floor_no_storage`, value: med(medians.floor_nostore), unit: 'µs/call', baseline: `${prefix}direct_sdk_call`, ratio: ratio('floor_nostore', 'direct') });
  report({ name: `${prefix}required_work_floor_no_storage_vs_no_signal_call`, value: med(medians.floor_nostore), unit: 'µs/call', baseline: `${prefix}direct_sdk_call_no_signal`, ratio: ratio('floor_nostore', 'plain') });
  report({ name: `${prefix}allowed_call_vs_floor`, value: med(medians.gate), unit: 'µs/call', baseline: `${prefix}required_work_floor`, ratio: ratio('gate', 'floor') });
}

const bench: BenchModule = {
  title:
    "Gate overhead: the real gate's own CPU on an allowed call vs the SDK client directly, one process per variant. Stubbed, to time only the gate: the SDK's in-memory transport and server stand in for stdio, the in-memory journal for the ledger, and calls name no operation id (the mcp, lag, history and durable-call benches make the app's durable stdio calls with ids, as chat does)",
  async run(report) {
    await runOn(process.execPath, 'gate.', report, true);
    const node22 = join(root, 'tools/node22/node_modules/node/bin/node');
    if (existsSync(node22)) await runOn(node22, 'gate.node22.', report, false);
  },
};
export default bench;
