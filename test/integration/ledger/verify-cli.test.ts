/**
 * `npm run ledger:verify` run as a person runs it (a child process), against ledgers Warden wrote
 * with the real keychain (run with scripts/with-keyring.sh): it checks the folder against the same
 * key and anchor the app reads, and never says OK for a ledger the app would open in safe mode.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger, segmentName, segmentNumbers } from '../../../electron/core/ledger/ledger';
import { LedgerService } from '../../../electron/core/ledger/service';
import { tempDir } from '../../unit/ledger/helpers';
import { LEDGER_ANCHOR_ENTRY } from '../../../electron/core/ledger';
import { anchorAsBefore, anchoredInstalls, linesOf } from './anchored-installs';

const run = promisify(execFile);
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function verifyCli(dir: string, options: { service?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; stdout: string }> {
  const args = ['--import', 'tsx', 'scripts/ledger-verify.ts', dir, ...(options.service ? ['--keychain-service', options.service] : [])];
  try {
    const { stdout } = await run(process.execPath, args, { cwd: process.cwd(), env: options.env ?? process.env });
    return { code: 0, stdout };
  } catch (error) {
    const e = error as { code: number; stdout: string };
    return { code: e.code, stdout: e.stdout };
  }
}

const { install, session, rolledBack } = anchoredInstalls(cleanups);

/** What every damaged case must print: a plain "not OK", never "ledger OK", and exit code 1. */
function expectNotOk(result: { code: number; stdout: string }, words: RegExp): void {
  expect(result.stdout).not.toMatch(/ledger OK/);
  expect(result.code, result.stdout).toBe(1);
  expect(result.stdout).toMatch(words);
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

  it('a ledger whose last 10 of 30 records were cut off is not OK: it no longer reaches its anchor', async () => {
    const { userData, ledgerDir, store, service } = install();
    await session(userData, store, 30);
    expect(await verifyCli(ledgerDir, { service })).toMatchObject({ code: 0, stdout: expect.stringMatching(/ledger OK: 30 records/) });
    const file = join(ledgerDir, segmentName(1));
    writeFileSync(file, linesOf(file).slice(0, 20).join('\n') + '\n');
    expectNotOk(await verifyCli(ledgerDir, { service }), /ends at record 20, but it had reached record 30/);
  });

  it('a ledger whose last records were zeroed is not OK', async () => {
    const { userData, ledgerDir, store, service } = install();
    await session(userData, store, 20);
    const file = join(ledgerDir, segmentName(1));
    const bytes = readFileSync(file);
    bytes.fill(0, Buffer.byteLength(linesOf(file).slice(0, 17).join('\n') + '\n'));
    writeFileSync(file, bytes);
    expectNotOk(await verifyCli(ledgerDir, { service }), /ends at record 17, but it had reached record 20/);
  });

  it('a ledger whose last segment was deleted is not OK', async () => {
    const { userData, ledgerDir, store, service } = install();
    await session(userData, store, 40, { rotateBytes: 2000 });
    const numbers = segmentNumbers(readdirSync(ledgerDir));
    expect(numbers.length).toBeGreaterThan(2);
    unlinkSync(join(ledgerDir, segmentName(numbers.at(-1)!)));
    expectNotOk(await verifyCli(ledgerDir, { service }), /newest records were removed/);
  });

  it('a ledger whose oldest segments were deleted is not OK', async () => {
    const { userData, ledgerDir, store, service } = install();
    await session(userData, store, 40, { rotateBytes: 2000 });
    const numbers = segmentNumbers(readdirSync(ledgerDir));
    expect(numbers.length).toBeGreaterThan(3);
    unlinkSync(join(ledgerDir, segmentName(numbers[0]!)));
    unlinkSync(join(ledgerDir, segmentName(numbers[1]!)));
    expectNotOk(await verifyCli(ledgerDir, { service }), /oldest records were removed/);
  });

  it('oldest sealed segments deleted while the anchor named only the last record are not OK', async () => {
    const { userData, ledgerDir, store, service } = install();
    await session(userData, store, 40, { rotateBytes: 2000 });
    await store.set(LEDGER_ANCHOR_ENTRY, await anchorAsBefore(store));
    expect((await verifyCli(ledgerDir, { service })).code).toBe(0);
    unlinkSync(join(ledgerDir, segmentName(1)));
    expectNotOk(await verifyCli(ledgerDir, { service }), /a record sealed with its key: Warden never deleted segments once it sealed records/);
  });

  it('an older copy of the ledger folder put back (rollback) is not OK', async () => {
    const installed = install();
    await rolledBack(installed);
    const { ledgerDir, service } = installed;
    expectNotOk(await verifyCli(ledgerDir, { service }), /ends at record 10, but it had reached record 20/);
  });

  it('an unreachable keychain is never OK: the command says the ledger could not be checked', async () => {
    const { userData, ledgerDir, store, service } = install();
    // Plain records only (from before the ledger had a key), then anchored by Warden's next start:
    // nothing in the folder itself says it needs the keychain.
    const plain = await LedgerService.open({ dir: ledgerDir, verifyInBackground: false });
    for (let i = 0; i < 5; i++) await plain.ledger.append([{ type: 'note', payload: { i } }], { durable: true });
    await plain.close();
    await session(userData, store, 0);
    const result = await verifyCli(ledgerDir, { service, env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' } });
    expectNotOk(result, /NOT CHECKED: the ledger's key and anchor could not be read from the keychain/);
  });
});
