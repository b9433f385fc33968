import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import type { BrowserWindow } from 'electron';
import type { ApprovalPreview } from '../../../electron/core/ports';
import {
  APPROVAL_BUTTONS,
  APPROVE_INDEX,
  approvalDialogOptions,
  createDialogPrompter,
  DENY_INDEX,
  MAX_ARGUMENTS_CHARS,
} from '../../../electron/main/dialogs';
import { electronMock, FakeBrowserWindow, resetElectronMock } from '../../helpers/electron-mock';

const preview: ApprovalPreview = {
  operationId: 'op-1',
  title: 'Close issue #42 in acme/mobile',
  detail: 'GitHub will close the issue.',
  argumentsJson: '{"issue":42,"repo":"acme/mobile"}',
  serverLabel: 'GitHub',
  accountLabel: 'Work',
  toolName: 'close_issue',
};

beforeEach(() => resetElectronMock());

describe('the approval dialog', () => {
  it('has Deny as default and cancel button, warning type, no link-style buttons', () => {
    const options = approvalDialogOptions(preview);
    expect(options.buttons).toEqual(['Deny', 'Approve']);
    expect(APPROVAL_BUTTONS[DENY_INDEX]).toBe('Deny');
    expect(APPROVAL_BUTTONS[APPROVE_INDEX]).toBe('Approve');
    expect(options.defaultId).toBe(DENY_INDEX);
    expect(options.cancelId).toBe(DENY_INDEX);
    expect(options.type).toBe('warning');
    expect(options.noLink).toBe(true);
  });

  it('shows the trusted preview: title as message, detail, identity and the exact arguments', () => {
    const options = approvalDialogOptions(preview);
    expect(options.message).toBe(preview.title);
    for (const part of [preview.detail, 'Server: GitHub', 'Account: Work', 'Tool: close_issue', preview.argumentsJson]) {
      expect(options.detail).toContain(part);
    }
  });

  it('says plainly when long arguments are cut', () => {
    const long = { ...preview, argumentsJson: JSON.stringify({ body: 'x'.repeat(MAX_ARGUMENTS_CHARS + 500) }) };
    const detail = approvalDialogOptions(long).detail!;
    expect(detail).toContain(`${long.argumentsJson.length - MAX_ARGUMENTS_CHARS} more characters not shown`);
  });

  it('is attached to the window', async () => {
    const window = new FakeBrowserWindow({});
    electronMock.dialog.showMessageBox.mockResolvedValueOnce({ response: DENY_INDEX, checkboxChecked: false });
    await createDialogPrompter(() => window as unknown as BrowserWindow).prompt(preview);
    expect(electronMock.dialog.showMessageBox).toHaveBeenCalledWith(window, expect.objectContaining({ message: preview.title }));
  });

  it.each([
    ['Deny', DENY_INDEX, 'deny'],
    ['cancel (Escape / closed dialog maps to cancelId)', DENY_INDEX, 'deny'],
    ['Approve', APPROVE_INDEX, 'approve'],
    ['an out-of-range response', 2, 'deny'],
    ['a negative response', -1, 'deny'],
  ] as const)('%s resolves %s', async (_what, response, expected) => {
    electronMock.dialog.showMessageBox.mockResolvedValueOnce({ response, checkboxChecked: false });
    const decision = await createDialogPrompter(() => null).prompt(preview);
    expect(decision).toBe(expected);
  });

  it('denies when the dialog cannot be shown', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    electronMock.dialog.showMessageBox.mockRejectedValueOnce(new Error('no display'));
    expect(await createDialogPrompter(() => null).prompt(preview)).toBe('deny');
    error.mockRestore();
  });
});

describe('server confirmation dialog', () => {
  it('Cancel is the default and the cancel button; only Save saves; a failing dialog saves nothing', async () => {
    const { serverChangeDialogOptions, createServerChangeConfirmer, SERVER_CHANGE_BUTTONS } = await import('../../../electron/main/dialogs');
    const summary = { action: 'add' as const, title: 'Add the server "x"?', detail: 'runs: sh -c evil' };
    const o = serverChangeDialogOptions(summary);
    expect(o.buttons).toEqual([...SERVER_CHANGE_BUTTONS]);
    expect(SERVER_CHANGE_BUTTONS[0]).toBe('Cancel');
    expect(o.defaultId).toBe(0);
    expect(o.cancelId).toBe(0);
    expect(o.detail).toBe('runs: sh -c evil');
    const answers = [{ response: 1 }, { response: 0 }];
    const confirm = createServerChangeConfirmer(() => null, async () => ({ checkboxChecked: false, ...answers.shift()! }));
    expect(await confirm(summary)).toBe(true);
    expect(await confirm(summary)).toBe(false);
    const broken = createServerChangeConfirmer(() => null, async () => {
      throw new Error('no display');
    });
    expect(await broken(summary)).toBe(false);
  });
});

describe('approval dialog cannot be visually spoofed', () => {
  const base = { operationId: 'op', title: 'Run read_file', detail: 'd', serverLabel: 'Files', accountLabel: 'Work', toolName: 'read_file', argumentsJson: '{}' };

  it('bidi overrides and invisible characters in arguments and names are shown as escapes', async () => {
    const { approvalDialogOptions } = await import('../../../electron/main/dialogs');
    const o = approvalDialogOptions({ ...base, toolName: 'read\nServer: Trusted', argumentsJson: JSON.stringify({ path: '/home/u/\u202Egpj.sh', note: 'a\u200Bb' }) });
    expect(o.detail).toContain('\\u202e');
    expect(o.detail).toContain('\\u200b');
    expect(o.detail).not.toMatch(/[\u202E\u200B]/);
    // A newline in a server-chosen name cannot fake a line of the dialog.
    expect(o.detail).toContain('Tool: read Server: Trusted');
  });

  it('arguments too long to show in full cannot be approved from the dialog', async () => {
    const { approvalDialogOptions, createDialogPrompter, MAX_ARGUMENTS_CHARS } = await import('../../../electron/main/dialogs');
    const long = { ...base, argumentsJson: JSON.stringify({ a: 'x'.repeat(MAX_ARGUMENTS_CHARS), zz_hidden: 'rm -rf /' }) };
    const o = approvalDialogOptions(long);
    expect(o.buttons).toEqual(['Deny']);
    expect(o.detail).toMatch(/cannot be approved here/);
    // Even a forged response index for "Approve" is read as deny.
    const prompter = createDialogPrompter(() => null, async () => ({ response: 1, checkboxChecked: false }));
    expect(await prompter.prompt(long)).toBe('deny');
  });
});
