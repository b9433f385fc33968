/**
 * Native answers to MCP elicitation (a server asking the person something), owned by main.
 *
 * URL mode: a message box names the asking server (Warden's label, not the server's own name) and
 * the exact domain the page is on; Cancel is the default and the cancel button, so only an
 * explicit "Open" consents, and the core then opens the page through the audited https-only
 * opener. Form mode is not here: forms are shown in the app, generated from the requested schema
 * (electron/core/elicitation/form-questions.ts). Either answer is only an answer: it never
 * approves a tool call (approvals have their own dialog and the gate).
 */
import { dialog, type BrowserWindow, type MessageBoxOptions } from 'electron';
import type { Elicitor, UrlElicitation } from '../core/elicitation/elicitation';
import { dialogLine } from '../../shared/display';

/** Buttons of the URL consent dialog: Cancel first (default, Escape). */
export const URL_CONSENT_BUTTONS = ['Cancel', 'Open in browser'] as const;

/**
 * The message box for a URL-mode request, built from Warden's labels plus the server's text,
 * labelled. Every field is one line: the server's message is its own words on the last line, so
 * a newline in it cannot print a fake "Server:" or "Address:" line above or below the real ones.
 */
export function urlConsentOptions(request: UrlElicitation): MessageBoxOptions {
  return {
    type: 'question',
    title: 'Warden: a server asks you to open a page',
    message: `${dialogLine(request.serverLabel)} asks you to open a page on ${dialogLine(request.domain)}`,
    detail: [`Address: ${dialogLine(request.url)}`, '', `The server says (its own words, not Warden's):`, dialogLine(request.message)].join('\n'),
    buttons: [...URL_CONSENT_BUTTONS],
    defaultId: 0,
    cancelId: 0,
    noLink: true,
    normalizeAccessKeys: false,
  };
}

/** The URL half of an Elicitor, asking in native dialogs over Warden's window (forms are asked in the app). */
export function createDialogElicitor(getWindow: () => BrowserWindow | null): Pick<Elicitor, 'url'> {
  const show = (options: MessageBoxOptions) => {
    const window = getWindow();
    return window && !window.isDestroyed() ? dialog.showMessageBox(window, options) : dialog.showMessageBox(options);
  };
  return {
    async url(request, signal) {
      try {
        const { response } = await show(urlConsentOptions(request));
        return response === 1 && !signal.aborted ? 'accept' : 'cancel';
      } catch {
        return 'cancel';
      }
    },
  };
}
