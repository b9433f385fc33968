/**
 * The preferences Settings changes and the facts it shows: `settings:get`, `settings:set` and
 * `ledger:verify`.
 *
 * Preferences live in the settings document (zod-validated there). The gate reads them through
 * `preferenceReaders` at every decision, so a change applies to the next approval and the next
 * call without a restart:
 * - approval expiry: how long a NEW pending approval waits (pending ones keep their expiry);
 * - the default mode for tools no rule covers: Ask, or Disabled (not offered, refused).
 *
 * Changing the default is a policy change: it is journaled (`policy.changed`), announced
 * (`permissions:changed`) and re-checks every pending approval. Going from Disabled back to Ask
 * lets models see those tools again, so, like lifting any Disabled, it needs the person's
 * confirmation in main's native dialog; a renderer alone can only make the default stricter.
 */
import {
  DEFAULT_APPROVAL_EXPIRY_MS,
  type DefaultToolMode,
  type LedgerCheck,
  type SettingsChange,
  type SettingsView,
} from '../../../shared/contract/settings';
import { journalEntry } from '../../../shared/domain/journal-events';
import { DEFAULT_MODE_RULE_ID } from '../../../shared/domain/policy';
import type { LedgerVerifyResult } from '../../../shared/domain/ledger';
import { WardenError } from '../../../shared/result';
import type { CoreEvents } from '../events';
import type { ApprovalPrompter, Clock, Journal } from '../ports';
import type { ListableSecretStore } from '../secrets/keytar-secret-store';
import type { SettingsRepository } from '../settings/settings-repository';


/** Reads the preferences the gate needs, from the current settings document. */
export function preferenceReaders(settings: SettingsRepository): { approvalExpiryMs(): number; defaultToolMode(): DefaultToolMode } {
  return {
    approvalExpiryMs: () => settings.get().preferences.approvalTimeoutMs ?? DEFAULT_APPROVAL_EXPIRY_MS,
    defaultToolMode: () => settings.get().preferences.defaultToolMode ?? 'ask',
  };
}

/** The ledger as Settings sees it: where it lives and whether it is in safe mode. */
export interface LedgerFacts {
  dir: string;
  safeMode(): boolean;
}

/** What the module needs. */
export interface PreferencesModuleOptions {
  settings: SettingsRepository;
  secrets: ListableSecretStore;
  events: CoreEvents;
  journal: Journal;
  clock: Clock;
  /** Main's native dialog (the gate's prompter): confirms a change that makes Warden ask less. */
  prompter: ApprovalPrompter;
  /** Re-checks pending approvals against the current policy (the gate's `revalidate`). */
  revalidate(cause: string): Promise<void>;
  about: { version: string; platform: string };
  /** The folder Warden keeps its files in (main: the user-data folder), or null. */
  dataFolder: string | null;
  /** The durable ledger, or null when the journal is in memory. */
  ledger: LedgerFacts | null;
  /** Verifies a ledger folder (default: `verifyLedgerInWorker`, off the main thread). */
  verify(dir: string): Promise<LedgerVerifyResult>;
  /** Attempts when the only problem is a record still being written at the end (default 3). */
  verifyAttempts?: number;
}

/** Where the keychain is, in the words of each platform. */
function keychainName(platform: string): string {
  if (platform === 'darwin') return 'the macOS Keychain';
  if (platform === 'win32') return 'Windows Credential Manager';
  return 'the system keyring (Secret Service: GNOME Keyring or KWallet)';
}

/** A ledger problem in words. */
const PROBLEM_WORDS: Record<NonNullable<LedgerVerifyResult['firstBroken']>['problem'], string> = {
  torn: 'is cut off (an unfinished write)',
  unparseable: 'is not a readable record',
  checksum: 'does not match its checksum (it was changed after it was written)',
  chain: 'does not link to the record before it (a record was removed, reordered or changed)',
  sequence: 'has the wrong sequence number (a record is missing or repeated)',
  key: "is sealed with a key Warden does not have (the ledger's key is missing from the keychain, or is another one)",
  unkeyed: 'is not sealed with the ledger\'s key although the records before it are (it was rewritten, or written while the keychain was unavailable)',
  anchor: 'does not match what Warden recorded outside the ledger (records were removed, blanked or rewritten, or an older copy was put back)',
};

/** What the checksums could show, from how many records are plain and how many sealed. */
function sealingWords(result: LedgerVerifyResult): string {
  const s = result.sealing;
  if (!s || s.plain === 0) return '';
  const plain = `${s.plain.toLocaleString('en-US')} record${s.plain === 1 ? '' : 's'}`;
  return s.sealed === 0 && s.unverified === 0
    ? ` None is sealed with the ledger's key yet: their checksums show damage, not a deliberate rewrite.`
    : ` The first ${plain} were written before the ledger had a key: their checksums show damage, not a deliberate rewrite; the rest are sealed with the key.`;
}

/** The verify result as what a person reads in Settings. */
export function describeLedgerCheck(result: LedgerVerifyResult): string {
  const records = `${result.records.toLocaleString('en-US')} record${result.records === 1 ? '' : 's'}`;
  const files = `${result.segments.length} file${result.segments.length === 1 ? '' : 's'}`;
  if (result.ok) return `Intact: all ${records} in ${files} pass their checksums and the hash chain is unbroken.${sealingWords(result)}`;
  const b = result.firstBroken!;
  if (b.detail) return `Not intact: ${b.detail} Keep a copy of the folder before changing anything.`;
  const which = b.seq !== undefined ? `Record ${b.seq}` : 'A record';
  return `Damaged: ${which} in ${b.segment} (at byte ${b.offset}) ${PROBLEM_WORDS[b.problem]}. The ${records} before it check out. Keep a copy of the folder before changing anything.`;
}

/** Builds the handlers for `settings:get`, `settings:set` and `ledger:verify`. */
export function createPreferencesModule(o: PreferencesModuleOptions) {
  const read = preferenceReaders(o.settings);

  async function keychain(): Promise<SettingsView['keychain']> {
    try {
      await o.secrets.keys('');
      return { available: true, detail: `Secrets are kept in ${keychainName(o.about.platform)}. Warden never writes them to a file.` };
    } catch (error) {
      return { available: false, detail: error instanceof Error ? error.message : String(error) };
    }
  }

  async function view(): Promise<SettingsView> {
    const versions: Record<string, string> = {};
    for (const key of ['electron', 'chrome', 'node', 'v8'] as const) {
      const v = process.versions[key as keyof NodeJS.ProcessVersions];
      if (typeof v === 'string') versions[key] = v;
    }
    return {
      approvals: { expiryMs: read.approvalExpiryMs(), defaultExpiryMs: DEFAULT_APPROVAL_EXPIRY_MS },
      permissions: { defaultToolMode: read.defaultToolMode() },
      keychain: await keychain(),
      ledger: { kind: o.journal.kind, dir: o.ledger?.dir ?? null, records: o.journal.size(), safeMode: o.ledger?.safeMode() ?? false },
      dataFolder: o.dataFolder,
      settingsFile: { path: o.settings.path, problem: o.settings.problem?.message ?? null },
      about: { version: o.about.version, platform: o.about.platform, arch: process.arch, versions },
    };
  }

  /** Asks the person, in main's dialog, before tools with no rule are offered again. */
  async function confirmLiftingDisabledDefault(): Promise<void> {
    const choice = await o.prompter.prompt({
      operationId: 'settings-change',
      title: 'Offer tools that have no rule again?',
      detail:
        'Tools that no rule of yours covers are Disabled now: models never see them and calls are refused. ' +
        'After this change models see them again, and every call of one asks you first.',
      argumentsJson: JSON.stringify({ defaultToolMode: { from: 'disabled', to: 'ask' } }, null, 2),
      argumentsText: 'Tools with no rule: from Disabled to Ask',
      serverLabel: 'Every server',
      accountLabel: 'Every account',
      toolName: 'Every tool with no rule',
    });
    if (choice !== 'approve') throw new WardenError('NOT_CONFIRMED', 'The change was not confirmed in the dialog; tools with no rule stay Disabled');
  }

  async function set(change: SettingsChange): Promise<SettingsView> {
    const before = read.defaultToolMode();
    const modeChanges = change.defaultToolMode !== undefined && change.defaultToolMode !== before;
    if (modeChanges && change.defaultToolMode === 'ask') await confirmLiftingDisabledDefault();
    o.settings.update((draft) => {
      if (change.approvalExpiryMs !== undefined) draft.preferences.approvalTimeoutMs = change.approvalExpiryMs;
      if (change.defaultToolMode !== undefined) draft.preferences.defaultToolMode = change.defaultToolMode;
    });
    const keys = Object.keys(change);
    if (modeChanges) {
      await o.journal.append([
        journalEntry('policy.changed', {
          ruleId: DEFAULT_MODE_RULE_ID,
          scope: { kind: 'global', serverId: null, accountId: null, toolName: null, conversationId: null },
          old: { mode: before },
          new: { mode: change.defaultToolMode },
          source: 'user',
          at: o.clock.now(),
        }),
      ]);
      // A pending approval of a tool that is now Disabled by default is denied, not left to be approved.
      await o.revalidate('the default for tools with no rule changed');
      o.events.emit('permissions:changed', { ruleId: DEFAULT_MODE_RULE_ID, scope: 'global' });
    }
    o.events.emit('settings:changed', { keys });
    return view();
  }

  async function verify(): Promise<LedgerCheck> {
    const checkedAt = o.clock.now();
    const started = performance.now();
    if (!o.ledger) {
      return {
        outcome: 'not-on-disk',
        summary: 'This Warden keeps its activity log in memory only (a test or development setup), so there is nothing on disk to check.',
        records: o.journal.size(),
        segments: 0,
        firstBroken: null,
        checkedAt,
        durationMs: 0,
      };
    }
    // A record being appended while the files are read can look cut off at the very end: look
    // again before calling that damage (a real torn tail stays torn).
    let result = await o.verify(o.ledger.dir);
    for (let attempt = 1; attempt < (o.verifyAttempts ?? 3) && isTailBeingWritten(result); attempt++) {
      await new Promise((r) => setTimeout(r, 50 * attempt));
      result = await o.verify(o.ledger.dir);
    }
    const b = result.firstBroken;
    return {
      outcome: result.ok ? 'intact' : 'damaged',
      summary: describeLedgerCheck(result),
      records: result.records,
      segments: result.segments.length,
      firstBroken: b ? { segment: b.segment, offset: b.offset, problem: b.problem, ...(b.seq !== undefined ? { seq: b.seq } : {}) } : null,
      checkedAt,
      durationMs: Math.round(performance.now() - started),
    };
  }

  return {
    handlers: {
      'settings:get': () => view(),
      'settings:set': (change: SettingsChange) => set(change),
      'ledger:verify': () => verify(),
    },
  };
}

/** True when the only problem is an unfinished record in the last file (an append in progress). */
function isTailBeingWritten(result: LedgerVerifyResult): boolean {
  return !result.ok && result.firstBroken?.problem === 'torn' && result.firstBroken.segment === result.segments.at(-1);
}
