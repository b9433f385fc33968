/**
 * A system notification when a tool call starts waiting for approval while Warden's window is
 * not focused, plus the pending count on the dock or taskbar (badge.ts).
 *
 * The notification is only a doorbell: clicking it brings the window forward on the Approvals
 * view, where the person opens the native approval dialog as usual. It never approves, denies or
 * previews anything, and its text is Warden's own: a count and the server and account names the
 * person gave in Warden — never a tool name, description, argument or anything else a server or a
 * model wrote.
 */
import { Notification, type BrowserWindow } from 'electron';
import { dialogLine } from '../../shared/display';
import type { CoreEvents } from '../core/events';
import type { PendingBadge } from './badge';

/** Warden's names for the server and account of one pending operation. */
export interface TrustedLabels {
  serverLabel: string;
  accountLabel: string;
}

/** Longest label shown; a longer one is cut with an ellipsis. */
export const MAX_LABEL_CHARS = 60;

/** One line, hidden characters made visible, bounded: a label as a notification shows it. */
export function notificationLabel(label: string): string {
  const line = dialogLine(label);
  return line.length > MAX_LABEL_CHARS ? `${line.slice(0, MAX_LABEL_CHARS - 1)}…` : line;
}

/** Title and body of the notification for the operations that just started waiting. */
export function approvalNotificationText(labels: readonly TrustedLabels[]): { title: string; body: string } {
  const count = labels.length;
  const title = count === 1 ? 'A tool call is waiting for your approval' : `${count} tool calls are waiting for your approval`;
  const places = [...new Set(labels.map((l) => `${notificationLabel(l.serverLabel)} (${notificationLabel(l.accountLabel)})`))];
  const shown = places.slice(0, 3).join(', ') + (places.length > 3 ? ` and ${places.length - 3} more` : '');
  const body = `${count === 1 ? 'Server' : 'Servers'}: ${shown}. Click to open Approvals in Warden; nothing runs until you approve it there.`;
  return { title, body };
}

/** What the watcher needs from main. */
export interface ApprovalAttentionOptions {
  events: Pick<CoreEvents, 'subscribe'>;
  /** Warden's labels for a pending operation (from the gate's trusted preview), or null if it is gone. */
  labelsOf(operationId: string): TrustedLabels | null;
  getWindow(): BrowserWindow | null;
  badge: PendingBadge;
  /** Brings the window forward on the Approvals view. */
  openApprovals(): void;
}

/**
 * Watches `approvals:changed`: sets the badge to the pending count, and shows one notification
 * per batch of newly waiting operations while the window is not focused. A notification is
 * closed once every operation it announced is no longer waiting. Returns an unsubscribe.
 */
export function watchApprovalsForAttention(options: ApprovalAttentionOptions): () => void {
  const waiting = new Set<string>();
  // Shown notifications and the operations each announced; holding them also keeps Electron
  // from garbage-collecting a notification (and with it, its click handler) while it is shown.
  const shown = new Map<Notification, Set<string>>();

  const windowIsFocused = () => {
    const window = options.getWindow();
    return window !== null && !window.isDestroyed() && window.isFocused();
  };

  const announce = (operationIds: string[]) => {
    if (windowIsFocused() || !Notification.isSupported()) return;
    const labels = operationIds.map((id) => options.labelsOf(id)).filter((l): l is TrustedLabels => l !== null);
    if (labels.length === 0) return;
    const notification = new Notification({ ...approvalNotificationText(labels), urgency: 'normal' });
    shown.set(notification, new Set(operationIds));
    notification.on('click', () => {
      shown.delete(notification);
      options.openApprovals();
    });
    notification.on('close', () => shown.delete(notification));
    notification.on('failed', () => shown.delete(notification));
    notification.show();
  };

  const unsubscribe = options.events.subscribe((event, payload) => {
    if (event !== 'approvals:changed') return;
    const { pending, operationIds } = payload as { pending: number; operationIds: string[] };
    options.badge.set(pending);
    const now = new Set(operationIds);
    const fresh = operationIds.filter((id) => !waiting.has(id));
    waiting.clear();
    for (const id of now) waiting.add(id);
    for (const [notification, ids] of shown) {
      if ([...ids].every((id) => !now.has(id))) {
        shown.delete(notification);
        notification.close();
      }
    }
    if (fresh.length > 0) announce(fresh);
  });

  return () => {
    unsubscribe();
    for (const notification of shown.keys()) notification.close();
    shown.clear();
  };
}
