/**
 * Tampering with the ledger from the attacker's side: someone who can change every file in the
 * user-data folder (but cannot read the OS keychain) rewrites, truncates, blanks or rolls back
 * the ledger, and Warden must notice at the next start and hold every tool at ask (safe mode).
 * Real files, the real keychain (run with scripts/with-keyring.sh), the app's own opening call
 * (`openLedgerForApp` with the keychain, as main does).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { LEDGER_ANCHOR_ENTRY, LEDGER_KEY_ENTRY, openLedgerForApp } from '../../../electron/core/ledger';
import { GENESIS_HASH, encodeRecordText, type StoredRecord } from '../../../electron/core/ledger/format';
import { Ledger, readLedger, segmentName, segmentNumbers } from '../../../electron/core/ledger/ledger';
import { slowSyncFs } from '../../../electron/core/ledger/ledger-fs';
import { LedgerService } from '../../../electron/core/ledger/service';
import { verifyLedger } from '../../../electron/core/ledger/verify';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import type { LedgerCheck } from '../../../shared/contract/settings';
import type { Result } from '../../../shared/result';
import { anchorAsBefore, anchoredInstalls, linesOf } from './anchored-installs';

const root = resolve(import.meta.dirname, '../../..');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

beforeAll(() => {
  if (!process.env.DBUS_SESSION_BUS_ADDRESS) throw new Error('No D-Bus session: run with scripts/with-keyring.sh (real OS keychain)');
});

const { install, open, session, rolledBack } = anchoredInstalls(cleanups);

/**
 * What an attacker without the key can do: change record `seq`'s payload and write every record
 * from there on again as a plain record whose sha256 chain is recomputed, so the whole file is a
 * valid chain again (as the unkeyed ledger allowed).
 */
function rewriteWithPlainChain(file: string, seq: number, change: (payload: Record<string, unknown>) => void): void {
  let prevHash = GENESIS_HASH;
  const out: string[] = [];
  for (const line of linesOf(file)) {
    const r = JSON.parse(line) as StoredRecord;
    if (r.seq < seq) {
      out.push(line);
      prevHash = r.checksum;
      continue;
    }
    const payload = structuredClone(r.payload);
    if (r.seq === seq) change(payload);
    const encoded = encodeRecordText(r.seq, r.time, r.type, JSON.stringify(payload), prevHash);
    out.push(encoded.text.slice(0, -1));
    prevHash = encoded.checksum;
  }
  writeFileSync(file, out.join('\n') + '\n');
}

function expectSafeMode(service: LedgerService, problem: 'anchor' | 'key' | 'unkeyed', words: RegExp): void {
  expect(service.ledger.safeMode, JSON.stringify(service.ledger.recovery.breaks)).toBe(true);
  const found = service.ledger.recovery.breaks.filter((b) => b.problem === problem && !b.acknowledged);
  expect(found.length, JSON.stringify(service.ledger.recovery.breaks)).toBeGreaterThan(0);
  if (found.some((b) => b.detail !== undefined)) expect(found.map((b) => b.detail).join(' ')).toMatch(words);
}

/**
 * A person acknowledges the damage found; the anchor then starts at what is left (the
 * verification an acknowledgement starts anchors it), so the next start is clean and deleting
 * segment `next`, now the oldest, is found at the start after.
 */
async function acknowledgedThenNextDeleted(service: LedgerService, userData: string, ledgerDir: string, store: KeytarSecretStore, next: number): Promise<void> {
  await service.acknowledgeSafeMode('user', 'I know what happened to those records');
  expect((await service.verify()).safeMode).toBe(false);
  await service.close();
  const again = await open(userData, store, { rotateBytes: 2000 });
  expect(again.ledger.safeMode, JSON.stringify(again.ledger.recovery.breaks)).toBe(false);
  await again.close();
  unlinkSync(join(ledgerDir, segmentName(next)));
  expectSafeMode(await open(userData, store, { rotateBytes: 2000 }), 'anchor', new RegExp(`began with record \\d+ in ${segmentName(next).replaceAll('.', '\\.')}`));
}

describe('ledger sealed with a key from the keychain and anchored outside its folder', () => {
  it('rewriting a record and recomputing the plain sha256 chain after it is found at the next start (safe mode)', async () => {
    const { userData, ledgerDir, store } = install();
    await session(userData, store, 20);
    rewriteWithPlainChain(join(ledgerDir, segmentName(1)), 12, (p) => (p.to = 'failed'));
    // The rewritten file is a valid plain chain: exactly what the unkeyed ledger could not tell apart.
    const service = await open(userData, store);
    expectSafeMode(service, 'anchor', /not the record Warden sealed/);
    // The full verification names the first rewritten record too.
    await service.verification;
    expect(service.ledger.recovery.breaks.some((b) => b.problem === 'unkeyed' && b.seq === 12), JSON.stringify(service.ledger.recovery.breaks)).toBe(true);
  });

  it('rewriting every record as a plain chain from the first one (no sealed record left) is found', async () => {
    const { userData, ledgerDir, store } = install();
    await session(userData, store, 10);
    rewriteWithPlainChain(join(ledgerDir, segmentName(1)), 1, (p) => (p.note = 'forged'));
    unlinkSync(join(ledgerDir, 'index.sqlite'));
    const service = await open(userData, store);
    expectSafeMode(service, 'anchor', /Record 10 is not the record Warden sealed/);
  });

  it('dropping the newest records (a truncated segment) is found', async () => {
    const { userData, ledgerDir, store } = install();
    await session(userData, store, 20);
    const file = join(ledgerDir, segmentName(1));
    const lines = linesOf(file);
    writeFileSync(file, lines.slice(0, 15).join('\n') + '\n');
    const service = await open(userData, store);
    expectSafeMode(service, 'anchor', /ends at record 15, but it had reached record 20/);
    // Nothing was cut or "repaired" away: the 15 records are all there.
    expect(service.ledger.size()).toBe(15);
  });

  it('removing the last segment is found', async () => {
    const { userData, ledgerDir, store } = install();
    await session(userData, store, 40, { rotateBytes: 2000 });
    const numbers = segmentNumbers(readdirSync(ledgerDir));
    expect(numbers.length).toBeGreaterThan(2);
    unlinkSync(join(ledgerDir, segmentName(numbers.at(-1)!)));
    const service = await open(userData, store, { rotateBytes: 2000 });
    expectSafeMode(service, 'anchor', /newest records were removed/);
  });

  it('zeroing the last records (which recovery alone takes for unused space) is found', async () => {
    const { userData, ledgerDir, store } = install();
    await session(userData, store, 20);
    const file = join(ledgerDir, segmentName(1));
    const bytes = readFileSync(file);
    const lines = linesOf(file);
    const keep = Buffer.byteLength(lines.slice(0, 17).join('\n') + '\n');
    bytes.fill(0, keep);
    writeFileSync(file, bytes);
    const service = await open(userData, store);
    expectSafeMode(service, 'anchor', /ends at record 17, but it had reached record 20/);
  });

  it('putting an older copy of the ledger folder back (rollback) is found', async () => {
    const installed = install();
    const { userData, store } = installed;
    await rolledBack(installed);
    const service = await open(userData, store);
    expectSafeMode(service, 'anchor', /ends at record 10, but it had reached record 20/);
  });

  it('deleting the oldest segments is found at the next start (safe mode), with the index left in place or removed', async () => {
    for (const dropIndex of [false, true]) {
      const { userData, ledgerDir, store } = install();
      await session(userData, store, 40, { rotateBytes: 2000 });
      const numbers = segmentNumbers(readdirSync(ledgerDir));
      expect(numbers.length).toBeGreaterThan(3);
      unlinkSync(join(ledgerDir, segmentName(numbers[0]!)));
      unlinkSync(join(ledgerDir, segmentName(numbers[1]!)));
      if (dropIndex) unlinkSync(join(ledgerDir, 'index.sqlite'));
      const service = await open(userData, store, { rotateBytes: 2000 });
      expectSafeMode(service, 'anchor', /oldest records were removed/);
      await service.close();
    }
  });

  it('deleted oldest segments stay found until a person acknowledges it; afterwards the anchor starts at what is there', async () => {
    const { userData, ledgerDir, store } = install();
    await session(userData, store, 40, { rotateBytes: 2000 });
    unlinkSync(join(ledgerDir, segmentName(1)));
    const first = await open(userData, store, { rotateBytes: 2000 });
    expect(first.ledger.safeMode).toBe(true);
    await first.close();
    const second = await open(userData, store, { rotateBytes: 2000 });
    expectSafeMode(second, 'anchor', /began with record 1 in ledger\.000001\.log/);
    await acknowledgedThenNextDeleted(second, userData, ledgerDir, store, 2);
  });

  it("Settings' check of the activity log finds oldest segments deleted while Warden runs", async () => {
    const { userData, ledgerDir, store } = install();
    await session(userData, store, 40, { rotateBytes: 2000 });
    const service = await open(userData, store, { rotateBytes: 2000 });
    const core = createCore({ version: 'test', ledger: service, servers: { secrets: store } });
    cleanups.push(() => core.close());
    await core.recovered;
    const intact = (await dispatch(core.handlers, 'ledger:verify', {}, () => {})) as Result<LedgerCheck>;
    if (!intact.ok) throw new Error(intact.error.message);
    expect(intact.value.outcome).toBe('intact');
    unlinkSync(join(ledgerDir, segmentName(1)));
    const check = (await dispatch(core.handlers, 'ledger:verify', {}, () => {})) as Result<LedgerCheck>;
    if (!check.ok) throw new Error(check.error.message);
    expect(check.value.outcome).toBe('damaged');
    expect(check.value.firstBroken).toMatchObject({ problem: 'anchor', seq: 1 });
    expect(check.value.summary).toMatch(/began with record 1 in ledger\.000001\.log .*its oldest records were removed/);
  });

  it('a ledger anchored before its first record was anchored opens without alarm, and from then on deleting its oldest segments is found', async () => {
    const { userData, ledgerDir, store } = install();
    await session(userData, store, 40, { rotateBytes: 2000 });
    await store.set(LEDGER_ANCHOR_ENTRY, await anchorAsBefore(store));
    const upgraded = await open(userData, store, { rotateBytes: 2000 });
    expect(upgraded.ledger.safeMode, JSON.stringify(upgraded.ledger.recovery.breaks)).toBe(false);
    // The first record is anchored once the full verification found the chain whole from its start.
    expect((await upgraded.verification)?.breaks).toBe(0);
    await upgraded.close();
    unlinkSync(join(ledgerDir, segmentName(1)));
    const service = await open(userData, store, { rotateBytes: 2000 });
    expectSafeMode(service, 'anchor', /oldest records were removed/);
  });

  it('oldest sealed segments deleted before the first record was anchored are found by the first full verification', async () => {
    const { userData, ledgerDir, store } = install();
    await session(userData, store, 40, { rotateBytes: 2000 });
    await store.set(LEDGER_ANCHOR_ENTRY, await anchorAsBefore(store));
    unlinkSync(join(ledgerDir, segmentName(1)));
    const service = await open(userData, store, { rotateBytes: 2000 });
    await service.verification;
    expectSafeMode(service, 'anchor', /a record sealed with its key: Warden never deleted segments once it sealed records, so its oldest records were removed/);
    await acknowledgedThenNextDeleted(service, userData, ledgerDir, store, 2);
  });

  it('a ledger an older version left starting at a later segment (it deleted old segments then) opens without alarm, and its first record is anchored from then on', async () => {
    const { userData, ledgerDir, store } = install();
    const old = await Ledger.open({ dir: ledgerDir, rotateBytes: 2000 });
    for (let i = 0; i < 40; i++) await old.append([{ type: 'note', payload: { i, pad: 'x'.repeat(40) } }], { durable: true });
    await old.close();
    const numbers = segmentNumbers(readdirSync(ledgerDir));
    expect(numbers.length).toBeGreaterThan(3);
    unlinkSync(join(ledgerDir, segmentName(numbers[0]!)));
    const first = await open(userData, store, { rotateBytes: 2000 });
    expect(first.ledger.safeMode, JSON.stringify(first.ledger.recovery.breaks)).toBe(false);
    expect((await first.verification)?.breaks).toBe(0);
    await first.close();
    const again = await open(userData, store, { rotateBytes: 2000 });
    expect(again.ledger.safeMode, JSON.stringify(again.ledger.recovery.breaks)).toBe(false);
    await again.close();
    unlinkSync(join(ledgerDir, segmentName(numbers[1]!)));
    const service = await open(userData, store, { rotateBytes: 2000 });
    expectSafeMode(service, 'anchor', /oldest records were removed/);
  });

  it('a problem with the anchor stays until a person acknowledges it; afterwards the anchor vouches for what is there', async () => {
    const { userData, ledgerDir, store } = install();
    await session(userData, store, 12);
    const file = join(ledgerDir, segmentName(1));
    writeFileSync(file, linesOf(file).slice(0, 8).join('\n') + '\n');
    const first = await open(userData, store);
    expect(first.ledger.safeMode).toBe(true);
    await first.ledger.append([{ type: 'note', payload: {} }], { durable: true });
    await first.close();
    // Restarting does not wash it out: the anchor was not moved past what is now there.
    const second = await open(userData, store);
    expectSafeMode(second, 'anchor', /had reached record 12/);
    await second.acknowledgeSafeMode('user', 'I removed those records myself');
    expect(second.ledger.safeMode).toBe(false);
    await second.close();
    const third = await open(userData, store);
    expect(third.ledger.safeMode, JSON.stringify(third.ledger.recovery.breaks)).toBe(false);
  });

  it('after a clean exit of the core, even the very last record is anchored: dropping it is found', async () => {
    const { userData, ledgerDir, store } = install();
    // An interval longer than the test: only the clean exit can bring the anchor up to date.
    const { ledger: service } = await openLedgerForApp(userData, { keychain: store, anchorIntervalMs: 600_000 });
    cleanups.push(() => service.close());
    const core = createCore({ version: 'test', ledger: service, servers: { secrets: store } });
    await core.recovered;
    for (let i = 0; i < 5; i++) await service.ledger.append([{ type: 'note', payload: { i } }], { durable: true });
    const last = service.ledger.size();
    await core.close();
    const file = join(ledgerDir, segmentName(1));
    writeFileSync(file, linesOf(file).slice(0, -1).join('\n') + '\n');
    const reopened = await open(userData, store);
    expectSafeMode(reopened, 'anchor', new RegExp(`ends at record ${last - 1}, but it had reached record ${last}`));
  });

  it('another key in the keychain fails closed in plain words, and keeps every record', async () => {
    const { userData, store } = install();
    await session(userData, store, 8);
    await store.set(LEDGER_KEY_ENTRY, randomBytes(32).toString('hex'));
    const service = await open(userData, store);
    expectSafeMode(service, 'key', /sealed with another key/);
    expect(service.ledger.size()).toBe(8);
  });

  it('a missing key fails closed in plain words and is never replaced by a new one', async () => {
    const { userData, store } = install();
    await session(userData, store, 8);
    await store.delete(LEDGER_KEY_ENTRY);
    const service = await open(userData, store);
    expectSafeMode(service, 'key', /key is missing from the keychain/);
    expect(service.ledger.size()).toBe(8);
    expect(await store.get(LEDGER_KEY_ENTRY)).toBeNull();
    await service.close();
    // Every start says so again: acknowledging it once does not turn checking off for good.
    const again = await open(userData, store);
    expect(again.ledger.safeMode).toBe(true);
    expect(await store.get(LEDGER_KEY_ENTRY)).toBeNull();
  });

  it('an unreachable keychain fails closed in plain words (no key made, no record lost)', async () => {
    const { userData, service: name, store } = install();
    await session(userData, store, 6);
    const broken = new KeytarSecretStore({ service: name, load: () => Promise.reject(new Error('no Secret Service on the bus')) });
    const { ledger } = await openLedgerForApp(userData, { keychain: broken });
    cleanups.push(() => ledger.close().catch(() => undefined));
    expectSafeMode(ledger, 'key', /could not be read from the keychain .*no Secret Service on the bus/);
    expect(ledger.ledger.size()).toBe(6);
  });

  it('an existing plain ledger migrates: old records verify as before, the first sealed one chains onto the last plain one, and the check says which part is plain', async () => {
    const { userData, ledgerDir, store } = install();
    const plain = await LedgerService.open({ dir: ledgerDir, verifyInBackground: false });
    for (let i = 0; i < 5; i++) await plain.ledger.append([{ type: 'note', payload: { i } }], { durable: true });
    await plain.close();

    const service = await open(userData, store);
    expect(service.ledger.safeMode).toBe(false);
    for (let i = 0; i < 3; i++) await service.ledger.append([{ type: 'note', payload: { i } }], { durable: true });
    expect((await service.verification)?.breaks).toBe(0);
    const options = service.verifyOptions();
    await service.close();

    const records: StoredRecord[] = [];
    for await (const { record } of readLedger(ledgerDir, undefined, options.key ?? null)) records.push(record);
    expect(records.map((r) => r.keyId === undefined)).toEqual([true, true, true, true, true, false, false, false]);
    expect(records[5]!.prevHash).toBe(records[4]!.checksum);
    const result = await verifyLedger(ledgerDir, service.verifyOptions());
    expect(result).toMatchObject({ ok: true, records: 8, sealing: { plain: 5, sealed: 3, unverified: 0 } });
    // Without the key a check cannot call sealed records intact.
    expect(await verifyLedger(ledgerDir)).toMatchObject({ ok: false, firstBroken: { problem: 'key', seq: 6 } });

    const reopened = await open(userData, store);
    expect(reopened.ledger.safeMode).toBe(false);
    expect((await reopened.verification)?.breaks).toBe(0);
  });

  it('ledger:verify checks with the key and the anchor, and says which records are plain', async () => {
    const { userData, ledgerDir, store } = install();
    const plain = await LedgerService.open({ dir: ledgerDir, verifyInBackground: false });
    await plain.ledger.append([{ type: 'note', payload: {} }], { durable: true });
    await plain.close();
    const service = await open(userData, store);
    for (let i = 0; i < 3; i++) await service.ledger.append([{ type: 'note', payload: { i } }], { durable: true });
    // The anchor follows the synced records within its interval.
    while (service.verifyOptions().anchor?.seq !== 4) await new Promise((r) => setTimeout(r, 5));
    const core = createCore({ version: 'test', ledger: service, servers: { secrets: store } });
    cleanups.push(() => core.close());
    const check = (await dispatch(core.handlers, 'ledger:verify', {}, () => {})) as Result<LedgerCheck>;
    if (!check.ok) throw new Error(check.error.message);
    expect(check.value.outcome).toBe('intact');
    expect(check.value.summary).toMatch(/first 1 record were written before the ledger had a key/);
    // A sealed record rewritten behind Warden's back (and its plain chain recomputed).
    await service.ledger.flush();
    rewriteWithPlainChain(join(ledgerDir, segmentName(1)), 4, (p) => (p.forged = true));
    const after = (await dispatch(core.handlers, 'ledger:verify', {}, () => {})) as Result<LedgerCheck>;
    if (!after.ok) throw new Error(after.error.message);
    expect(after.value.outcome).toBe('damaged');
  });

  it('the anchor never names a record before its sync has finished (so a power cut cannot leave it ahead of the disk)', async () => {
    const { ledgerDir, store } = install();
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // The real keychain, answering a little slowly, so records arrive while an anchor write runs.
    const slowKeychain = { get: (k: string) => store.get(k), set: async (k: string, v: string) => (await sleep(50), store.set(k, v)), delete: (k: string) => store.delete(k) };
    const service = await LedgerService.open({ dir: ledgerDir, fs: slowSyncFs(400), verifyInBackground: false, keychain: { secrets: slowKeychain, anchorIntervalMs: 1 } });
    cleanups.push(() => service.close());
    const [first] = await service.ledger.append([{ type: 'note', payload: { n: 1 } }], { durable: true });
    // The anchor write for the first record is under way when the second is appended.
    await sleep(10);
    const second = service.ledger.append([{ type: 'note', payload: { n: 2 } }], { durable: true });
    // The second record is written and its sync is under way: the anchor stays on the first.
    await sleep(250);
    expect(service.verifyOptions().anchor?.seq).toBe(first!.seq);
    const [after] = await second;
    while (service.verifyOptions().anchor?.seq !== after!.seq) await new Promise((r) => setTimeout(r, 5));
  });

  it('kills at random moments (a torn tail after the anchored record) never look like tampering', async () => {
    const { userData, store, service: name } = install();
    const child = join(root, 'test/integration/ledger/anchor-child.ts');
    let maxAcked = 0;
    for (let run = 0; run < 6; run++) {
      const proc = spawn(process.execPath, ['--import', 'tsx', child], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, WARDEN_USER_DATA: userData, WARDEN_KEYCHAIN_SERVICE: name },
      });
      let stdout = '';
      let stderr = '';
      proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
      // Killed once it has appended (and anchored) for a while, at a different moment each run.
      const started = Date.now();
      while (!/acked \d+\n(.|\n)*acked \d+\n/.test(stdout) && Date.now() - started < 60_000 && proc.exitCode === null) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 30 + run * 37));
      proc.kill('SIGKILL');
      await exited;
      expect(stdout, stderr).toMatch(/acked/);
      for (const m of stdout.matchAll(/^acked (\d+)$/gm)) maxAcked = Math.max(maxAcked, Number(m[1]));
      if (run % 2 === 1) {
        // A write torn in the middle (as a power cut leaves it) after the last whole record.
        const file = join(userData, 'ledger', segmentName(segmentNumbers(readdirSync(join(userData, 'ledger'))).at(-1)!));
        const bytes = readFileSync(file);
        const end = bytes.indexOf(0) === -1 ? bytes.length : bytes.indexOf(0);
        const torn = Buffer.from('{"seq":999999,"time":17000');
        writeFileSync(file, Buffer.concat([bytes.subarray(0, end), torn, bytes.subarray(Math.min(bytes.length, end + torn.length))]));
      }
      const service = await open(userData, store);
      expect(service.ledger.safeMode, `run ${run}: ${JSON.stringify(service.ledger.recovery.breaks)}`).toBe(false);
      expect(service.ledger.size()).toBeGreaterThanOrEqual(maxAcked);
      if (run % 2 === 1) expect(service.ledger.recovery.tornTail).not.toBeNull();
      await service.close();
    }
  }, 240_000);
});
