/**
 * Main's side of choosing where conversations go: the native question before a model provider's
 * base URL is saved, and that the app gives it to the core.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import { electronMock, resetElectronMock } from '../../helpers/electron-mock';

beforeEach(() => resetElectronMock());

const question = { action: 'move' as const, kind: 'openai' as const, label: 'Local\u202Emodel', baseUrl: 'https://models.example.net/v1', previousBaseUrl: 'http://127.0.0.1:11434/v1' };

describe('"send conversations to this address?" dialog', () => {
  it('Cancel is the default and the cancel button; only the second button says yes; a failing dialog says no', async () => {
    const { providerEndpointDialogOptions, createProviderEndpointConfirmer, PROVIDER_ENDPOINT_BUTTONS } = await import('../../../electron/main/provider-dialog');
    const o = providerEndpointDialogOptions(question);
    expect(o.buttons).toEqual([...PROVIDER_ENDPOINT_BUTTONS]);
    expect(PROVIDER_ENDPOINT_BUTTONS[0]).toBe('Cancel');
    expect(o.defaultId).toBe(0);
    expect(o.cancelId).toBe(0);
    // The exact new address, the old one, what is sent there; the label's hidden characters made visible.
    expect(o.message).toContain('https://models.example.net/v1');
    expect(o.message).toContain('\\u202e');
    expect(o.detail).toContain('http://127.0.0.1:11434/v1');
    expect(o.detail).toMatch(/results of the tools/);
    expect(providerEndpointDialogOptions({ ...question, action: 'add', previousBaseUrl: null }).message).toMatch(/^Add the model provider/);

    const answers = [1, 0, 2];
    const confirm = createProviderEndpointConfirmer(() => null, async () => ({ checkboxChecked: false, response: answers.shift()! }));
    expect(await confirm(question)).toBe(true);
    expect(await confirm(question)).toBe(false);
    expect(await confirm(question)).toBe(false);
    const broken = createProviderEndpointConfirmer(() => null, async () => {
      throw new Error('no display');
    });
    expect(await broken(question)).toBe(false);
  });

  it('is shown with dialog.showMessageBox by default', async () => {
    const { createProviderEndpointConfirmer } = await import('../../../electron/main/provider-dialog');
    electronMock.dialog.showMessageBox.mockResolvedValueOnce({ response: 1, checkboxChecked: false });
    expect(await createProviderEndpointConfirmer(() => null)(question)).toBe(true);
    expect(electronMock.dialog.showMessageBox).toHaveBeenCalledTimes(1);
  });
});
