/**
 * The status bar's items in words, from the core status: pure, so unit tests (Node, no JSX) can
 * check every wording.
 */
import type { CoreStatus } from '../../../shared/contract/core';
import type { ConnectionState } from '../store/core-slice';

/** A tone for the dot next to a status item. */
export type Tone = 'ok' | 'warn' | 'danger' | 'idle';

/** One status item as words and a tone. */
export interface StatusWords {
  text: string;
  tone: Tone;
}

/** "2 of 3 servers connected", "No servers yet", … */
export function serversWords(servers: CoreStatus['servers']): StatusWords {
  const { configured, connected } = servers;
  if (configured === 0) return { text: 'No servers yet', tone: 'idle' };
  if (connected === 0) return { text: configured === 1 ? 'Server not connected' : `None of ${configured} servers connected`, tone: 'idle' };
  if (connected >= configured) return { text: configured === 1 ? 'Server connected' : `All ${configured} servers connected`, tone: 'ok' };
  return { text: `${connected} of ${configured} servers connected`, tone: 'warn' };
}

/** "1 call waiting for your approval", "Nothing waiting for approval". */
export function pendingWords(pending: number): StatusWords {
  if (pending === 0) return { text: 'Nothing waiting for approval', tone: 'idle' };
  return { text: `${pending} ${pending === 1 ? 'call' : 'calls'} waiting for your approval`, tone: 'warn' };
}

/**
 * The activity log's health in words: damaged (safe mode), not kept, damage a person acknowledged
 * (safe mode is over, but the log is not whole: never "no damage found" again), or no damage found. Not
 * "intact": the full check of the chain runs in the background after each start, so until it ends
 * nothing has been found, which is all that can honestly be said.
 */
export function ledgerWords(status: Pick<CoreStatus, 'safeMode' | 'journal'>): StatusWords {
  if (status.safeMode) return { text: 'Activity log damaged: every tool asks', tone: 'danger' };
  if (status.journal.kind === 'memory') return { text: 'Activity log not saved to disk', tone: 'warn' };
  if (status.journal.indexing !== undefined) return { text: `Indexing past activity (${status.journal.indexing}%): Activity shows it when done`, tone: 'warn' };
  const damage = status.journal.acknowledgedDamage;
  if (damage !== undefined && damage > 0) return { text: `Activity log: ${damage === 1 ? 'damage' : `${damage} places of damage`} found and acknowledged`, tone: 'warn' };
  return { text: 'Activity log: no damage found', tone: 'ok' };
}

/** The link to the core itself, for the details and for when it fails. */
export function connectionWords(connection: ConnectionState): StatusWords {
  if (connection === 'live') return { text: 'Live', tone: 'ok' };
  if (connection === 'connecting') return { text: 'Connecting…', tone: 'warn' };
  return { text: 'Not answering', tone: 'danger' };
}

