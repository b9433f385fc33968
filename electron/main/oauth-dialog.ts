/**
 * The native question before an OAuth sign-in contacts a site other than the server's own: the
 * server names its authorization server, and a hostile server could name any site it likes.
 *
 * Owned by main, its text written from the core's trusted question (the server's name as the
 * person gave it, its address, and the other site's origin). Cancel is the default and the
 * cancel button, so Enter, Escape, closing the dialog and a dialog that cannot be shown all stop
 * the sign-in.
 */
import type { BrowserWindow, MessageBoxOptions } from 'electron';
import { makeHiddenVisible } from '../../shared/display';
import { confirmedInDialog, showOverWindow, type ShowMessageBox } from './dialogs';
import type { OriginConfirmer, OriginQuestion } from '../core/mcp/oauth/network-scope';

/** Buttons: Cancel first (default, Escape, closing the dialog). */
export const AUTHORIZATION_SERVER_BUTTONS = ['Cancel', 'Continue sign-in'] as const;

const visible = (text: string) => makeHiddenVisible(text).replace(/\n/g, '\\n');

/** The message box for one question; every name and URL shown with hidden characters made visible. */
export function authorizationServerDialogOptions(question: OriginQuestion): MessageBoxOptions {
  const name = visible(question.serverName);
  const origin = visible(question.origin);
  return {
    type: 'warning',
    title: 'Warden: sign in on another site?',
    message: `"${name}" sends you to ${origin} to sign in.`,
    detail: [
      `The server at ${visible(question.serverUrl)} says its sign-in (OAuth authorization server) is at ${origin}, which is not the server's own site.`,
      `If you continue, Warden contacts ${origin} (first ${visible(question.url)}), registers with it if needed, opens its sign-in page in your browser and accepts tokens from it for this server.`,
      `Continue only if you expect "${name}" to use ${origin} for sign-in.`,
    ].join('\n\n'),
    buttons: [...AUTHORIZATION_SERVER_BUTTONS],
    defaultId: 0,
    cancelId: 0,
    noLink: true,
    normalizeAccessKeys: false,
  };
}

/** The core's OriginConfirmer as a native dialog; only "Continue sign-in" says yes. */
export function createAuthorizationServerConfirmer(getWindow: () => BrowserWindow | null, show: ShowMessageBox = showOverWindow): OriginConfirmer {
  return (question) => confirmedInDialog(getWindow, show, authorizationServerDialogOptions(question));
}
