/**
 * The native approval dialog: the only place a tool call can be approved by a person.
 *
 * Owned by main, shown with `dialog.showMessageBox` over the window, its text written by trusted
 * code (the gate's preview), never by the renderer or the model. Deny is both the default and the
 * cancel button, so Enter, Escape and closing the dialog all deny.
 */
import { dialog, type BrowserWindow, type MessageBoxOptions, type MessageBoxReturnValue } from 'electron';
import type { ApprovalPreview, ApprovalPrompter, BatchChoice } from '../core/ports';
import { dialogLine, makeHiddenVisible } from '../../shared/display';
import type { ServerChangeConfirmer, ServerChangeSummary } from '../core/settings/server-confirmation';

/** Button labels, in order. */
export const APPROVAL_BUTTONS = ['Deny', 'Approve'] as const;
/** Index of Deny: default and cancel. */
export const DENY_INDEX = 0;
/** Index of Approve: the only response that approves. */
export const APPROVE_INDEX = 1;

/** Longest argument text shown; longer arguments are cut with an explicit notice. */
export const MAX_ARGUMENTS_CHARS = 8000;

/** Longest server description shown on its one line; longer ones are cut with an explicit notice. */
export const MAX_CLAIM_CHARS = 300;

/**
 * The message box options for one approval, built only from the trusted preview.
 *
 * The title is the trusted one-line summary of the call. Trusted facts come first (server with
 * where it runs, account, tool, who asked, the exact arguments, then why Warden asks); the
 * server's own words come last, one labelled line each ("Server says: destructive"), so text a
 * server wrote can never print a fake line above the real ones.
 *
 * Arguments longer than {@link MAX_ARGUMENTS_CHARS} are cut and the dialog says how much is not
 * shown, so a reviewer is never led to believe they saw everything.
 *
 * A preview with `change` confirms a permission change instead (see permissionChangeDialogOptions).
 */
export function approvalDialogOptions(preview: ApprovalPreview): MessageBoxOptions {
  if (preview.change) return permissionChangeDialogOptions(preview);
  const argumentsBlock = argumentsShown(preview);
  const truncated = argumentsBlock.length > MAX_ARGUMENTS_CHARS;
  const args = truncated
    ? `${argumentsBlock.slice(0, MAX_ARGUMENTS_CHARS)}\n… (${argumentsBlock.length - MAX_ARGUMENTS_CHARS} more characters not shown)\n\nThese arguments are too long to show in full, so they cannot be approved here: nobody approves what they could not read.`
    : argumentsBlock;
  const claim = preview.toolDescription ? claimLine(preview.toolDescription) : '';
  const claims = preview.claims ?? [];
  return {
    type: 'warning',
    title: 'Warden: approve tool call?',
    message: oneLine(preview.title),
    detail: [
      `Server: ${oneLine(preview.serverLabel)}${preview.serverLocation ? ` (${oneLine(preview.serverLocation)})` : ''}`,
      `Account: ${oneLine(preview.accountLabel)}`,
      `Tool: ${oneLine(preview.toolName)}`,
      ...(preview.requestedBy ? [`Requested by: ${oneLine(preview.requestedBy)}`] : []),
      '',
      'What will be sent:',
      args,
      '',
      // Why Warden asks is one sentence on one line: a reason that names a tool must not break where the name does.
      dialogLine(preview.detail),
      ...(claims.length || claim ? ['', 'What the server says about this tool (its claims, not checked by Warden):'] : []),
      ...claims.map((c) => `Server says: ${oneLine(c)}`),
      ...(claim ? [`Server says it does: ${claim}`] : []),
    ].join('\n'),
    // Deny only when the arguments could not be shown in full.
    buttons: truncated ? [APPROVAL_BUTTONS[DENY_INDEX]] : [...APPROVAL_BUTTONS],
    defaultId: DENY_INDEX,
    cancelId: DENY_INDEX,
    noLink: true,
    normalizeAccessKeys: false,
  };
}

/** A field on one line: names and labels written by a server, a person or a model never break a line. */
const oneLine = dialogLine;

/**
 * The arguments as a person reads them in a native dialog, which has no disclosure to put the
 * JSON behind: the labelled lines the core wrote (every value whole, escaped), then the exact JSON
 * on one line below them. Hidden and direction-changing characters are shown as escapes in both:
 * what a person reads is what is sent.
 */
function argumentsShown(preview: ApprovalPreview, margin = ''): string {
  const json = makeHiddenVisible(compactJson(preview.argumentsJson));
  // Each line escaped again on its own: whatever wrote the lines, none can hide text or break in two.
  const words = (preview.argumentsText || '(no arguments)').split('\n').map((l) => `${margin}  ${makeHiddenVisible(l)}`).join('\n');
  return `${words}\n\n${margin}As JSON (exactly what is sent): ${json}`;
}

/** The canonical JSON on one line (JSON escapes every line break inside a string). */
function compactJson(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json));
  } catch {
    return dialogLine(json);
  }
}

/** A server's text on one line, cut with its length said. */
function claimLine(text: string): string {
  const flat = dialogLine(text);
  return flat.length > MAX_CLAIM_CHARS ? `${flat.slice(0, MAX_CLAIM_CHARS)}… (${flat.length - MAX_CLAIM_CHARS} more characters not shown)` : flat;
}

/** Index of Cancel in a permission-change confirmation: default and cancel. */
export const CHANGE_CANCEL_INDEX = 0;
/** Index of the confirming button ("Always Allow", "Allow the new version"). */
export const CHANGE_CONFIRM_INDEX = 1;

/**
 * The confirmation of a permission change that makes Warden ask less: what will stop asking, in
 * words with names ("every call of write_file on Files (Work)"), the trusted facts, the tool's own
 * words labelled as the server's, and how to undo it. Never the rule as JSON, never an id. Cancel
 * is the default and the cancel button.
 */
export function permissionChangeDialogOptions(preview: ApprovalPreview): MessageBoxOptions {
  const change = preview.change!;
  return {
    type: 'warning',
    title: 'Warden: ask you less?',
    message: oneLine(preview.title),
    detail: [
      oneLine(change.effect),
      ...change.facts.map(oneLine),
      ...(change.claims.length ? ['', ...change.claims.map(oneLine)] : []),
      '',
      oneLine(change.undo),
    ].join('\n'),
    buttons: ['Cancel', oneLine(change.confirmLabel)],
    defaultId: CHANGE_CANCEL_INDEX,
    cancelId: CHANGE_CANCEL_INDEX,
    noLink: true,
    normalizeAccessKeys: false,
  };
}

/** Shows a message box over Warden's window (or alone when there is none); injectable for tests. */
export type ShowMessageBox = (window: BrowserWindow | null, options: MessageBoxOptions) => Promise<MessageBoxReturnValue>;

export const showOverWindow: ShowMessageBox = (window, options) =>
  window && !window.isDestroyed() ? dialog.showMessageBox(window, options) : dialog.showMessageBox(options);

/**
 * Asks a yes-or-no question whose second button (index 1) is the only yes. Cancel, Escape,
 * closing the dialog, any other button and a dialog that cannot be shown all answer no.
 */
export async function confirmedInDialog(getWindow: () => BrowserWindow | null, show: ShowMessageBox, options: MessageBoxOptions): Promise<boolean> {
  try {
    const { response } = await show(getWindow(), options);
    return response === 1;
  } catch {
    return false;
  }
}

/**
 * An ApprovalPrompter backed by the native message box, attached to Warden's window.
 *
 * Resolves 'approve' only when the Approve button was pressed; cancel, Deny, any other response
 * and any failure to show the dialog resolve 'deny' (fail closed).
 */
export function createDialogPrompter(
  getWindow: () => BrowserWindow | null,
  show: ShowMessageBox = showOverWindow,
): ApprovalPrompter {
  return {
    async prompt(preview) {
      try {
        const options = approvalDialogOptions(preview);
        const result = await show(getWindow(), options);
        if (preview.change) return result.response === CHANGE_CONFIRM_INDEX && options.buttons?.length === 2 ? 'approve' : 'deny';
        // Approve only if the pressed button exists and is Approve (a Deny-only dialog never approves).
        return result.response === APPROVE_INDEX && options.buttons?.[APPROVE_INDEX] === APPROVAL_BUTTONS[APPROVE_INDEX] ? 'approve' : 'deny';
      } catch (error) {
        console.error('[warden] approval dialog failed; treating as deny', error);
        return 'deny';
      }
    },
    async promptBatch(previews) {
      try {
        const options = batchApprovalDialogOptions(previews);
        const { response } = await show(getWindow(), options);
        // Only a button that exists counts; anything else (cancel, a missing button) denies all.
        const label = options.buttons?.[response];
        return label !== undefined && BATCH_BUTTONS[response] === label ? BATCH_CHOICES[response]! : 'deny-all';
      } catch (error) {
        console.error('[warden] batch approval dialog failed; treating as deny all', error);
        return 'deny-all';
      }
    },
  };
}

/** Buttons of the link confirmation: Cancel first (default, Escape, closing the dialog). */
export const LINK_BUTTONS = ['Cancel', 'Open in browser'] as const;

/**
 * Asks before a link from a chat opens in the system browser: the link's text was written by a
 * model (or by a server it quoted), so the person sees the full address first.
 */
export function createLinkConfirmer(getWindow: () => BrowserWindow | null, show: ShowMessageBox = showOverWindow): (url: string) => Promise<boolean> {
  return (url) =>
    confirmedInDialog(getWindow, show, {
      type: 'question',
      title: 'Warden: open this link?',
      message: 'Open this link in your browser?',
      detail: dialogLine(url),
      buttons: [...LINK_BUTTONS],
      defaultId: 0,
      cancelId: 0,
      noLink: true,
      normalizeAccessKeys: false,
    });
}

/** Buttons of the batch approval dialog, in order: Deny all is the default and the cancel answer. */
export const BATCH_BUTTONS = ['Deny all', 'Review one by one', 'Approve all'] as const;
const BATCH_CHOICES: readonly BatchChoice[] = ['deny-all', 'one-by-one', 'approve-all'];

/**
 * The message box for the calls of one model reply that need approval, from the gate's trusted
 * previews: each call numbered with its server, account, tool and exact arguments.
 *
 * Approve all is offered only when every call's arguments are shown in full within
 * {@link MAX_ARGUMENTS_CHARS} altogether; otherwise the person reviews them one by one.
 */
export function batchApprovalDialogOptions(previews: readonly ApprovalPreview[]): MessageBoxOptions {
  let shown = 0;
  let complete = true;
  const blocks = previews.map((p, i) => {
    const args = argumentsShown(p, '   ');
    const room = Math.max(0, MAX_ARGUMENTS_CHARS - shown);
    const cut = args.length > room;
    if (cut) complete = false;
    shown += Math.min(args.length, room);
    const body = cut ? `${args.slice(0, room)}\n… (${args.length - room} more characters not shown: review this call on its own)` : args;
    return [`${i + 1}. ${oneLine(p.title)}`, `   Server: ${oneLine(p.serverLabel)} · Account: ${oneLine(p.accountLabel)} · Tool: ${oneLine(p.toolName)}`, '   What will be sent:', body].join('\n');
  });
  return {
    type: 'warning',
    title: 'Warden: approve tool calls?',
    message: `The model asks to run ${previews.length} tool calls`,
    detail: [...blocks, '', 'Each call is checked again before it runs; approving one never approves another.'].join('\n\n'),
    buttons: complete ? [...BATCH_BUTTONS] : BATCH_BUTTONS.slice(0, 2),
    defaultId: 0,
    cancelId: 0,
    noLink: true,
    normalizeAccessKeys: false,
  };
}

/** Buttons of the server confirmation: Cancel first (default, Escape, closing the dialog). */
export const SERVER_CHANGE_BUTTONS = ['Cancel', 'Save'] as const;

/**
 * Buttons when the change would keep secret-looking values in plain settings: keeping them plain
 * is its own explicit button, never what Save does. Cancel stays first and the default.
 */
export const PLAIN_VALUES_BUTTONS = ['Cancel', 'Save, with them in the OS keychain', 'Save, keeping them in plain settings'] as const;

/** The message box for saving a server definition, from the core's trusted summary. */
export function serverChangeDialogOptions(summary: ServerChangeSummary): MessageBoxOptions {
  const plain = summary.plainValues ?? [];
  return {
    type: 'warning',
    title: 'Warden: save this server?',
    message: summary.title,
    detail: plain.length
      ? `${summary.detail}\n\nYou were asked to keep ${plain.length === 1 ? 'this secret-looking value' : `these ${plain.length} secret-looking values`} in plain settings: ${plain.join(', ')}. Choose where ${plain.length === 1 ? 'it goes' : 'they go'}.`
      : summary.detail,
    buttons: plain.length ? [...PLAIN_VALUES_BUTTONS] : [...SERVER_CHANGE_BUTTONS],
    defaultId: 0,
    cancelId: 0,
    noLink: true,
    normalizeAccessKeys: false,
  };
}

/**
 * The native confirmation before a server definition is saved: the renderer can propose a
 * command or URL, only a person in this dialog can make Warden run or contact it. Resolves true
 * for Save, 'keep-plain' only for the explicit keep-in-plain-settings button, false otherwise.
 */
export function createServerChangeConfirmer(getWindow: () => BrowserWindow | null, show: ShowMessageBox = showOverWindow): ServerChangeConfirmer {
  return async (summary) => {
    try {
      const options = serverChangeDialogOptions(summary);
      const { response } = await show(getWindow(), options);
      if (response === 1) return true;
      return response === 2 && options.buttons?.[2] === PLAIN_VALUES_BUTTONS[2] ? 'keep-plain' : false;
    } catch {
      return false;
    }
  };
}
