/**
 * Which view the app frame shows. Pure UI state: nothing here comes from main.
 */
import type { SliceCreator } from './types';

/** Every view of the app frame, in navigation order (DESIGN.md §7). */
export const VIEW_IDS = ['chat', 'servers', 'permissions', 'approvals', 'activity', 'recovery', 'models'] as const;
export type ViewId = (typeof VIEW_IDS)[number];

export interface NavigationSlice {
  view: ViewId;
  /** Opens a view; unknown ids are ignored so a stale link cannot blank the frame. */
  navigate(view: ViewId): void;
}

/**
 * Creates the navigation slice, starting on Chat.
 *
 * Why a slice and not component state: other slices (approvals, recovery) will need to send the
 * person to a view, e.g. "3 calls waiting" → Approvals.
 */
export const createNavigationSlice: SliceCreator<NavigationSlice> = () => (set) => ({
  view: 'chat',
  navigate(view) {
    if ((VIEW_IDS as readonly string[]).includes(view)) set({ view });
  },
});
