/**
 * The native question before a model provider's base URL is saved: every conversation that uses
 * the provider is sent there (the person's messages, the results of the tools a model calls,
 * servers' instructions). The window's page has no network of its own, so choosing that address
 * must not be something it can do alone.
 *
 * Owned by main, its text written from the core's trusted question. Cancel is the default and the
 * cancel button, so Enter, Escape, closing the dialog and a dialog that cannot be shown all refuse.
 */
import type { BrowserWindow, MessageBoxOptions } from 'electron';
import { makeHiddenVisible } from '../../shared/display';
import { confirmedInDialog, showOverWindow, type ShowMessageBox } from './dialogs';
import type { ProviderEndpointConfirmer, ProviderEndpointQuestion } from '../core/models/provider-service';

/** Buttons: Cancel first (default, Escape, closing the dialog). */
export const PROVIDER_ENDPOINT_BUTTONS = ['Cancel', 'Send conversations there'] as const;

const visible = (text: string) => makeHiddenVisible(text).replace(/\n/g, '\\n');

/** The message box for one question; every name and address shown with hidden characters made visible. */
export function providerEndpointDialogOptions(question: ProviderEndpointQuestion): MessageBoxOptions {
  const label = visible(question.label);
  const url = visible(question.baseUrl);
  const kind = question.kind === 'anthropic' ? 'Anthropic Messages API' : 'OpenAI-compatible API';
  return {
    type: 'warning',
    title: 'Warden: send conversations to this address?',
    message: question.action === 'add' ? `Add the model provider "${label}" at ${url}?` : `Move the model provider "${label}" to ${url}?`,
    detail: [
      ...(question.previousBaseUrl !== null ? [`Until now it is at ${visible(question.previousBaseUrl)}.`] : []),
      `Every conversation that uses "${label}" is sent to ${url} (${kind}): your messages, the results of the tools the model calls (file contents, messages, anything a server returns) and servers' instructions.`,
      'Continue only if you chose this address yourself.',
    ].join('\n\n'),
    buttons: [...PROVIDER_ENDPOINT_BUTTONS],
    defaultId: 0,
    cancelId: 0,
    noLink: true,
    normalizeAccessKeys: false,
  };
}

/** The core's ProviderEndpointConfirmer as a native dialog; only the second button says yes. */
export function createProviderEndpointConfirmer(getWindow: () => BrowserWindow | null, show: ShowMessageBox = showOverWindow): ProviderEndpointConfirmer {
  return (question) => confirmedInDialog(getWindow, show, providerEndpointDialogOptions(question));
}
