/**
 * Permissions: one row per server × account × tool with the person's mode (Always Allow / Ask /
 * Disabled), the effective decision and why, "changed since allowed" badges, organization locks,
 * and the server's own description in a separate, clearly labelled column (untrusted).
 *
 * Rows are virtualized (only the visible ones are in the DOM), so 10k tools stay fast; the search
 * filters the cached matrix locally, without a round trip per keystroke.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useDeferredValue, useEffect, useMemo, useRef, useState } from 'react';
import type { MatrixRow } from '../../../shared/contract/permissions';
import type { PermissionMode } from '../../../shared/domain/operations';
import { DecisionPill, EmptyState, ErrorNote, ViewFrame } from '../components/common';
import { useAppStore } from '../store';
import { filterMatrix } from './view-helpers';

/** A first guess of a row's height; each row is measured once drawn (text wraps, never clips). */
const ROW_ESTIMATE = 64;
/** Descriptions longer than this show their start and a "Show all" button, so one long claim cannot fill the screen. */
const CLAIM_PREVIEW_CHARS = 180;

function pinBadge(pin: MatrixRow['pin']) {
  if (pin === 'contract-changed') return <span className="pill pill-warn" title="The tool's name, description, schema or hints changed after you allowed it; it falls back to Ask.">Changed since allowed</span>;
  if (pin === 'endpoint-changed') return <span className="pill pill-warn" title="The server's command or URL changed after you allowed it; it falls back to Ask.">Server changed since allowed</span>;
  return null;
}

function ModeSelect({ row }: { row: MatrixRow }) {
  const setToolMode = useAppStore((s) => s.setToolMode);
  const revokeRule = useAppStore((s) => s.revokeRule);
  const [busy, setBusy] = useState(false);
  const testId = `perm-mode-${row.serverId}-${row.accountId}-${row.toolName}`;
  if (row.orgLocked) {
    return (
      <span className="pill pill-locked" title="Set by your organization; it cannot be changed here." data-testid={testId}>
        Org locked
      </span>
    );
  }
  return (
    <select
      className="input input-small"
      value={row.mode ?? ''}
      disabled={busy}
      aria-label={`mode of ${row.toolName} on ${row.serverLabel} (${row.accountLabel})`}
      data-testid={testId}
      onChange={(e) => {
        const value = e.target.value;
        if (!value) return;
        setBusy(true);
        const done = value === 'reset' && row.ruleId ? revokeRule(row.ruleId) : setToolMode(row, value as PermissionMode);
        void done.finally(() => setBusy(false));
      }}
    >
      <option value="" disabled>
        Not set (default)
      </option>
      <option value="allow">Always Allow</option>
      <option value="ask">Ask</option>
      <option value="disabled">Disabled</option>
      {row.ruleId ? <option value="reset">Reset to default</option> : null}
    </select>
  );
}

/** No tools at all: they appear once a server is connected. */
function NoTools() {
  const navigate = useAppStore((s) => s.navigate);
  return (
    <EmptyState
      testId="perm-empty"
      title="No tools yet"
      actions={
        <button type="button" className="button button-primary" onClick={() => navigate('servers')}>
          Go to Servers
        </button>
      }
    >
      <p>A server's tools are listed here once it is connected. Add or connect a server in Servers, then choose for each tool whether Warden asks you, allows it, or keeps it disabled.</p>
    </EmptyState>
  );
}

/** The server's description: the start of a long one, with a button for the rest (never hover-only). */
function Claim({ text, onResize }: { text: string | null; onResize: () => void }) {
  const [open, setOpen] = useState(false);
  if (!text) return <span className="muted">none</span>;
  if (text.length <= CLAIM_PREVIEW_CHARS) return <>{text}</>;
  return (
    <>
      {open ? text : `${text.slice(0, CLAIM_PREVIEW_CHARS).trimEnd()}…`}{' '}
      <button
        type="button"
        className="link"
        aria-expanded={open}
        onClick={() => {
          setOpen(!open);
          onResize();
        }}
      >
        {open ? 'Show less' : 'Show all'}
      </button>
    </>
  );
}

/** The Permissions view. */
export function PermissionsView() {
  const matrix = useAppStore((s) => s.matrix);
  const configErrors = useAppStore((s) => s.configErrors);
  const error = useAppStore((s) => s.permissionsError);
  const refreshMatrix = useAppStore((s) => s.refreshMatrix);
  const [query, setQuery] = useState('');
  const deferred = useDeferredValue(query);
  const rows = useMemo(() => filterMatrix(matrix, deferred), [matrix, deferred]);
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_ESTIMATE,
    overscan: 8,
    getItemKey: (index) => `${rows[index]!.serverId}/${rows[index]!.accountId}/${rows[index]!.toolName}`,
  });
  useEffect(() => {
    void refreshMatrix();
  }, [refreshMatrix]);

  return (
    <ViewFrame
      id="permissions"
      title="Permissions"
      wide
      note={
        <p>
          Discovering a tool never grants it: a tool with no mode set gets your default (Ask, unless you chose Disabled in Settings). Always Allow and lifting Disabled are
          confirmed in Warden's own dialog. A tool that changed since you allowed it falls back to Ask.
        </p>
      }
    >
      <div className={matrix.length === 0 ? 'toolbar matrix-none' : 'toolbar'}>
        <input className="input grow" type="search" placeholder="Search servers, accounts, tools, descriptions…" value={query} onChange={(e) => setQuery(e.target.value)} data-testid="perm-search" aria-label="Search permissions" />
        <span className="muted" data-testid="perm-count">
          {rows.length} of {matrix.length} tools
        </span>
      </div>
      <ErrorNote error={error} testId="perm-error" />
      {configErrors.length > 0 ? (
        <div className="error-note">
          Configuration errors (read as Disabled):
          <ul>
            {configErrors.map((e) => (
              <li key={e}>{e}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {matrix.length === 0 ? <NoTools /> : null}
      {matrix.length > 0 && rows.length === 0 ? (
        <p className="empty" data-testid="perm-no-match">
          No tool matches “{query}”.{' '}
          <button type="button" className="link" onClick={() => setQuery('')}>
            Clear the search
          </button>
        </p>
      ) : null}
      <div className={matrix.length === 0 ? 'matrix matrix-none' : 'matrix'} role="table" aria-label="Permission matrix" aria-rowcount={rows.length}>
        <div className="matrix-row matrix-header" role="row">
          <span role="columnheader">Server / account</span>
          <span role="columnheader">Tool</span>
          <span role="columnheader">Your mode</span>
          <span role="columnheader">Effective</span>
          <span role="columnheader">Server's description (untrusted claim)</span>
        </div>
        <div className="matrix-body" ref={scroller} data-testid="perm-body">
          <div className="matrix-inner" data-height={virtualizer.getTotalSize()} ref={(el) => el?.style.setProperty('height', `${virtualizer.getTotalSize()}px`)}>
            {virtualizer.getVirtualItems().map((item) => {
              const row = rows[item.index]!;
              return (
                <div
                  key={item.key}
                  className="matrix-row matrix-data"
                  role="row"
                  data-index={item.index}
                  data-testid={`perm-row-${row.serverId}-${row.accountId}-${row.toolName}`}
                  ref={(el) => {
                    if (!el) return;
                    el.style.setProperty('transform', `translateY(${item.start}px)`);
                    virtualizer.measureElement(el);
                  }}
                >
                  <span role="cell" className="cell-ellipsis">
                    {row.serverLabel}
                    <span className="muted"> / {row.accountLabel}</span>
                  </span>
                  <span role="cell" className="cell-tool">
                    <code className="cell-ellipsis">{row.toolName}</code>
                    {pinBadge(row.pin)}
                  </span>
                  <span role="cell">
                    <ModeSelect row={row} />
                  </span>
                  <span role="cell" className="cell-explain">
                    <DecisionPill decision={row.effective} testId={`perm-effective-${row.serverId}-${row.accountId}-${row.toolName}`} />
                    <span className="muted small">{row.explanation}</span>
                  </span>
                  <span role="cell" className="cell-claim">
                    <span className="visually-hidden">Server's description: </span>
                    <Claim text={row.serverDescription} onResize={() => requestAnimationFrame(() => virtualizer.measure())} />
                  </span>
                </div>
              );
            })}
          </div>
        </div>
      </div>
    </ViewFrame>
  );
}
