/**
 * A synthetic history for the Activity bench: `count` calls written through the ledger's own
 * writer and index (`LedgerService` → `Ledger.append`, the path every gate record takes), spread
 * over a year by the ledger's clock, across three servers with two accounts each, twelve tools,
 * every decision (allow, ask, deny) and every common outcome, so each Activity filter has both
 * large and small answers to page through.
 *
 * Writing a million calls takes many minutes here, so a folder named by
 * `WARDEN_BENCH_ACTIVITY_DIR` is kept and reused when it already holds the history asked for.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { journalEntry, type DecisionRecord } from '../../shared/domain/journal-events';
import { LedgerService } from '../../electron/core/ledger/service';
import type { JournalEntry } from '../../electron/core/ports';
import type { CallFilter } from '../../shared/domain/activity';

export const SERVERS = [
  { id: 'files-1a2b', accounts: ['work-01', 'home-02'], tools: ['read_file', 'write_file', 'move_file', 'list_directory'] },
  { id: 'github-3c4d', accounts: ['work-03', 'oss-04'], tools: ['list_issues', 'create_issue', 'close_issue', 'search_code'] },
  { id: 'calendar-5e6f', accounts: ['work-05', 'family-06'], tools: ['list_events', 'create_event', 'delete_event', 'find_free_time'] },
] as const;

/** The first call's time, and the ledger-clock step between calls (a year over a million calls). */
export const START = Date.UTC(2025, 0, 1);
export const STEP_MS = 31_000;

const ALLOW: DecisionRecord = { decision: 'allow', reason: 'Always allowed for Work', layer: 'user', ruleId: 'allow-work', configErrors: [] };
const ASK: DecisionRecord = { decision: 'ask', reason: 'Asks by default', layer: 'default', ruleId: null, configErrors: [] };
const DENY: DecisionRecord = { decision: 'deny', reason: 'Disabled by you', layer: 'user', ruleId: 'disable-delete', configErrors: [] };

/** The server, account and tool of call `i`. */
export function identityOf(i: number): { serverId: string; accountId: string; toolName: string } {
  const server = SERVERS[i % 3]!;
  return { serverId: server.id, accountId: server.accounts[Math.floor(i / 3) % 2]!, toolName: server.tools[Math.floor(i / 6) % 4]! };
}

/** What the Activity filters see of call `i`: its identity, conversation, decision and outcome. */
export function factsOf(i: number): { serverId: string; accountId: string; toolName: string; conversationId: string | null; decision: 'allow' | 'ask' | 'deny'; outcome: string } {
  const kind = i % 20;
  const failed = i % 7 === 5;
  const [decision, outcome] = kind === 19 ? (['deny', 'denied'] as const) : kind === 17 ? (['ask', 'rejected'] as const) : ([kind % 10 === 7 ? 'ask' : 'allow', failed ? 'failed' : 'succeeded'] as const);
  return { ...identityOf(i), conversationId: i % 5 === 0 ? null : `conv-${Math.floor(i / 40)}`, decision, outcome };
}

const FILTER_KEYS = ['serverId', 'accountId', 'toolName', 'decision', 'outcome', 'conversationId'] as const;

/**
 * Every combination of the Activity view's equality filters over a history of `count` calls, each
 * once with the values of one recent call (it matches) and, where one exists, once with values
 * that each match many calls but never together. Some combinations have none: every server sees
 * every decision and outcome, and every conversation (40 calls in a row) every server, account,
 * decision and outcome.
 */
export function filterCombinations(count: number): Array<{ name: string; filter: CallFilter; matches: boolean }> {
  const out: Array<{ name: string; filter: CallFilter; matches: boolean }> = [];
  // A recent call made in a conversation, so every column has a value.
  const anchor = factsOf(count - 3).conversationId ? count - 3 : count - 4;
  // Everything but the conversation repeats every 840 calls (identity every 24, decision every
  // 20, failures every 7); a conversation is 40 consecutive calls.
  const matchesAny = (keys: readonly (typeof FILTER_KEYS)[number][], f: CallFilter): boolean => {
    const conv = f.conversationId === undefined ? null : Number(f.conversationId.slice('conv-'.length));
    const [from, to] = conv === null ? [0, Math.min(count, 840)] : [conv * 40, Math.min(count, conv * 40 + 40)];
    for (let i = from; i < to; i++) {
      const x = factsOf(i);
      if (keys.every((k) => x[k] === f[k])) return true;
    }
    return false;
  };
  for (let mask = 1; mask < 1 << FILTER_KEYS.length; mask++) {
    const keys = FILTER_KEYS.filter((_, b) => mask & (1 << b));
    const pick = (i: number): CallFilter => Object.fromEntries(keys.map((k) => [k, factsOf(i)[k]])) as CallFilter;
    const name = keys.join(' + ');
    out.push({ name, filter: pick(anchor), matches: true });
    if (keys.length < 2) continue;
    // One column's value taken from another call, the rest from the anchor, until nothing matches.
    search: for (const key of keys) {
      for (let other = 1; other < 200; other++) {
        const f = { ...pick(anchor), [key]: factsOf((anchor + count - other) % count)[key] } as CallFilter;
        if (Object.values(f).some((v) => v === null) || matchesAny(keys, f)) continue;
        out.push({ name, filter: f, matches: false });
        break search;
      }
    }
  }
  return out;
}

/** The records of call `i` (two appends: the decision, then the outcome, if any). */
function call(i: number): { decided: JournalEntry[]; outcome: JournalEntry | null } {
  const id = `call-${i.toString(36)}`;
  const identity = identityOf(i);
  const args = { path: `/home/person/projects/warden/src/module-${i % 997}/file-${i}.ts`, query: 'x'.repeat(120 + (i % 300)), options: { recursive: i % 2 === 0, limit: i % 50 } };
  const proposed = journalEntry('op.proposed', {
    operationId: id,
    origin: i % 5 === 0 ? { source: 'user', conversationId: null, round: null, batchId: null } : { source: 'model', conversationId: `conv-${Math.floor(i / 40)}`, round: i % 40, batchId: null },
    identity: { ...identity, endpointHash: 'e'.repeat(64), contractHash: 'c'.repeat(64) },
    arguments: args,
    canonicalArguments: JSON.stringify(args),
    fingerprint: `${(i * 2654435761).toString(16).padStart(16, '0')}${'f'.repeat(48)}`,
    requestedAt: START + i * STEP_MS,
    expiresAt: null,
  });
  const kind = i % 20;
  if (kind === 19) {
    return { decided: [proposed, journalEntry('op.transition', { operationId: id, from: 'proposed', to: 'denied', reason: DENY.reason, decision: DENY, actor: 'policy' })], outcome: null };
  }
  if (kind === 17) {
    return {
      decided: [
        proposed,
        journalEntry('op.transition', { operationId: id, from: 'proposed', to: 'awaiting_approval', reason: ASK.reason, decision: ASK, actor: 'policy', expiresAt: START + i * STEP_MS + 600_000 }),
        journalEntry('op.transition', { operationId: id, from: 'awaiting_approval', to: 'rejected', reason: 'Rejected by you', actor: 'user' }),
      ],
      outcome: null,
    };
  }
  const decided =
    kind % 10 === 7
      ? [
          proposed,
          journalEntry('op.transition', { operationId: id, from: 'proposed', to: 'awaiting_approval', reason: ASK.reason, decision: ASK, actor: 'policy', expiresAt: START + i * STEP_MS + 600_000 }),
          journalEntry('op.transition', { operationId: id, from: 'awaiting_approval', to: 'approved', reason: 'Approved by you', decision: ASK, actor: 'user' }),
          journalEntry('op.transition', { operationId: id, from: 'approved', to: 'executing', reason: 'Sending the request to the server', fingerprint: 'f'.repeat(64) }),
        ]
      : [
          proposed,
          journalEntry('op.transition', { operationId: id, from: 'proposed', to: 'approved', reason: ALLOW.reason, decision: ALLOW, actor: 'policy', fingerprint: 'f'.repeat(64) }),
          journalEntry('op.transition', { operationId: id, from: 'approved', to: 'executing', reason: 'Sending the request to the server', fingerprint: 'f'.repeat(64) }),
        ];
  const failed = i % 7 === 5;
  const outcome = journalEntry('op.transition', {
    operationId: id,
    from: 'executing',
    to: failed ? 'failed' : 'succeeded',
    reason: failed ? 'The tool reported an error' : 'The tool call succeeded',
    result: { isError: failed, content: [{ type: 'text', text: `result of ${identity.toolName} #${i}: ${'r'.repeat(80 + (i % 120))}` }] },
  });
  return { decided, outcome };
}

/** A clock the writer reads: call `i`'s records are stamped with call `i`'s time. */
class StepClock {
  i = 0;
  now(): number {
    return START + this.i * STEP_MS;
  }
}

/** Makes sure `dir` holds a history of `count` calls (writing what is missing); returns how long writing took. */
export async function ensureHistory(dir: string, count: number, log: (line: string) => void = console.log): Promise<number> {
  const marker = join(dir, 'bench-activity.json');
  const have = existsSync(marker) ? (JSON.parse(readFileSync(marker, 'utf8')) as { count: number }).count : 0;
  if (have >= count) return 0;
  const clock = new StepClock();
  const service = await LedgerService.open({ dir, verifyInBackground: false, clock });
  const t0 = performance.now();
  try {
    for (let i = have; i < count; i++) {
      clock.i = i;
      const c = call(i);
      void service.ledger.append(c.decided);
      if (c.outcome) void service.ledger.append([c.outcome]);
      if (i % 2000 === 1999) {
        await service.ledger.flush();
        await service.index.flush();
        writeFileSync(marker, JSON.stringify({ count: i + 1 }));
        if (i % 50_000 === 49_999) log(`  (wrote ${i + 1} calls in ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
      }
    }
    await service.ledger.flush();
    await service.index.flush();
    writeFileSync(marker, JSON.stringify({ count }));
  } finally {
    await service.close();
  }
  return performance.now() - t0;
}

if (process.argv[1]?.endsWith('activity-history.ts')) {
  const [dir, count] = process.argv.slice(2);
  await ensureHistory(dir!, Number(count));
}
