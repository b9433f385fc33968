/**
 * Line icons for the sidebar and the status bar, drawn inline (no image files, no icon font) in
 * the current text colour so they follow both themes. Decorative: each sits next to a text label
 * that carries the meaning, so every icon is aria-hidden.
 */
import type { ReactNode } from 'react';

/** The names of the icons this file draws. */
export type IconName = 'chat' | 'servers' | 'permissions' | 'approvals' | 'activity' | 'recovery' | 'settings' | 'sidebar' | 'details';

const PATHS: Record<IconName, ReactNode> = {
  chat: <path d="M4 5.5A1.5 1.5 0 0 1 5.5 4h9A1.5 1.5 0 0 1 16 5.5v6a1.5 1.5 0 0 1-1.5 1.5H9l-3.5 3v-3h0A1.5 1.5 0 0 1 4 11.5z" />,
  servers: (
    <>
      <rect x="3.5" y="3.5" width="13" height="5" rx="1.2" />
      <rect x="3.5" y="11.5" width="13" height="5" rx="1.2" />
      <path d="M6.5 6h.01M6.5 14h.01" />
    </>
  ),
  permissions: <path d="M10 2.8 4.5 5v4.6c0 3.4 2.3 6.2 5.5 7.6 3.2-1.4 5.5-4.2 5.5-7.6V5zM7.6 10l1.7 1.7 3.2-3.4" />,
  approvals: (
    <>
      <rect x="4" y="3.5" width="12" height="13" rx="1.5" />
      <path d="M7.5 3.5V2.8h5v.7M7.2 10.2l2 2 3.6-3.8" />
    </>
  ),
  activity: <path d="M3 10h3l2-5 4 10 2-5h3" />,
  recovery: <path d="M4.5 10a5.5 5.5 0 1 0 1.7-4M4.5 3.5V6.5h3M10 7v3.2l2 1.3" />,
  settings: (
    <>
      <circle cx="10" cy="10" r="2.5" />
      <path d="M10 2.8v2M10 15.2v2M2.8 10h2M15.2 10h2M4.9 4.9l1.4 1.4M13.7 13.7l1.4 1.4M4.9 15.1l1.4-1.4M13.7 6.3l1.4-1.4" />
    </>
  ),
  sidebar: (
    <>
      <rect x="3" y="4" width="14" height="12" rx="1.5" />
      <path d="M8 4v12" />
    </>
  ),
  details: (
    <>
      <circle cx="10" cy="10" r="7" />
      <path d="M10 9v4.5M10 6.5h.01" />
    </>
  ),
};

/** One icon, 20×20 by default, stroked in `currentColor`. */
export function Icon({ name, size = 20 }: { name: IconName; size?: number }) {
  return (
    <svg className="icon" width={size} height={size} viewBox="0 0 20 20" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
      {PATHS[name]}
    </svg>
  );
}
