/**
 * What observing a call costs: a 1 MiB `write_file` of a program on this computer (server-filesystem
 * as configured), through the local-files observer the gate asks as each call leaves. The write
 * itself is done between the observer's two halves, as the server would; what is timed is what
 * Warden adds (reading the target and its folder before, hashing the 1 MiB after, the approved
 * content's digest) and how long the event loop was held by Warden's own work meanwhile. A call
 * with no path argument is timed too: it pays one look at its arguments and no observation.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createFileObserver } from '../../electron/core/observe/file-observer';
import type { ObservedCall, ToolDescriptor } from '../../electron/core/gate/ports';
import { percentiles, type BenchModule } from './harness';
import { sampleOwnDelay } from './own-delay';

const ROUNDS = Number(process.env.WARDEN_BENCH_ROUNDS ?? 40);

const bench: BenchModule = {
  title: 'Observing what a call did: a 1 MiB write read back by Warden itself, and a call with no path',
  async run(report) {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-observe-bench-'));
    try {
      const observer = createFileObserver();
      const tool: ToolDescriptor = {
        serverId: 'files',
        accountId: 'default',
        name: 'write_file',
        inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
        contractHash: 'c',
        endpointHash: 'e',
        serverKind: 'filesystem',
        workingFolder: dir,
      };
      // A folder like a project's: a few dozen files beside the target.
      for (let i = 0; i < 40; i++) writeFileSync(path.join(dir, `other-${i}.txt`), `file ${i}`);
      const added: number[] = [];
      let lastOutcome = '';
      const delay = sampleOwnDelay();
      for (let round = 0; round < ROUNDS; round++) {
        const target = path.join(dir, 'report.txt');
        const content = `${round}`.padEnd(1024 * 1024, 'x');
        const call: ObservedCall = { operationId: `op-${round}`, serverId: 'files', accountId: 'default', toolName: 'write_file', args: { path: target, content }, tool };
        const t0 = performance.now();
        const watch = observer.watch(call)!;
        await watch.before();
        const t1 = performance.now();
        await writeFile(target, content);
        const t2 = performance.now();
        const observation = await watch.after('succeeded');
        const t3 = performance.now();
        added.push(t1 - t0 + (t3 - t2));
        lastOutcome = observation.targets[0]!.matches ? 'matches' : 'differs';
      }
      const own = delay.stop();
      if (lastOutcome !== 'matches') throw new Error('the observed write did not match the approved content');
      const [p50, p95] = percentiles(added, [50, 95]);
      report({ name: 'observe.1 MiB write: added per call (median)', value: p50!, unit: 'ms', target: '< 10 ms', met: p50! < 10 });
      report({ name: 'observe.1 MiB write: added per call (p95)', value: p95!, unit: 'ms' });
      if (own) report({ name: "observe.1 MiB write: event loop held by Warden's own work (p99)", value: own.p99, unit: 'ms', target: '< 10 ms', met: own.p99 < 10 });

      const plain: ObservedCall = { operationId: 'op-plain', serverId: 'files', accountId: 'default', toolName: 'echo', args: { message: 'hello', count: 3 }, tool };
      const looks: number[] = [];
      for (let i = 0; i < 20_000; i++) {
        const t0 = performance.now();
        if (observer.watch(plain) !== null) throw new Error('a call with no path was observed');
        looks.push((performance.now() - t0) * 1000);
      }
      report({ name: 'observe.call with no path: look at its arguments (median)', value: percentiles(looks, [50])[0]!, unit: 'µs' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default bench;
