/**
 * Core status and the state of the connection to it: what the app frame's status panel shows.
 */
import type { CoreStatus } from '../../../shared/contract/core';
import { toShownError, unwrap, type ShownError } from '../api';
import type { SliceCreator } from './types';

/** `connecting` until the first status arrives, `live` while calls succeed, `error` after a failure. */
export type ConnectionState = 'connecting' | 'live' | 'error';

export interface CoreSlice {
  /** Last status main sent or returned; null until the first one arrives. */
  status: CoreStatus | null;
  connection: ConnectionState;
  /** The last contract failure, shown with its code; cleared by the next success. */
  coreError: ShownError | null;
  /** When the status was last received (ms since epoch, renderer clock), for "updated" text. */
  statusReceivedAt: number | null;
  /** Fetches `core:status` and stores it, or records the error. Never throws. */
  refreshStatus(): Promise<void>;
  /**
   * Subscribes to `core:status-changed`; returns the unsubscribe function.
   * Failures to subscribe (no bridge) are recorded as `coreError`, not thrown.
   */
  watchStatus(): () => void;
}

/**
 * Creates the core slice.
 *
 * Why: status is owned by main; this slice only mirrors it, from one fetch at start and then from
 * pushed events, so what the frame shows is never invented locally.
 */
export const createCoreSlice: SliceCreator<CoreSlice> = ({ api }) => (set) => {
  const received = (status: CoreStatus) =>
    set({ status, connection: 'live', coreError: null, statusReceivedAt: Date.now() });
  return {
    status: null,
    connection: 'connecting',
    coreError: null,
    statusReceivedAt: null,
    async refreshStatus() {
      try {
        received(await unwrap(api().core.status({})));
      } catch (error) {
        set({ connection: 'error', coreError: toShownError(error) });
      }
    },
    watchStatus() {
      try {
        const w = api();
        // The core pushes core:status-changed after every domain event that moves a count
        // (servers, connections, approvals), so the slice only listens; it never polls.
        return w.core.onStatusChanged(received);
      } catch (error) {
        set({ connection: 'error', coreError: toShownError(error) });
        return () => {};
      }
    },
  };
};
