/**
 * The IPC binder: registers exactly the contract's channels on `ipcMain`, each behind the sender
 * check, and runs every call through the core's `dispatch` (safeParse, handler, Result).
 *
 * Order per call: sender check → request parse → handler → response check. A
 * forged sender, a sub-frame, a foreign origin, an unknown channel or an invalid payload never
 * reaches a handler.
 */
import type { IpcMain, IpcMainInvokeEvent, WebContents, WebFrameMain } from 'electron';
import { channelNames } from '../../shared/ipc';
import { fail, type Result } from '../../shared/result';
import { dispatch, type ErrorLogger, type Handlers } from '../core/dispatch';
import { isSameOrigin } from './security';

/** Decides whether an IPC call comes from our window's main frame on our origin. */
export type SenderCheck = (event: IpcMainInvokeEvent) => boolean;

/** Options of {@link bindContract}. */
export interface BindOptions {
  isTrustedSender: SenderCheck;
  logError?: ErrorLogger;
}

/**
 * Builds the sender check for Warden's window.
 *
 * Trusted only if: the sender is the current window's webContents (not another window, not a
 * destroyed one), the sending frame is that webContents' main frame (no parent, so no iframe
 * can call), and the frame's URL is on `appOrigin` (parsed, not prefix-matched).
 */
export function createSenderCheck(getWebContents: () => WebContents | null, appOrigin: string): SenderCheck {
  return (event) => {
    const contents = getWebContents();
    if (!contents || contents.isDestroyed() || event.sender !== contents) return false;
    const frame: WebFrameMain | null = event.senderFrame;
    if (!frame || frame.parent !== null) return false;
    const main = contents.mainFrame;
    const isMainFrame = frame === main || (frame.processId === main.processId && frame.routingId === main.routingId);
    if (!isMainFrame) return false;
    return isSameOrigin(frame.url, appOrigin);
  };
}

/**
 * Handles one call exactly as the bound `ipcMain.handle` listener does: sender check first, then
 * `dispatch`. Exported so a channel name that is not in the contract can be shown to end in
 * UNKNOWN_CHANNEL even though no listener is ever registered for it.
 */
export async function handleCall(
  handlers: Handlers,
  options: BindOptions,
  event: IpcMainInvokeEvent,
  channel: string,
  request: unknown,
): Promise<Result<unknown>> {
  let trusted = false;
  try {
    trusted = options.isTrustedSender(event);
  } catch {
    trusted = false;
  }
  if (!trusted) {
    return fail('FORBIDDEN_SENDER', `${channel}: refused a call that did not come from Warden's own window on its own origin`);
  }
  return dispatch(handlers, channel, request, options.logError);
}

/**
 * Registers one `ipcMain.handle` per contract channel and nothing else; returns a function that
 * removes them again (used on shutdown and by tests).
 */
export function bindContract(
  ipc: Pick<IpcMain, 'handle' | 'removeHandler'>,
  handlers: Handlers,
  options: BindOptions,
): () => void {
  for (const channel of channelNames) {
    ipc.handle(channel, (event, request: unknown) => handleCall(handlers, options, event, channel, request));
  }
  return () => {
    for (const channel of channelNames) ipc.removeHandler(channel);
  };
}
