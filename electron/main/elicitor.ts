/**
 * Native answers to MCP elicitation (a server asking the person something), owned by main.
 *
 * URL mode: a message box names the asking server (Warden's label, not the server's own name) and
 * the exact domain the page is on; Cancel is the default and the cancel button, so only an
 * explicit "Open" consents, and the core then opens the page through the audited https-only
 * opener. Form mode is not here: forms are shown in the app, generated from the requested schema
 * (electron/core/elicitation/form-questions.ts). Either answer is only an answer: it never
 * approves a tool call (approvals have their own dialog and the gate).
 *
 * Answer confirmation: the answer to a form that might ask for a secret (the core judged it, and
 * the form showed the same warning) leaves only after the person says so again here, in a dialog
 * the window cannot draw or press. "Don't send" is the default and the cancel button.
 */
import { dialog, type BrowserWindow, type MessageBoxOptions } from 'electron';
import type { AnswerConfirmation, Elicitor, UrlElicitation } from '../core/elicitation/elicitation';
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

/** Buttons of the answer confirmation: Don't send first (default, Escape). */
export const ANSWER_CONFIRM_BUTTONS = ["Don't send", 'Send anyway'] as const;

/** One line of a dialog: a server's text may not add lines of its own, and hidden characters are made visible. */

/** The message box before the answer to a form that might ask for a secret is sent: who asks, why Warden doubts it, which fields go. */
export function answerConfirmationOptions(c: AnswerConfirmation): MessageBoxOptions {
  const who = c.accountLabel ? `${dialogLine(c.serverLabel)} (${dialogLine(c.accountLabel)})` : dialogLine(c.serverLabel);
  return {
    type: 'warning',
    title: 'Warden: send this answer?',
    message: `${who} may be asking for a secret. Send your answer anyway?`,
    detail: [
      `Warden's warning: ${dialogLine(c.warning)}.`,
      `The answer fills in: ${c.fields.length ? c.fields.map((f) => `“${dialogLine(f)}”`).join(', ') : '(no fields)'}.`,
      '',
      'Servers must not ask for passwords, tokens, keys or one-time codes in a form, and Warden never does. Send only if you know why this server needs it.',
      '',
      `The server says (its own words, not Warden's): ${dialogLine(c.message)}`,
    ].join('\n'),
    buttons: [...ANSWER_CONFIRM_BUTTONS],
    defaultId: 0,
    cancelId: 0,
    noLink: true,
    normalizeAccessKeys: false,
  };
}

/** The native halves of an Elicitor, asking in dialogs over Warden's window: URL consent and the second step of a doubtful answer (forms are asked in the app). */
export function createDialogElicitor(getWindow: () => BrowserWindow | null): Pick<Elicitor, 'url'> & Required<Pick<Elicitor, 'confirmAnswer'>> {
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
    async confirmAnswer(confirmation, signal) {
      try {
        const { response } = await show(answerConfirmationOptions(confirmation));
        return response === 1 && !signal.aborted;
      } catch {
        return false;
      }
    },
  };
}
