/**
 * Native file choosers (Electron's `dialog`), owned by main: the FileDialogs port of the core.
 *
 * Whatever Warden reads from or writes to a person's files is chosen here by the person. The
 * renderer can ask for a chooser (through a contract channel whose handler calls this), never
 * name a path.
 */
import { dialog, type BrowserWindow, type OpenDialogOptions, type OpenDialogReturnValue, type SaveDialogOptions, type SaveDialogReturnValue } from 'electron';
import type { FileDialogs, OpenFileRequest, SaveFileRequest } from '../core/ports';
import { WardenError } from '../../shared/result';

type ShowOpenDialog = (window: BrowserWindow | null, options: OpenDialogOptions) => Promise<OpenDialogReturnValue>;
type ShowSaveDialog = (window: BrowserWindow | null, options: SaveDialogOptions) => Promise<SaveDialogReturnValue>;

const openOverWindow: ShowOpenDialog = (window, options) =>
  window && !window.isDestroyed() ? dialog.showOpenDialog(window, options) : dialog.showOpenDialog(options);
const saveOverWindow: ShowSaveDialog = (window, options) =>
  window && !window.isDestroyed() ? dialog.showSaveDialog(window, options) : dialog.showSaveDialog(options);

/** The open dialog's options for one request: one existing file, hidden folders visible (~/.cursor), not added to recent documents. */
export function openFileDialogOptions(request: OpenFileRequest): OpenDialogOptions {
  return {
    title: request.title,
    ...(request.defaultPath ? { defaultPath: request.defaultPath } : {}),
    filters: request.filters.map((f) => ({ name: f.name, extensions: [...f.extensions] })),
    properties: ['openFile', 'showHiddenFiles', 'dontAddToRecent'],
  };
}

/** The save dialog's options: the offered name, asking before replacing a file (macOS, Linux). */
export function saveFileDialogOptions(request: SaveFileRequest): SaveDialogOptions {
  return {
    title: request.title,
    defaultPath: request.defaultName,
    filters: request.filters.map((f) => ({ name: f.name, extensions: [...f.extensions] })),
    properties: ['createDirectory', 'showOverwriteConfirmation', 'dontAddToRecent'],
  };
}

/** FileDialogs over Electron's native dialogs, attached to Warden's window. */
export function createFileDialogs(getWindow: () => BrowserWindow | null, show: ShowOpenDialog = openOverWindow, showSave: ShowSaveDialog = saveOverWindow): FileDialogs {
  return {
    async openFile(request) {
      let result: OpenDialogReturnValue;
      try {
        result = await show(getWindow(), openFileDialogOptions(request));
      } catch (error) {
        throw new WardenError('UNSUPPORTED', `The file chooser could not be shown (${error instanceof Error ? error.message : String(error)}); nothing was read`);
      }
      if (result.canceled || result.filePaths.length === 0) return null;
      return result.filePaths[0]!;
    },
    async saveFile(request) {
      let result: SaveDialogReturnValue;
      try {
        result = await showSave(getWindow(), saveFileDialogOptions(request));
      } catch (error) {
        throw new WardenError('UNSUPPORTED', `The save dialog could not be shown (${error instanceof Error ? error.message : String(error)}); nothing was written`);
      }
      if (result.canceled || !result.filePath) return null;
      return result.filePath;
    },
    async chooseFolder(request) {
      let result: OpenDialogReturnValue;
      try {
        result = await show(getWindow(), chooseFolderDialogOptions(request));
      } catch (error) {
        throw new WardenError('UNSUPPORTED', `The folder chooser could not be shown (${error instanceof Error ? error.message : String(error)}); nothing was chosen`);
      }
      if (result.canceled || result.filePaths.length === 0) return null;
      return result.filePaths[0]!;
    },
  };
}

/** The folder chooser's options: one existing folder, hidden folders visible, not added to recent documents. */
export function chooseFolderDialogOptions(request: { title: string; defaultPath?: string }): OpenDialogOptions {
  return {
    title: request.title,
    ...(request.defaultPath ? { defaultPath: request.defaultPath } : {}),
    properties: ['openDirectory', 'showHiddenFiles', 'dontAddToRecent'],
  };
}
