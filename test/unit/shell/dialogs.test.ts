import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import type { BrowserWindow } from 'electron';
import type { ApprovalPreview } from '../../../electron/core/ports';
import {
  APPROVAL_BUTTONS,
  APPROVE_INDEX,
  approvalDialogOptions,
  batchApprovalDialogOptions,
  createDialogPrompter,
  createLinkConfirmer,
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

  it('keeping secret-looking values in plain settings is its own button, never what Save or any other answer does', async () => {
    const { serverChangeDialogOptions, createServerChangeConfirmer, PLAIN_VALUES_BUTTONS } = await import('../../../electron/main/dialogs');
    const summary = { action: 'import' as const, title: 'Import 1 server?', detail: 'GITHUB_TOKEN = (secret-looking value, 44 characters)', plainValues: ['GITHUB_TOKEN of "github"'] };
    const o = serverChangeDialogOptions(summary);
    expect(o.buttons).toEqual([...PLAIN_VALUES_BUTTONS]);
    expect(o.buttons![1]).toMatch(/OS keychain/);
    expect(o.buttons![2]).toMatch(/keeping them in plain settings/);
    expect(o.defaultId).toBe(0);
    expect(o.cancelId).toBe(0);
    expect(o.detail).toContain('GITHUB_TOKEN of "github"');
    const answers = [0, 1, 2, 3, -1];
    const confirm = createServerChangeConfirmer(() => null, async () => ({ checkboxChecked: false, response: answers.shift()! }));
    expect([await confirm(summary), await confirm(summary), await confirm(summary), await confirm(summary), await confirm(summary)]).toEqual([false, true, 'keep-plain', false, false]);
    // Without values to keep plain, a forged third answer saves nothing.
    const plainless = createServerChangeConfirmer(() => null, async () => ({ checkboxChecked: false, response: 2 }));
    expect(await plainless({ ...summary, plainValues: [] })).toBe(false);
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

describe('the batch approval dialog (the calls of one model reply)', () => {
  const second: ApprovalPreview = { ...preview, operationId: 'op-2', title: 'Add a note', argumentsJson: '{"text":"buy milk"}', serverLabel: 'Demo', accountLabel: 'Default', toolName: 'notes_add' };

  it('lists every call with its server, account, tool and exact arguments; Deny all is default and cancel', () => {
    const options = batchApprovalDialogOptions([preview, second]);
    expect(options.buttons).toEqual(['Deny all', 'Review one by one', 'Approve all']);
    expect(options.defaultId).toBe(0);
    expect(options.cancelId).toBe(0);
    expect(options.message).toContain('2 tool calls');
    for (const part of ['1. Close issue #42', 'Server: GitHub · Account: Work · Tool: close_issue', preview.argumentsJson, '2. Add a note', 'Tool: notes_add', second.argumentsJson]) {
      expect(options.detail).toContain(part);
    }
  });

  it('offers no Approve all when the arguments cannot all be shown', () => {
    const long = { ...second, argumentsJson: JSON.stringify({ text: 'x'.repeat(MAX_ARGUMENTS_CHARS) }) };
    const options = batchApprovalDialogOptions([preview, long]);
    expect(options.buttons).toEqual(['Deny all', 'Review one by one']);
    expect(options.detail).toContain('more characters not shown');
  });

  it('maps only the pressed button to its choice; cancel, an unknown answer or a failure deny all', async () => {
    const prompter = createDialogPrompter(() => null);
    for (const [response, choice] of [[0, 'deny-all'], [1, 'one-by-one'], [2, 'approve-all'], [3, 'deny-all'], [-1, 'deny-all']] as const) {
      electronMock.dialog.showMessageBox.mockResolvedValueOnce({ response, checkboxChecked: false });
      expect(await prompter.promptBatch!([preview, second])).toBe(choice);
    }
    // Approve all's index on a dialog that does not show it never approves.
    const long = { ...second, argumentsJson: JSON.stringify({ text: 'x'.repeat(MAX_ARGUMENTS_CHARS) }) };
    electronMock.dialog.showMessageBox.mockResolvedValueOnce({ response: 2, checkboxChecked: false });
    expect(await prompter.promptBatch!([preview, long])).toBe('deny-all');
    electronMock.dialog.showMessageBox.mockRejectedValueOnce(new Error('no display'));
    expect(await prompter.promptBatch!([preview, second])).toBe('deny-all');
  });
});

describe('the link confirmation', () => {
  it('shows the full address, Cancel is default; only "Open in browser" opens', async () => {
    const confirm = createLinkConfirmer(() => null);
    electronMock.dialog.showMessageBox.mockResolvedValueOnce({ response: 0, checkboxChecked: false });
    expect(await confirm('https://example.com/a')).toBe(false);
    expect(electronMock.dialog.showMessageBox).toHaveBeenLastCalledWith(expect.objectContaining({ detail: 'https://example.com/a', defaultId: 0, cancelId: 0 }));
    electronMock.dialog.showMessageBox.mockResolvedValueOnce({ response: 1, checkboxChecked: false });
    expect(await confirm('https://example.com/a')).toBe(true);
  });
});
