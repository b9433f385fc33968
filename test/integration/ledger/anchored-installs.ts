/**
 * Installs of Warden whose ledger is sealed and anchored in the real keychain (run with
 * scripts/with-keyring.sh), opened the way main opens it (`openLedgerForApp`), and what an
 * attacker who can change every file of the user-data folder does to them. Shared by the app-side
 * tests (anchor.test.ts) and the command-line ones (verify-cli.test.ts), so both judge the same
 * ledgers damaged in the same ways.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { LEDGER_ANCHOR_ENTRY, LEDGER_KEY_ENTRY, openLedgerForApp } from '../../../electron/core/ledger';
import { chainKey } from '../../../electron/core/ledger/format';
import type { LedgerService } from '../../../electron/core/ledger/service';
import { KeytarSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import { tempDir } from '../../unit/ledger/helpers';

/** One install: its user-data folder, its ledger folder and keychain entries of its own. */
export interface AnchoredInstall {
  userData: string;
  ledgerDir: string;
  store: KeytarSecretStore;
  /** The keychain service its entries are under (a name no other test uses). */
  service: string;
}

/** Opening and running installs; everything made is undone by the `cleanups` the test runs after each case. */
export function anchoredInstalls(cleanups: Array<() => Promise<void> | void>) {
  /** A fresh install. */
  function install(): AnchoredInstall {
    const t = tempDir('warden-anchor-');
    const service = `Warden-anchor-test-${process.pid}-${randomBytes(4).toString('hex')}`;
    const store = new KeytarSecretStore({ service });
    cleanups.push(async () => {
      await store.delete(LEDGER_KEY_ENTRY).catch(() => false);
      await store.delete(LEDGER_ANCHOR_ENTRY).catch(() => false);
      t.cleanup();
    });
    return { userData: t.dir, ledgerDir: join(t.dir, 'ledger'), store, service };
  }

  /** Opens the install's ledger as the app does (the anchor follows every few milliseconds). */
  async function open(userData: string, store: KeytarSecretStore, options: { rotateBytes?: number } = {}): Promise<LedgerService> {
    const { ledger } = await openLedgerForApp(userData, { keychain: store, anchorIntervalMs: 5, ...options });
    cleanups.push(() => ledger.close().catch(() => undefined));
    return ledger;
  }

  /** Runs Warden once: `count` durable records, then a clean shutdown (which anchors the last one). */
  async function session(userData: string, store: KeytarSecretStore, count: number, options: { rotateBytes?: number } = {}): Promise<LedgerService> {
    const service = await open(userData, store, options);
    for (let i = 0; i < count; i++) await service.ledger.append([{ type: 'op.transition', payload: { operationId: `op-${i}`, to: 'succeeded', note: 'x'.repeat(40) } }], { durable: true });
    await service.close();
    return service;
  }

  /** Ten records, a copy of the ledger folder, ten more, then the copy put back in its place. */
  async function rolledBack({ userData, ledgerDir, store }: AnchoredInstall): Promise<void> {
    await session(userData, store, 10);
    const backup = `${userData}-backup`;
    cpSync(ledgerDir, backup, { recursive: true });
    cleanups.push(() => rmSync(backup, { recursive: true, force: true }));
    await session(userData, store, 10);
    rmSync(ledgerDir, { recursive: true, force: true });
    cpSync(backup, ledgerDir, { recursive: true });
  }

  return { install, open, session, rolledBack };
}

/**
 * The anchor as Warden wrote it before it anchored the first record too (format 1: the last
 * record only), sealed with the ledger's key, naming the record the current anchor names.
 */
export async function anchorAsBefore(store: KeytarSecretStore): Promise<string> {
  const key = chainKey(Buffer.from((await store.get(LEDGER_KEY_ENTRY))!, 'hex'));
  const a = JSON.parse((await store.get(LEDGER_ANCHOR_ENTRY))!) as { seq: number; segment: number; offset: number; length: number; hash: string; keyId: string; at: number };
  const mac = key.mac(`warden.ledger.anchor.v1\n${a.seq}\n${a.segment}\n${a.offset}\n${a.length}\n${a.hash}\n${a.keyId}\n${a.at}`);
  return JSON.stringify({ v: 1, seq: a.seq, segment: a.segment, offset: a.offset, length: a.length, hash: a.hash, keyId: a.keyId, at: a.at, mac });
}

/** The record lines of a segment (without the preallocated zeros). */
export function linesOf(file: string): string[] {
  return readFileSync(file, 'utf8').replace(/\0+$/, '').split('\n').filter((l) => l.length > 0);
}
