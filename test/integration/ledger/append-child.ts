/**
 * The process the extension crash test kills: it opens the ledger (running recovery) with a small
 * preallocation chunk, so nearly every append first extends the segment with zeros, and appends
 * durably in a loop. After each durable append resolves it prints `acked <seq>` (stdout to a pipe
 * is synchronous on Linux, so a printed seq was durable before the line left).
 *
 * Env: WARDEN_LEDGER_DIR, PREALLOCATE_BYTES, SEED.
 */
import { Ledger } from '../../../electron/core/ledger/ledger';

const dir = process.env.WARDEN_LEDGER_DIR;
if (!dir) throw new Error('append-child: WARDEN_LEDGER_DIR is required');
let a = Number(process.env.SEED ?? 1) >>> 0;
const random = (): number => {
  a = (a + 0x6d2b79f5) >>> 0;
  let t = a;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const ledger = await Ledger.open({ dir, preallocateBytes: Number(process.env.PREALLOCATE_BYTES ?? 1024 * 1024), rotateBytes: 512 * 1024 });
if (ledger.safeMode) throw new Error('append-child: recovery found a chain break');
process.stdout.write('ready\n');
for (;;) {
  const size = Math.floor(random() * 6000);
  const batch = 1 + Math.floor(random() * 3);
  const records = await ledger.append(
    Array.from({ length: batch }, (_, i) => ({ type: 'op.transition', payload: { i, pad: 'x'.repeat(size) } })),
    { durable: true },
  );
  process.stdout.write(`acked ${records.at(-1)!.seq}\n`);
}
