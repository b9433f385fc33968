/**
 * The renderer store against the REAL core: the store is built over a `WardenApi` made by the
 * same `createWardenApi` the preload uses, wired straight to `dispatch` and the core's events, so
 * these tests prove the slices mirror what the core says and show its failures with their codes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch, type Handlers } from '../../../electron/core/dispatch';
import { createWardenApi, type WardenApi } from '../../../shared/ipc';
import { WardenError, type Result } from '../../../shared/result';
import { ContractError, getWardenApi, toShownError, unwrap } from '../../../renderer/src/api';
import { createAppStore, type AppStore } from '../../../renderer/src/store';
import { VIEW_IDS } from '../../../renderer/src/store/navigation-slice';
import { APP_VIEWS } from '../../../shared/contract/app';

let core: WardenCore;
let handlers: Handlers;
let failStatus: WardenError | Error | null;
let api: WardenApi;
let store: AppStore;

beforeEach(() => {
  core = createCore({ version: '9.9.9-unit', platform: 'unit-os' });
  failStatus = null;
  handlers = {
    ...core.handlers,
    'core:status': (request) => {
      if (failStatus) throw failStatus;
      return core.handlers['core:status'](request);
    },
  };
  api = createWardenApi(
    (channel, request) => dispatch(handlers, channel, request, () => {}),
    (event, listener) => core.events.subscribe((e, payload) => e === event && listener(payload)),
  );
  store = createAppStore({ api: () => api });
});

afterEach(async () => {
  await core.close();
});

describe('renderer store over the real core', () => {
  it('starts connecting with no status, and mirrors core:status once fetched', async () => {
    expect(store.getState()).toMatchObject({ status: null, connection: 'connecting', coreError: null });
    await store.getState().refreshStatus();
    expect(store.getState().status).toEqual(core.status());
    expect(store.getState().connection).toBe('live');
  });

  it('a pushed core:status-changed replaces the cached status, and unsubscribing stops updates', async () => {
    const unsubscribe = store.getState().watchStatus();
    const changed = { ...core.status(), pendingApprovals: 4, safeMode: true };
    core.events.emit('core:status-changed', changed);
    expect(store.getState().status).toEqual(changed);
    expect(store.getState().connection).toBe('live');
    unsubscribe();
    core.events.emit('core:status-changed', { ...changed, pendingApprovals: 9 });
    expect(store.getState().status?.pendingApprovals).toBe(4);
  });

  it('a contract failure is kept with its code and message, and the next success clears it', async () => {
    failStatus = new WardenError('UNSUPPORTED', 'status is off');
    await store.getState().refreshStatus();
    expect(store.getState()).toMatchObject({ connection: 'error', coreError: { code: 'UNSUPPORTED', message: 'status is off' } });
    failStatus = null;
    await store.getState().refreshStatus();
    expect(store.getState()).toMatchObject({ connection: 'live', coreError: null });
  });

  it('an unexpected core failure arrives as INTERNAL naming the channel, not as a crash', async () => {
    failStatus = new Error('disk on fire');
    await store.getState().refreshStatus();
    expect(store.getState().coreError?.code).toBe('INTERNAL');
    expect(store.getState().coreError?.message).toContain('core:status');
  });

  it('without a bridge, the store reports NOT_CONNECTED instead of throwing', async () => {
    const bare = createAppStore({ api: getWardenApi });
    await bare.getState().refreshStatus();
    expect(bare.getState().coreError?.code).toBe('NOT_CONNECTED');
    expect(bare.getState().coreError?.message).toContain('window.warden');
    const unsubscribe = bare.getState().watchStatus();
    expect(typeof unsubscribe).toBe('function');
    expect(bare.getState().connection).toBe('error');
  });

  it('navigation moves between known views and ignores unknown ones', () => {
    expect(store.getState().view).toBe('chat');
    store.getState().navigate('approvals');
    expect(store.getState().view).toBe('approvals');
    store.getState().navigate('approve-everything' as never);
    expect(store.getState().view).toBe('approvals');
  });
});

describe('commands from the application menu and notifications (app:command)', () => {
  it('every view a command can open is a view of the frame, in the frame order', () => {
    expect(VIEW_IDS.filter((v) => (APP_VIEWS as readonly string[]).includes(v))).toEqual([...APP_VIEWS]);
  });

  it('show-view opens the view, new-chat opens Chat and asks for a new conversation', () => {
    const unwatch = store.getState().watchAppCommands();
    core.events.emit('app:command', { type: 'show-view', view: 'approvals' });
    expect(store.getState().view).toBe('approvals');
    core.events.emit('app:command', { type: 'new-chat' });
    expect(store.getState()).toMatchObject({ view: 'chat', newChatRequests: 1 });
    unwatch();
    core.events.emit('app:command', { type: 'show-view', view: 'activity' });
    expect(store.getState().view).toBe('chat');
  });

  it('open-settings (Ctrl/Cmd+, in the menu) opens the Settings view', () => {
    store.getState().watchAppCommands();
    store.getState().navigate('servers');
    core.events.emit('app:command', { type: 'open-settings' });
    expect(store.getState()).toMatchObject({ view: 'settings', navigationNotice: null });
  });

  it('a command the contract does not know is refused before the page, and ignored by the slice', () => {
    store.getState().watchAppCommands();
    expect(() => core.events.emit('app:command', { type: 'approve', operationId: 'x' } as never)).toThrow();
    store.getState().runAppCommand({ type: 'show-view', view: 'approve-everything' } as never);
    store.getState().runAppCommand({ type: 'unknown' } as never);
    expect(store.getState().view).toBe('chat');
  });

  it('without a bridge, following commands is a no-op instead of a crash', () => {
    const bare = createAppStore({ api: getWardenApi });
    expect(typeof bare.getState().watchAppCommands()).toBe('function');
  });
});

describe('unwrap', () => {
  it('returns the value of an ok result and throws ContractError(code, message) for a failed one', async () => {
    await expect(unwrap(Promise.resolve({ ok: true, value: 42 } as Result<number>))).resolves.toBe(42);
    const failed = unwrap(Promise.resolve({ ok: false, error: { code: 'DENIED', message: 'no' } } as Result<number>));
    await expect(failed).rejects.toBeInstanceOf(ContractError);
    await expect(failed).rejects.toMatchObject({ code: 'DENIED', message: 'no' });
  });

  it('turns a rejected bridge call into NOT_CONNECTED and a non-Result into INVALID_RESPONSE', async () => {
    await expect(unwrap(Promise.reject(new Error('could not be cloned')))).rejects.toMatchObject({ code: 'NOT_CONNECTED' });
    await expect(unwrap(Promise.resolve('surprise' as unknown as Result<number>))).rejects.toMatchObject({ code: 'INVALID_RESPONSE' });
    expect(toShownError(new TypeError('bug'))).toEqual({ code: 'INTERNAL', message: 'bug' });
  });
});
