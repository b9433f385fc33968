import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger, segmentName } from '../../../electron/core/ledger/ledger';
import { tempDir } from '../../unit/ledger/helpers';

const run = promisify(execFile);
const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

async function verifyCli(dir: string): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/ledger-verify.ts', dir], { cwd: process.cwd() });
    return { code: 0, stdout };
  } catch (error) {
    const e = error as { code: number; stdout: string };
    return { code: e.code, stdout: e.stdout };
  }
}

describe('ledger:verify command', () => {
  it('passes an intact ledger and prints the first broken record of a tampered one', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const ledger = await Ledger.open({ dir: t.dir });
    for (let i = 0; i < 5; i++) await ledger.append([{ type: 'op.transition', payload: { i, to: 'succeeded' } }], { durable: true });
    await ledger.close();

    const good = await verifyCli(t.dir);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('ledger OK: 5 records');

    const seg = join(t.dir, segmentName(1));
    const text = readFileSync(seg, 'utf8');
    const lines = text.split('\n');
    lines[2] = lines[2]!.replace('"to":"succeeded"', '"to":"failed!!!"');
    writeFileSync(seg, lines.join('\n'));
    const offset = Buffer.byteLength(lines[0]! + '\n' + lines[1]! + '\n');

    const bad = await verifyCli(t.dir);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`first broken record in ${segmentName(1)} at byte ${offset} (seq 3): checksum`);
    expect(bad.stdout).toContain('failed!!!');
  }, 60_000);
});
