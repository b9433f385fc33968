/**
 * Stand-ins for main's native file choosers in the browser test host (test code only, never
 * shipped). A browser page cannot show Electron's dialog, so the host's core gets one of these:
 * the e2e tests script the person's choice; `npm run host` accepts the offered default location.
 */
import type { FileDialogs, OpenFileRequest } from '../../electron/core/ports';

/** A chooser whose answers a test queues; it records every request it was shown. */
export interface ScriptedFileDialogs extends FileDialogs {
  readonly requests: Array<OpenFileRequest | { title: string; defaultPath?: string }>;
  /** The path the person "chooses" next (null: they cancel). Unqueued requests are cancelled. */
  choose(path: string | null): void;
}

/** A scripted chooser (see ScriptedFileDialogs). */
export function scriptedFileDialogs(): ScriptedFileDialogs {
  const answers: Array<string | null> = [];
  const requests: Array<OpenFileRequest | { title: string; defaultPath?: string }> = [];
  return {
    requests,
    choose: (path) => void answers.push(path),
    openFile: async (request) => {
      requests.push(request);
      return answers.length ? answers.shift()! : null;
    },
    // Exports are not scripted here: the person cancels, so nothing is written.
    saveFile: async () => null,
    chooseFolder: async (request) => {
      requests.push(request);
      return answers.length ? answers.shift()! : null;
    },
  };
}

/** A chooser that behaves like a person pressing Open on the offered default location (none offered: cancel). */
export const acceptDefaultFileDialogs: FileDialogs = { openFile: async (request) => request.defaultPath ?? null, saveFile: async () => null };
