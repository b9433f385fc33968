import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import type { BrowserWindow } from 'electron';
import { chooseFolderDialogOptions, createFileDialogs, openFileDialogOptions } from '../../../electron/main/file-dialogs';
import { electronMock, FakeBrowserWindow, resetElectronMock } from '../../helpers/electron-mock';

const request = { title: 'Warden: choose the Cursor config', defaultPath: '/home/me/.cursor/mcp.json', filters: [{ name: 'MCP config', extensions: ['json'] }] };

beforeEach(() => resetElectronMock());

describe('the native open dialog (import chooses its file here, never the renderer)', () => {
  it('asks for one existing file, starts at the known location, shows hidden folders and keeps the file out of recent documents', () => {
    expect(openFileDialogOptions(request)).toEqual({
      title: request.title,
      defaultPath: request.defaultPath,
      filters: [{ name: 'MCP config', extensions: ['json'] }],
      properties: ['openFile', 'showHiddenFiles', 'dontAddToRecent'],
    });
    expect(openFileDialogOptions({ title: 't', filters: [] })).not.toHaveProperty('defaultPath');
  });

  it('is attached to the window and answers the chosen path, or null when cancelled', async () => {
    const window = new FakeBrowserWindow({});
    const dialogs = createFileDialogs(() => window as unknown as BrowserWindow);
    electronMock.dialog.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: ['/home/me/.cursor/mcp.json'] });
    expect(await dialogs.openFile(request)).toBe('/home/me/.cursor/mcp.json');
    expect(electronMock.dialog.showOpenDialog).toHaveBeenCalledWith(window, expect.objectContaining({ title: request.title }));
    electronMock.dialog.showOpenDialog.mockResolvedValueOnce({ canceled: true, filePaths: [] });
    expect(await dialogs.openFile(request)).toBeNull();
  });

  it('a chooser that cannot be shown reads nothing and says so', async () => {
    const dialogs = createFileDialogs(() => null, async () => {
      throw new Error('no display');
    });
    await expect(dialogs.openFile(request)).rejects.toMatchObject({ code: 'UNSUPPORTED', message: expect.stringMatching(/could not be shown \(no display\); nothing was read/) });
  });

  it('the folder chooser (for a path rule) asks for one existing folder and answers it, or null when cancelled', async () => {
    expect(chooseFolderDialogOptions({ title: 'Folder for the rule' })).toEqual({ title: 'Folder for the rule', properties: ['openDirectory', 'showHiddenFiles', 'dontAddToRecent'] });
    const window = new FakeBrowserWindow({});
    const dialogs = createFileDialogs(() => window as unknown as BrowserWindow);
    electronMock.dialog.showOpenDialog.mockResolvedValueOnce({ canceled: false, filePaths: ['/home/me/project/docs'] });
    expect(await dialogs.chooseFolder!({ title: 'Folder for the rule' })).toBe('/home/me/project/docs');
    expect(electronMock.dialog.showOpenDialog).toHaveBeenCalledWith(window, expect.objectContaining({ properties: ['openDirectory', 'showHiddenFiles', 'dontAddToRecent'] }));
    electronMock.dialog.showOpenDialog.mockResolvedValueOnce({ canceled: true, filePaths: [] });
    expect(await dialogs.chooseFolder!({ title: 'Folder for the rule' })).toBeNull();
  });
});
