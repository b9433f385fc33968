/**
 * The Servers list: the summary line ("5 of 6 connected — Files failed: …"), a search box, and one
 * row per server with its status (a dot and words, including the next automatic attempt while it
 * retries and the elapsed time of a long connect), tool count, the account Warden starts it with,
 * the enabled switch, and Restart / Connect / Disconnect in one click. A row's name opens the
 * server's details.
 */
import { useMemo, useState } from 'react';
import type { ServerOverviewRow } from '../../../shared/contract/servers';
import type { ServerView } from '../../../shared/domain/servers';
import { toShownError, type ShownError } from '../api';
import { ErrorNote, Words } from '../components/common';
import { explainConnectFailure } from '../errors';
import { PROGRESS_AFTER_MS, ProgressBar, elapsedWords, useNow } from '../components/progress';
import { useAppStore } from '../store';

/** One state in a few words (the reason goes on its own line). */
export function stateWords(row: ServerOverviewRow, now: number): string {
  switch (row.state) {
    case 'connected':
      return 'Connected';
    case 'connecting':
      return row.attempt ? `Connecting (attempt ${row.attempt})…` : 'Connecting…';
    case 'retrying': {
      const wait = row.nextAttemptAt === null ? null : Math.max(0, row.nextAttemptAt - now);
      return wait === null ? 'Failed, retrying' : wait < 1000 ? 'Failed, retrying now' : `Failed, retrying in ${elapsedWords(wait)}`;
    }
    case 'failed':
      if (row.notRetrying) return 'Failed, not retrying: press Connect to try again';
      return row.attempt ? `Failed (gave up after ${row.attempt} attempts)` : 'Failed';
    case 'needs_sign_in':
      return 'Needs sign-in';
    case 'not_connected':
      return 'Not connected';
    case 'turned_off':
      return 'Off';
  }
}

/**
 * Which accounts the row names: the connected ones (a server may run in several at once, and the
 * first is not always among them), else the first; "(+2)" counts the others.
 */
export function accountWords(row: ServerOverviewRow): string {
  const live = row.accounts.filter((a) => a.status.state === 'connected').map((a) => a.label);
  const named = live.length > 0 ? live : [row.accountLabel];
  const others = Math.max(0, row.accounts.length - named.length);
  return `${named.join(', ')}${others > 0 ? ` (+${others})` : ''}`;
}

const DOT: Record<ServerOverviewRow['state'], string> = {
  connected: 'ok',
  connecting: 'busy',
  retrying: 'warn',
  failed: 'bad',
  needs_sign_in: 'auth',
  not_connected: 'idle',
  turned_off: 'idle',
};

/** The enabled switch of one server (saved at once; on connects, off disconnects). */
export function ServerSwitch({ row }: { row: ServerOverviewRow }) {
  const setEnabled = useAppStore((s) => s.setServerEnabled);
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <span className="server-switch">
      <label className="switch">
        <input
          type="checkbox"
          role="switch"
          checked={row.enabled}
          aria-checked={row.enabled}
          disabled={busy}
          data-testid={`server-enabled-${row.serverId}`}
          onChange={(e) => {
            const next = e.target.checked;
            setBusy(true);
            setError(null);
            setEnabled(row.serverId, next)
              .catch((err: unknown) => setError(toShownError(err)))
              .finally(() => setBusy(false));
          }}
        />
        <span className="switch-track" aria-hidden="true" />
        <span className="switch-words">{row.enabled ? `${row.name}: on` : `${row.name}: off`}</span>
      </label>
      <ErrorNote error={error} />
    </span>
  );
}

/** Restart, Connect or Disconnect for one row: whichever applies, one click each. */
export function RowActions({ row, restartOnly = false }: { row: ServerOverviewRow; restartOnly?: boolean }) {
  const restart = useAppStore((s) => s.restartServer);
  const disconnect = useAppStore((s) => s.disconnect);
  const [error, setError] = useState<ShownError | null>(null);
  const run = (work: () => Promise<unknown>) => {
    setError(null);
    work().catch((err: unknown) => setError(toShownError(err)));
  };
  const live = row.state === 'connected' || row.state === 'connecting' || row.state === 'retrying';
  // Nothing runs and nothing will by itself: the button starts it, so it says Connect, as the state words ask.
  const again = row.notRetrying ? 'Connect' : live || row.state === 'failed' ? 'Restart' : 'Connect';
  return (
    <span className="row-actions">
      {row.enabled && row.state !== 'needs_sign_in' ? (
        <button type="button" className="button button-small" data-testid={`server-restart-${row.serverId}`} onClick={() => run(() => restart(row.serverId))} aria-label={`${again} ${row.name}`}>
          {again}
        </button>
      ) : null}
      {live && !restartOnly ? (
        <button
          type="button"
          className="button button-small"
          data-testid={`server-disconnect-${row.serverId}`}
          aria-label={`${row.state === 'retrying' ? 'Stop retrying' : 'Disconnect'} ${row.name}`}
          onClick={() => run(async () => Promise.all(row.accounts.map((a) => disconnect(row.serverId, a.accountId))))}
        >
          {row.state === 'retrying' ? 'Stop retrying' : 'Disconnect'}
        </button>
      ) : null}
      <ErrorNote error={error} />
    </span>
  );
}

function ServerRow({ row, view, onOpen, now }: { row: ServerOverviewRow; view: ServerView | undefined; onOpen: () => void; now: number }) {
  const where = view?.commandLine ?? (view?.definition.transport === 'http' ? view.definition.url : view?.definition.transport === 'builtin' ? 'Built into Warden' : '');
  const longConnect = row.state === 'connecting' && row.connectingSince !== null && now - row.connectingSince >= PROGRESS_AFTER_MS;
  return (
    <li className={`server-row server-row-${row.state}`} data-testid={`server-row-${row.serverId}`} data-state={row.state}>
      <span className={`status-dot status-dot-${DOT[row.state]}`} aria-hidden="true" />
      <div className="server-row-main">
        <button type="button" className="link server-row-name" onClick={onOpen} data-testid={`server-open-${row.serverId}`}>
          {row.name}
        </button>
        <span className="server-row-where" title={where}>
          {where}
        </span>
      </div>
      <div className="server-row-state">
        <span className="server-row-words" data-testid={`server-state-${row.serverId}`}>
          {stateWords(row, now)}
        </span>
        {row.reason && row.state !== 'connected' ? (
          <span className="server-row-reason" data-testid={`server-reason-${row.serverId}`}>
            {/* The same sentence the server's page shows for this failure (errors.ts), not the core's message. */}
            <Words text={row.failure ? explainConnectFailure(row.failure) : row.reason} />
          </span>
        ) : null}
        {longConnect ? <ProgressBar label={`Connecting ${row.name}`} since={row.connectingSince!} now={now} testId={`server-connecting-${row.serverId}`} /> : null}
      </div>
      <div className="server-row-facts">
        <span data-testid={`server-tools-${row.serverId}`}>{row.state === 'connected' ? `${row.toolCount} ${row.toolCount === 1 ? 'tool' : 'tools'}` : '—'}</span>
        <span className="muted" data-testid={`server-accounts-${row.serverId}`}>
          {accountWords(row)}
        </span>
      </div>
      <div className="server-row-controls">
        <ServerSwitch row={row} />
        <RowActions row={row} />
      </div>
    </li>
  );
}

/** The searchable list with its summary line. */
export function ServerList({ servers, onOpen }: { servers: ServerView[]; onOpen: (serverId: string) => void }) {
  const overview = useAppStore((s) => s.overview);
  const [query, setQuery] = useState('');
  const rows = overview?.servers ?? [];
  const views = useMemo(() => new Map(servers.map((s) => [s.definition.id, s])), [servers]);
  const ticking = rows.some((r) => r.state === 'connecting' || r.state === 'retrying');
  const now = useNow(ticking);
  const q = query.trim().toLowerCase();
  const shown = q === '' ? rows : rows.filter((r) => [r.name, r.accountLabel, stateWords(r, now), views.get(r.serverId)?.commandLine ?? '', (() => { const d = views.get(r.serverId)?.definition; return d?.transport === 'http' ? d.url : ''; })()].some((t) => t.toLowerCase().includes(q)));
  return (
    <div className="server-list-block">
      <p className="servers-summary" data-testid="servers-summary" role="status">
        {overview?.summary.text ?? 'Loading servers…'}
      </p>
      <label className="server-search">
        <span className="visually-hidden">Search servers</span>
        <input className="input" type="search" placeholder="Search servers by name, command, address or state" value={query} onChange={(e) => setQuery(e.target.value)} data-testid="servers-search" />
      </label>
      {q !== '' ? (
        <p className="muted small" data-testid="servers-search-count">
          {shown.length} of {rows.length} servers
        </p>
      ) : null}
      <ul className="server-list" data-testid="server-list" aria-label="Servers">
        {shown.map((r) => (
          <ServerRow key={r.serverId} row={r} view={views.get(r.serverId)} onOpen={() => onOpen(r.serverId)} now={now} />
        ))}
      </ul>
      {q !== '' && shown.length === 0 ? <p className="empty">No server matches “{query}”.</p> : null}
    </div>
  );
}
