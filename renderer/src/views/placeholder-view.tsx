/**
 * The frame of a view that is not built yet: its title, what it will do, and live facts from the
 * core where the core already knows them. Never shows invented data.
 */
import type { ReactNode } from 'react';

export interface PlaceholderViewProps {
  id: string;
  title: string;
  /** What the finished view will let a person do. */
  purpose: ReactNode;
  /** Facts the core reports today (from `core:status`), if any. */
  live?: ReactNode;
}

/** Renders a not-yet-built view honestly: a "Not built yet" tag, its purpose, and live facts. */
export function PlaceholderView({ id, title, purpose, live }: PlaceholderViewProps) {
  return (
    <section className="view" data-testid={`view-${id}`} aria-labelledby={`view-title-${id}`}>
      <header className="view-header">
        <h1 id={`view-title-${id}`}>{title}</h1>
        <span className="tag tag-pending">Not built yet</span>
      </header>
      <div className="view-purpose">{purpose}</div>
      {live ? <div className="view-live">{live}</div> : null}
    </section>
  );
}
