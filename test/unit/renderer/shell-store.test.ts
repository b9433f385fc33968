/**
 * The renderer shell's own logic: the sidebar and status-details layout (remembered in storage),
 * the status bar's words, names instead of ids, the Settings view's durations and choices, and
 * the settings slice against the REAL core (a refused loosening shows what is really in force).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import { createWardenApi } from '../../../shared/ipc';
import { createAppStore } from '../../../renderer/src/store';
import {
  isSidebarCollapsed,
  parseSidebarPreference,
  toggledSidebarPreference,
  type KeyValueStorage,
} from '../../../renderer/src/store/layout-slice';
import { connectionWords, ledgerWords, pendingWords, serversWords } from '../../../renderer/src/components/status-words';
import { eventWords, namesFor } from '../../../renderer/src/components/names';
import { journalEventSchemas } from '../../../shared/domain/journal-events';
import { OperationState } from '../../../shared/domain/operations';
import { expiryChoices, formatDuration, isSettableExpiry, EXPIRY_CHOICES_MS } from '../../../renderer/src/views/settings-helpers';
import type { ServerView } from '../../../shared/domain/servers';

/** A storage that keeps values in a map, as localStorage would. */
function memoryStorage(initial: Record<string, string> = {}): KeyValueStorage & { data: Map<string, string> } {
  const data = new Map(Object.entries(initial));
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v) };
}

/** A store whose bridge would fail if used: the layout slice must not need the core. */
const offline = () => {
  throw new Error('no bridge in this test');
};

describe('sidebar layout', () => {
  it('auto collapses only in a narrow window; an explicit choice wins over the width', () => {
    expect(isSidebarCollapsed('auto', false)).toBe(false);
    expect(isSidebarCollapsed('auto', true)).toBe(true);
    expect(isSidebarCollapsed('expanded', true)).toBe(false);
    expect(isSidebarCollapsed('collapsed', false)).toBe(true);
  });

  it('the toggle always flips what the person sees, and makes the choice explicit', () => {
    expect(toggledSidebarPreference('auto', true)).toBe('expanded');
    expect(toggledSidebarPreference('auto', false)).toBe('collapsed');
    expect(toggledSidebarPreference('collapsed', false)).toBe('expanded');
    expect(toggledSidebarPreference('expanded', true)).toBe('collapsed');
  });

  it('a stored value that is missing or unknown reads as auto', () => {
    expect(parseSidebarPreference(null)).toBe('auto');
    expect(parseSidebarPreference('sideways')).toBe('auto');
    expect(parseSidebarPreference('collapsed')).toBe('collapsed');
  });

  it('the slice remembers the sidebar and the status details in storage, and reads them back', () => {
    const storage = memoryStorage();
    const store = createAppStore({ api: offline, storage });
    expect(store.getState()).toMatchObject({ sidebarPreference: 'auto', statusDetailsOpen: false });
    store.getState().toggleSidebar();
    store.getState().toggleStatusDetails();
    expect(storage.data.get('warden.sidebar')).toBe('collapsed');
    expect(storage.data.get('warden.status-details')).toBe('open');
    const again = createAppStore({ api: offline, storage });
    expect(again.getState()).toMatchObject({ sidebarPreference: 'collapsed', statusDetailsOpen: true });
  });

  it('the Chat welcome, once dismissed, stays dismissed; "Add a model" opens Settings at Models', () => {
    const storage = memoryStorage();
    const store = createAppStore({ api: offline, storage });
    expect(store.getState().welcomeDismissed).toBe(false);
    store.getState().dismissWelcome();
    expect(createAppStore({ api: offline, storage }).getState().welcomeDismissed).toBe(true);
    store.getState().openSettingsAt('models');
    expect(store.getState()).toMatchObject({ view: 'settings', settingsSection: 'models' });
    store.getState().settingsSectionShown();
    expect(store.getState().settingsSection).toBeNull();
  });

  it('a storage that throws loses only the memory, never the layout change', () => {
    const broken: KeyValueStorage = {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('denied');
      },
    };
    const store = createAppStore({ api: offline, storage: broken });
    store.getState().toggleSidebar();
    expect(store.getState().sidebarPreference).toBe('collapsed');
  });
});

describe('status bar words', () => {
  it('servers: none yet, none connected, some, all', () => {
    expect(serversWords({ configured: 0, connected: 0 })).toEqual({ text: 'No servers yet', tone: 'idle' });
    expect(serversWords({ configured: 1, connected: 0 })).toEqual({ text: 'Server not connected', tone: 'idle' });
    expect(serversWords({ configured: 3, connected: 0 })).toEqual({ text: 'None of 3 servers connected', tone: 'idle' });
    expect(serversWords({ configured: 3, connected: 2 })).toEqual({ text: '2 of 3 servers connected', tone: 'warn' });
    expect(serversWords({ configured: 3, connected: 3 })).toEqual({ text: 'All 3 servers connected', tone: 'ok' });
    expect(serversWords({ configured: 1, connected: 1 })).toEqual({ text: 'Server connected', tone: 'ok' });
  });

  it('pending approvals, singular and plural', () => {
    expect(pendingWords(0)).toEqual({ text: 'Nothing waiting for approval', tone: 'idle' });
    expect(pendingWords(1)).toEqual({ text: '1 call waiting for your approval', tone: 'warn' });
    expect(pendingWords(4)).toEqual({ text: '4 calls waiting for your approval', tone: 'warn' });
  });

  it('the activity log: damage (safe mode) outranks everything, memory is a warning', () => {
    expect(ledgerWords({ safeMode: true, journal: { kind: 'ledger', records: 9 } }).tone).toBe('danger');
    expect(ledgerWords({ safeMode: true, journal: { kind: 'memory', records: 9 } }).text).toBe('Activity log damaged: every tool asks');
    expect(ledgerWords({ safeMode: false, journal: { kind: 'memory', records: 0 } })).toEqual({ text: 'Activity log not saved to disk', tone: 'warn' });
    expect(ledgerWords({ safeMode: false, journal: { kind: 'ledger', records: 0 } })).toEqual({ text: 'Activity log: no damage found', tone: 'ok' });
    // Past activity still being indexed in the background after a start without a current index.
    expect(ledgerWords({ safeMode: false, journal: { kind: 'ledger', records: 9, indexing: 42 } })).toEqual({ text: 'Indexing past activity (42%): Activity shows it when done', tone: 'warn' });
    expect(ledgerWords({ safeMode: true, journal: { kind: 'ledger', records: 9, indexing: 42 } }).tone).toBe('danger');
    // Out of safe mode after a person acknowledged damage: the log is still not whole.
    expect(ledgerWords({ safeMode: false, journal: { kind: 'ledger', records: 9, acknowledgedDamage: 1 } })).toEqual({ text: 'Activity log: damage found and acknowledged', tone: 'warn' });
    expect(ledgerWords({ safeMode: false, journal: { kind: 'ledger', records: 9, acknowledgedDamage: 3 } }).text).toBe('Activity log: 3 places of damage found and acknowledged');
    expect(ledgerWords({ safeMode: true, journal: { kind: 'ledger', records: 9, acknowledgedDamage: 1 } }).tone).toBe('danger');
  });

  it('the link to the core', () => {
    expect(connectionWords('live').text).toBe('Live');
    expect(connectionWords('error').tone).toBe('danger');
  });
});

describe('names, not ids', () => {
  const servers = [
    { definition: { id: 'files-1a2b', name: 'Files' }, accounts: [{ id: 'work-3c4d', label: 'Work' }] },
  ] as unknown as ServerView[];
  it('uses the names the core listed', () => {
    expect(namesFor(servers, 'files-1a2b', 'work-3c4d')).toEqual({ server: 'Files', account: 'Work', known: true });
  });
  it('falls back to the id, marked unknown, for a server or account that was removed', () => {
    expect(namesFor(servers, 'gone-9', 'acct-9')).toEqual({ server: 'gone-9', account: 'acct-9', known: false });
    expect(namesFor(servers, 'files-1a2b', 'old-acct')).toEqual({ server: 'Files', account: 'old-acct', known: false });
  });
  it('activity events are said in words; every operation state has its own, and an unknown record type keeps its name', () => {
    expect(eventWords({ type: 'op.proposed', to: 'proposed' })).toBe('Requested');
    expect(eventWords({ type: 'op.transition', to: 'executing' })).toBe('Sent to the server');
    expect(eventWords({ type: 'policy.changed', to: null })).toBe('Permission changed');
    expect(eventWords({ type: 'something.new', to: null })).toBe('something.new');
    const said = OperationState.options.map((to) => eventWords({ type: 'op.transition', to }));
    expect(said.filter((w, i) => w === OperationState.options[i])).toEqual([]);
    expect(new Set(said).size).toBe(said.length);
  });
  it('every journal event type that is not a state change has words of its own in Activity', () => {
    const types = Object.keys(journalEventSchemas).filter((t) => t !== 'op.proposed' && t !== 'op.transition');
    expect(types.filter((type) => eventWords({ type, to: null }) === type)).toEqual([]);
  });
});

describe('Settings helpers', () => {
  it('durations in words', () => {
    expect(formatDuration(60_000)).toBe('1 minute');
    expect(formatDuration(600_000)).toBe('10 minutes');
    expect(formatDuration(3_600_000)).toBe('1 hour');
    expect(formatDuration(5_400_000)).toBe('1 hour 30 minutes');
    expect(formatDuration(86_400_000)).toBe('1 day');
    expect(formatDuration(10_000)).toBe('10 seconds');
  });
  it('the expiry choices include a hand-set value, so the page never shows something untrue; out-of-range ones cannot be chosen again', () => {
    expect(expiryChoices(600_000)).toEqual([...EXPIRY_CHOICES_MS]);
    expect(expiryChoices(10_000)[0]).toBe(10_000);
    expect(isSettableExpiry(10_000)).toBe(false);
    expect(EXPIRY_CHOICES_MS.every(isSettableExpiry)).toBe(true);
  });
});

describe('settings slice over the real core', () => {
  let core: WardenCore | undefined;
  afterEach(async () => {
    await core?.close();
    core = undefined;
  });

  function storeOver(answer: 'approve' | 'deny') {
    core = createCore({ version: '9.9.9-unit', platform: 'unit-os', gate: { prompter: { prompt: async () => answer } } });
    const c = core;
    const api = createWardenApi(
      (channel, request) => dispatch(c.handlers, channel, request, () => {}),
      (event, listener) => c.events.subscribe((e, payload) => e === event && listener(payload)),
    );
    return createAppStore({ api: () => api, storage: null });
  }

  it('mirrors settings:get and applies a change main accepts', async () => {
    const store = storeOver('approve');
    await store.getState().refreshSettings();
    expect(store.getState().settings?.approvals.expiryMs).toBe(600_000);
    expect(await store.getState().changeSettings({ approvalExpiryMs: 300_000 })).toBe(true);
    expect(store.getState().settings?.approvals.expiryMs).toBe(300_000);
    expect(store.getState().settingsError).toBeNull();
  });

  it('a change refused in the native dialog is shown with its code, and the cache shows what is really in force', async () => {
    const store = storeOver('deny');
    expect(await store.getState().changeSettings({ defaultToolMode: 'disabled' })).toBe(true);
    expect(await store.getState().changeSettings({ defaultToolMode: 'ask' })).toBe(false);
    expect(store.getState().settingsError).toMatchObject({ code: 'NOT_CONFIRMED' });
    expect(store.getState().settings?.permissions.defaultToolMode).toBe('disabled');
    expect(store.getState().settingsSaving).toBe(false);
  });

  it('the theme choice goes to main and comes back as what is drawn now', async () => {
    const store = storeOver('approve');
    await store.getState().refreshSettings();
    expect(store.getState().theme).toEqual({ preference: 'system', dark: false });
    await store.getState().setTheme('dark');
    expect(store.getState().theme).toEqual({ preference: 'dark', dark: true });
    expect((await core!.handlers['theme:get']({})).preference).toBe('dark');
  });

  it('follows settings:changed, and a ledger check without a ledger says so in words', async () => {
    const store = storeOver('approve');
    const off = store.getState().watchSettings();
    await core!.handlers['settings:set']({ approvalExpiryMs: 120_000 });
    await expect.poll(() => store.getState().settings?.approvals.expiryMs).toBe(120_000);
    off();
    await store.getState().verifyLedger();
    expect(store.getState().ledgerCheck).toMatchObject({ outcome: 'not-on-disk' });
    expect(store.getState().ledgerChecking).toBe(false);
  });
});
