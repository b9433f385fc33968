/**
 * Main's side of OAuth sign-in: the native question before another site is contacted, and the
 * log line written when the authorization page is opened (which must not carry its query).
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import { electronMock, resetElectronMock } from '../../helpers/electron-mock';

beforeEach(() => resetElectronMock());

const question = {
  serverName: 'Tracker\u202E',
  serverUrl: 'https://mcp.example.com/mcp',
  origin: 'https://login.example.net',
  url: 'https://login.example.net/.well-known/oauth-authorization-server',
};

describe('"sign in on another site?" dialog', () => {
  it('Cancel is the default and the cancel button; only Continue says yes; a failing dialog says no', async () => {
    const { authorizationServerDialogOptions, createAuthorizationServerConfirmer, AUTHORIZATION_SERVER_BUTTONS } = await import('../../../electron/main/oauth-dialog');
    const o = authorizationServerDialogOptions(question);
    expect(o.buttons).toEqual([...AUTHORIZATION_SERVER_BUTTONS]);
    expect(AUTHORIZATION_SERVER_BUTTONS[0]).toBe('Cancel');
    expect(o.defaultId).toBe(0);
    expect(o.cancelId).toBe(0);
    // Names the server (hidden characters made visible), its address and the other site.
    expect(o.message).toContain('https://login.example.net');
    expect(o.message).toContain('\\u202e');
    expect(o.detail).toContain('https://mcp.example.com/mcp');
    expect(o.detail).toContain('not the server\'s own site');

    const answers = [1, 0, 2];
    const confirm = createAuthorizationServerConfirmer(() => null, async () => ({ checkboxChecked: false, response: answers.shift()! }));
    expect(await confirm(question)).toBe(true);
    expect(await confirm(question)).toBe(false);
    expect(await confirm(question)).toBe(false);
    const broken = createAuthorizationServerConfirmer(() => null, async () => {
      throw new Error('no display');
    });
    expect(await broken(question)).toBe(false);
  });

  it('is shown with dialog.showMessageBox by default', async () => {
    const { createAuthorizationServerConfirmer } = await import('../../../electron/main/oauth-dialog');
    electronMock.dialog.showMessageBox.mockResolvedValueOnce({ response: 1, checkboxChecked: false });
    expect(await createAuthorizationServerConfirmer(() => null)(question)).toBe(true);
    expect(electronMock.dialog.showMessageBox).toHaveBeenCalledTimes(1);
  });
});

describe('opening the authorization page', () => {
  it('the authorization URL is never written to the log: only its origin and path', async () => {
    const { systemBrowser } = await import('../../../electron/main/security');
    const lines: string[] = [];
    vi.spyOn(console, 'info').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    const url = 'https://login.example.net/authorize?response_type=code&client_id=warden&state=s3cr3t-state-value&code_challenge=ch4llenge-value&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcallback';
    await systemBrowser.open(url);
    expect(electronMock.shell.openExternal).toHaveBeenCalledExactlyOnceWith(url);
    expect(lines.join('\n')).toContain('https://login.example.net/authorize');
    expect(lines.join('\n')).not.toContain('s3cr3t-state-value');
    expect(lines.join('\n')).not.toContain('ch4llenge-value');
    expect(lines.join('\n')).not.toContain('?');
  });
});
