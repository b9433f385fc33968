/**
 * The start-up check of a ledger against what the keychain holds for it (anchor.ts): its key and
 * its anchor. Makes the key on the first open of a ledger that has none. Never makes a new key
 * while sealed records or an anchor exist: the records could then never be checked again, so
 * that is left to a person.
 */
import type { LedgerChainBreak } from '../../../shared/domain/ledger';
import { LEDGER_KEY_ENTRY, anchorMismatch, createKey, openAnchor, type Anchor, type LedgerKeychain, type readKeychain } from './anchor';
import type { ChainKey } from './format';
import type { Ledger } from './ledger';
import { segmentNumber } from './segments';

/** What `readKeychain` found. */
export type KeychainFindings = Awaited<ReturnType<typeof readKeychain>>;

/** The outcome of the check. */
export interface AnchorCheck {
  /** The problems found: each puts the ledger in safe mode until acknowledged. */
  breaks: LedgerChainBreak[];
  /** The anchor read from the keychain, when it could be opened with the key. */
  anchor: Anchor | null;
  /** The key to keep the anchor with from now on; null while a problem stands. */
  keep: ChainKey | null;
}

/** Checks the opened ledger against its key and anchor; gives the ledger a key on its first open. */
export async function checkAgainstAnchor(ledger: Ledger, k: LedgerKeychain, found: KeychainFindings, at: number): Promise<AnchorCheck> {
  const end = ledger.position;
  const lastSegment = ledger.currentSegment;
  const problem = (id: string, kind: 'key' | 'anchor', detail: string, anchor: Anchor | null = null): AnchorCheck => ({
    breaks: [{ id, segment: lastSegment, offset: end?.offset ?? 0, length: 0, problem: kind, acknowledged: false, preservedCopy: null, detail }],
    anchor,
    keep: null,
  });
  const keep = (key: ChainKey, anchor: Anchor | null = null): AnchorCheck => ({ breaks: [], anchor, keep: key });
  const startOver = 'Until then every tool asks first. Your history is untouched; Warden never makes a new key on its own, because the records sealed with the old one could then never be checked again.';
  if (found.key.state === 'unreadable') {
    // Asked again at every start (the id names this start): it is never acknowledged for good.
    return problem(`keychain@${at}`, 'key', `The ledger's key could not be read from the keychain (${found.key.why}), so its records cannot be checked for tampering and new ones are not sealed. ${startOver}`);
  }
  // `position` names where the last record ends; read it from where it starts.
  const last = end ? (await ledger.readAt([{ segment: end.segment, offset: end.offset - end.length, length: end.length }]))[0] : undefined;
  if (found.key.state === 'missing') {
    if (found.anchorText !== null || last?.keyId !== undefined) {
      return problem(`key-missing@${at}`, 'key', `The ledger's key is missing from the keychain, although its records were sealed with one (entry "${k.keyEntry ?? LEDGER_KEY_ENTRY}" of Warden's keychain entries). Someone removed it, or this is another keychain. Restore the entry to check the records again. ${startOver}`);
    }
    // First open with a keychain (a new ledger, or one from before keys): make the key and
    // anchor what is there now; the first sealed record chains onto the last plain one.
    let key: ChainKey;
    try {
      key = await createKey(k);
    } catch (error) {
      return problem(`keychain@${at}`, 'key', `The ledger's key could not be stored in the keychain (${error instanceof Error ? error.message : String(error)}), so new records are not sealed. ${startOver}`);
    }
    ledger.useKey(key);
    return keep(key);
  }
  const key = found.key.key;
  if (found.anchorText === null) {
    if (last?.keyId !== undefined) {
      return problem(`anchor-missing@${end!.seq}`, 'anchor', `The ledger's anchor (the last record Warden recorded outside the ledger, in the keychain) is missing although its records are sealed: the newest records cannot be checked for removal. It is written again once you acknowledge this.`);
    }
    // A first open that stopped between storing the key and the anchor.
    return keep(key);
  }
  const anchor = openAnchor(key, found.anchorText);
  if (typeof anchor === 'string') return problem(`anchor-unreadable@${at}`, 'key', `${anchor[0]!.toUpperCase()}${anchor.slice(1)}. ${startOver}`);
  const mismatch = await anchorMismatch(anchor, {
    firstSegment: segmentNumber(ledger.segments()[0] ?? ''),
    lastSeq: end?.seq ?? 0,
    readAt: async (place) => (await ledger.readAt([place]))[0],
  });
  if (mismatch) {
    // Kept (not moved past what is now there) until a person acknowledged it.
    const id = mismatch.end === 'last' ? `anchor@${mismatch.seq}` : `anchor-first@${mismatch.seq}`;
    return problem(id, 'anchor', `${mismatch.detail} Every tool asks first until you acknowledge it.`, anchor);
  }
  return keep(key, anchor);
}
