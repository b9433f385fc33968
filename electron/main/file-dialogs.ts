/**
 * Native file choosers (Electron's `dialog`), owned by main: the FileDialogs port of the core.
 *
 * Whatever Warden reads from a person's files is chosen here by the person. The renderer can ask
 * for a chooser (through a contract channel whose handler calls this), never name a path.
 */
import { dialog, type BrowserWindow, type OpenDialogOptions, type OpenDialogReturnValue } from 'electron';
import type { FileDialogs, OpenFileRequest } from '../core/ports';
import { WardenError } from '../../shared/result';

type ShowOpenDialog = (window: BrowserWindow | null, options: OpenDialogOptions) => Promise<OpenDialogReturnValue>;

const openOverWindow: ShowOpenDialog = (window, options) =>
  window && !window.isDestroyed() ? dialog.showOpenDialog(window, options) : dialog.showOpenDialog(options);

/** The open dialog's options for one request: one existing file, hidden folders visible (~/.cursor), not added to recent documents. */
export function openFileDialogOptions(request: OpenFileRequest): OpenDialogOptions {
  return {
    title: request.title,
    ...(request.defaultPath ? { defaultPath: request.defaultPath } : {}),
    filters: request.filters.map((f) => ({ name: f.name, extensions: [...f.extensions] })),
    properties: ['openFile', 'showHiddenFiles', 'dontAddToRecent'],
  };
}

/** FileDialogs over Electron's native dialogs, attached to Warden's window. */
export function createFileDialogs(getWindow: () => BrowserWindow | null, show: ShowOpenDialog = openOverWindow): FileDialogs {
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
  };
}
