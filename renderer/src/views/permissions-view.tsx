/**
 * Permissions: grouped server → account → tool, every configured account listed whether connected
 * or not (its tools from the last listing, marked as such), the active account shown, a mode
 * control per server, per account and per tool, the effective decision and its reason in words,
 * changed tools flagged with a before/after view, bulk changes, and what each change did with an
 * Undo.
 *
 * Rows are virtualized (only the visible ones are in the DOM), so 10k tools stay fast; the search
 * filters the cached matrix locally, without a round trip per keystroke. The server's own words
 * are shown labelled as its claim, never as Warden's.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useDeferredValue, useEffect, useMemo, useRef, useState } from 'react';
import type { MatrixAccount, MatrixRow, MatrixServer, PermissionChange } from '../../../shared/contract/permissions';
import type { PermissionMode } from '../../../shared/domain/operations';
import { DecisionPill, EmptyState, ErrorNote, ViewFrame } from '../components/common';
import { useAppStore } from '../store';
import { AccountActions, ChangePanel, ConstraintEditor, ConversationOverrides, MODE_WORDS, ModeButtons } from './permission-parts';
import { filterMatrix, groupMatrix, type MatrixItem } from './view-helpers';

const ESTIMATE: Record<MatrixItem['kind'], number> = { server: 64, account: 64, tool: 92, 'no-tools': 44 };

/** "Weather (Work)", "Weather (every account)". */
const where = (serverLabel: string, accountLabel: string | null) => `${serverLabel} (${accountLabel ?? 'every account'})`;

function useModeChange() {
  const applyChanges = useAppStore((s) => s.applyChanges);
  const revokeRule = useAppStore((s) => s.revokeRule);
  const say = useAppStore((s) => s.say);
  return async (change: PermissionChange | null, ruleId: string | null, words: string) => {
    if (change) return void (await applyChanges([change], words));
    if (ruleId) {
      await revokeRule(ruleId);
      say(`Done: ${words}.`);
    }
  };
}

/** "Work: 2 folders, Home: none" — how many folders each account gave the server. */
function rootsSummary(accounts: readonly { label: string; rootFolders?: string[] | undefined }[]): string {
  return accounts.map((a) => `${a.label}: ${(a.rootFolders ?? []).length === 0 ? 'no folders' : `${a.rootFolders!.length} folder${a.rootFolders!.length === 1 ? '' : 's'}`}`).join(', ');
}

function ServerHeader({ item, open, toggle }: { item: Extract<MatrixItem, { kind: 'server' }>; open: boolean; toggle: () => void }) {
  const change = useModeChange();
  const s = item.server;
  return (
    <div className="group-head group-server" data-testid={`perm-server-${item.serverId}`}>
      <div className="group-line">
        <button type="button" className="twisty" aria-expanded={open} onClick={toggle} aria-label={`${open ? 'Collapse' : 'Expand'} ${item.label}`}>
          {open ? '▾' : '▸'}
        </button>
        <h2 className="group-title">{item.label}</h2>
        {s ? <span className="muted small">{s.location}</span> : null}
        <span className="muted small">
          {item.toolCount} tool{item.toolCount === 1 ? '' : 's'}
        </span>
        {s?.orgLock ? <span className="pill pill-locked">{s.orgLock === 'forbid' ? 'Blocked by your organization' : 'Your organization requires asking'}</span> : null}
        {s?.rootsEnforced ? (
          <span className="pill pill-roots" data-testid={`perm-server-roots-${item.serverId}`}>
            Kept inside its folders
          </span>
        ) : null}
        {s ? (
          <ModeButtons
            mode={s.mode}
            what={`all tools of ${where(item.label, null)}`}
            testId={`perm-server-mode-${item.serverId}`}
            onPick={(m) =>
              void change(
                m ? { scope: 'server', serverId: item.serverId, accountId: null, mode: m } : null,
                s.ruleId,
                m ? `all tools of ${where(item.label, null)} set to ${MODE_WORDS[m]}` : `your mode for all tools of ${item.label} removed`,
              )
            }
          />
        ) : null}
      </div>
      {s ? <p className="group-explain small">{s.explanation}</p> : null}
      {s?.rootsEnforced ? (
        <p className="group-explain small" data-testid={`perm-server-roots-explain-${item.serverId}`}>
          You chose to keep {item.label} inside the folders you gave each account ({rootsSummary(s.accounts)}): a call with a path outside them asks first,
          even when the tool is set to Always Allow. Change this in Servers.
        </p>
      ) : null}
    </div>
  );
}

function connectionWords(a: MatrixAccount): string {
  const state = a.connection === 'connected' ? 'Connected' : a.connection === 'connecting' ? 'Connecting…' : a.connection === 'auth_required' ? 'Sign-in required' : a.connection === 'error' ? 'Connection error' : 'Not connected';
  const tools = a.toolsFrom === 'live' ? '' : a.toolsFrom === 'last-listing' ? ` · tools from its last listing${a.listedAt ? ` (${new Date(a.listedAt).toLocaleString()})` : ''}` : ' · never connected, so its tools are not known yet';
  return `${state}${tools}`;
}

function AccountHeader({ item, open, toggle }: { item: Extract<MatrixItem, { kind: 'account' }>; open: boolean; toggle: () => void }) {
  const change = useModeChange();
  const a = item.account;
  return (
    <div className="group-head group-account" data-testid={`perm-account-${item.serverId}-${item.accountId}`}>
      <div className="group-line">
        <button type="button" className="twisty" aria-expanded={open} onClick={toggle} aria-label={`${open ? 'Collapse' : 'Expand'} ${item.label} of ${item.serverLabel}`}>
          {open ? '▾' : '▸'}
        </button>
        <h3 className="group-title">{item.label}</h3>
        {a?.active ? (
          <span className="pill pill-connected" data-testid={`perm-account-${item.serverId}-${item.accountId}-active`}>
            Active account
          </span>
        ) : null}
        {a ? (
          <span className={`pill ${a.connection === 'connected' ? 'pill-hint' : 'pill-disconnected'}`} data-state={a.connection}>
            {connectionWords(a)}
          </span>
        ) : null}
        {a ? (
          <ModeButtons
            mode={a.mode}
            what={`all tools of ${where(item.serverLabel, item.label)}`}
            testId={`perm-account-mode-${item.serverId}-${item.accountId}`}
            onPick={(m) =>
              void change(
                m ? { scope: 'server', serverId: item.serverId, accountId: item.accountId, mode: m } : null,
                a.ruleId,
                m ? `all tools of ${where(item.serverLabel, item.label)} set to ${MODE_WORDS[m]}` : `your mode for all tools of ${where(item.serverLabel, item.label)} removed`,
              )
            }
          />
        ) : null}
      </div>
      {a ? (
        <div className="group-line group-sub">
          <p className="group-explain small">{a.explanation}</p>
          <AccountActions serverId={item.serverId} accountId={item.accountId} label={item.label} serverLabel={item.serverLabel} active={a.active} />
        </div>
      ) : null}
    </div>
  );
}

function ToolRow({ row, selected, onSelect, onOpenChange }: { row: MatrixRow; selected: boolean; onSelect: (on: boolean) => void; onOpenChange: () => void }) {
  const change = useModeChange();
  const [open, setOpen] = useState(false);
  const id = `${row.serverId}-${row.accountId}-${row.toolName}`;
  const what = `${row.toolName} on ${where(row.serverLabel, row.accountLabel)}`;
  return (
    <div className={`tool-row${selected ? ' tool-selected' : ''}`} data-testid={`perm-row-${id}`}>
      <div className="tool-line">
        <input type="checkbox" checked={selected} onChange={(e) => onSelect(e.target.checked)} aria-label={`Select ${what}`} data-testid={`perm-select-${id}`} />
        <code className="tool-name">{row.toolName}</code>
        {row.source === 'last-listing' ? <span className="pill pill-hint">from last listing</span> : null}
        {row.changed && row.changed !== 'none' ? (
          <button type="button" className="pill pill-warn pill-button" onClick={onOpenChange} data-testid={`perm-changed-${id}`}>
            {row.changed === 'since-allowed' ? 'Changed since you allowed it: see what changed' : 'Changed: see what changed'}
          </button>
        ) : row.pin === 'contract-changed' ? (
          <span className="pill pill-warn">Changed since allowed</span>
        ) : row.pin === 'endpoint-changed' ? (
          <span className="pill pill-warn">Server changed since allowed</span>
        ) : null}
        {(row.claims ?? []).map((c) => (
          <span key={c} className={`pill ${c === 'destructive' ? 'pill-hint-danger' : 'pill-hint'}`}>
            server says: {c}
          </span>
        ))}
        <span className="spacer" />
        {row.orgLocked ? (
          <span className="pill pill-locked" data-testid={`perm-mode-${id}`}>
            Set by your organization
          </span>
        ) : (
          <ModeButtons
            mode={row.mode}
            what={what}
            testId={`perm-mode-${id}`}
            onPick={(m) =>
              void change(m ? { scope: 'tool', serverId: row.serverId, accountId: row.accountId, toolName: row.toolName, mode: m } : null, row.ruleId, m ? `${what} set to ${MODE_WORDS[m]}` : `your mode for ${what} removed`)
            }
          />
        )}
      </div>
      <div className="tool-line tool-explain">
        <DecisionPill decision={row.effective} testId={`perm-effective-${id}`} />
        <span className="small" data-testid={`perm-explain-${id}`}>
          {row.explanation}
        </span>
        {(row.constraintRules ?? []).length > 0 ? <span className="pill pill-hint">{row.constraintRules!.length} argument rule{row.constraintRules!.length === 1 ? '' : 's'}</span> : null}
        {(row.conversationOverrides ?? []).length > 0 ? (
          <span className="pill pill-hint">
            {row.conversationOverrides!.length} conversation setting{row.conversationOverrides!.length === 1 ? '' : 's'}
          </span>
        ) : null}
        <button type="button" className="link-button small" aria-expanded={open} onClick={() => setOpen(!open)} aria-label={`${open ? 'Hide details' : 'Details and argument rules'} of ${what}`} data-testid={`perm-details-${id}`}>
          {open ? 'Hide details' : 'Details and argument rules'}
        </button>
      </div>
      {row.rootsWall ? (
        <p className="tool-roots small" data-testid={`perm-roots-${id}`}>
          <span aria-hidden="true">▣ </span>
          {row.rootsWall}
        </p>
      ) : null}
      {row.serverDescription ? (
        <p className={`tool-claim small${open ? '' : ' clamp'}`}>
          <span className="claim-label">Server says it does:</span> {row.serverDescription}
        </p>
      ) : null}
      {open ? (
        <div className="tool-details small" data-testid={`perm-details-body-${id}`}>
          {row.orgLock ? <p>Your organization {row.orgLock === 'forbid' ? 'blocks this tool' : 'requires asking before each call'}; it cannot be changed here.</p> : null}
          {row.orgLocked ? null : <ConstraintEditor row={row} />}
          {row.orgLocked ? null : <ConversationOverrides row={row} />}
          <p className="muted">
            Internal ids (for support and exports): server <code>{row.serverId}</code>, account <code>{row.accountId}</code>
          </p>
        </div>
      ) : null}
    </div>
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

/** The Permissions view. */
export function PermissionsView() {
  const matrix = useAppStore((s) => s.matrix);
  const servers = useAppStore((s) => s.matrixServers);
  const configErrors = useAppStore((s) => s.configErrors);
  const error = useAppStore((s) => s.permissionsError);
  const refreshMatrix = useAppStore((s) => s.refreshMatrix);
  const total = useAppStore((s) => s.matrixTotal);
  const complete = useAppStore((s) => s.matrixComplete);
  const lastChange = useAppStore((s) => s.lastChange);
  const undoLastChange = useAppStore((s) => s.undoLastChange);
  const applyChanges = useAppStore((s) => s.applyChanges);
  const [query, setQuery] = useState('');
  const deferred = useDeferredValue(query);
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [changeOpen, setChangeOpen] = useState<{ serverId: string; accountId: string; toolName: string } | null>(null);
  const rows = useMemo(() => filterMatrix(matrix, deferred), [matrix, deferred]);
  const items = useMemo(() => groupMatrix(rows, servers as MatrixServer[] | null, collapsed, deferred.trim() !== ''), [rows, servers, collapsed, deferred]);
  const changed = useMemo(() => matrix.filter((r) => r.changed && r.changed !== 'none'), [matrix]);
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: (i) => ESTIMATE[items[i]!.kind],
    getItemKey: (i) => items[i]!.key,
    overscan: 6,
  });
  useEffect(() => {
    void refreshMatrix();
  }, [refreshMatrix]);
  const toggle = (key: string) => setCollapsed((c) => (c.has(key) ? new Set([...c].filter((k) => k !== key)) : new Set([...c, key])));
  const keyOf = (r: MatrixRow) => `${r.serverId}/${r.accountId}/${r.toolName}`;
  const bulk = async (mode: PermissionMode) => {
    const picked = matrix.filter((r) => selected.has(keyOf(r)) && !r.orgLocked);
    const changes: PermissionChange[] = picked.map((r) => ({ scope: 'tool', serverId: r.serverId, accountId: r.accountId, toolName: r.toolName, mode }));
    if (changes.length === 0) return;
    if (await applyChanges(changes, `${changes.length} tool${changes.length === 1 ? '' : 's'} set to ${MODE_WORDS[mode]}`)) setSelected(new Set());
  };
  const accounts = servers?.reduce((n, s) => n + s.accounts.length, 0) ?? 0;

  return (
    <ViewFrame
      id="permissions"
      title="Permissions"
      wide
      note={
        <p>
          Grouped by server and account. A tool with no mode of its own follows its account’s, then its server’s, then your default (Ask, unless you chose
          Disabled in Settings); discovering a tool never grants it. Always Allow and anything else that makes Warden ask less is confirmed in Warden’s own
          dialog. A tool that changed since you allowed it asks again.
        </p>
      }
    >
      <div className={matrix.length === 0 ? 'toolbar matrix-none' : 'toolbar'}>
        <input className="input grow" type="search" placeholder="Search servers, accounts, tools, descriptions…" value={query} onChange={(e) => setQuery(e.target.value)} data-testid="perm-search" aria-label="Search permissions" />
        <span className="muted" data-testid="perm-count" data-complete={complete || total <= matrix.length}>
          {complete || total <= matrix.length ? `${rows.length} of ${matrix.length} tools` : `Showing the first ${matrix.length} of ${total} tools; loading the rest…`}
        </span>
        {servers ? (
          <span className="muted small">
            {servers.length} server{servers.length === 1 ? '' : 's'}, {accounts} account{accounts === 1 ? '' : 's'}
          </span>
        ) : null}
      </div>
      {selected.size > 0 ? (
        <div className="toolbar bulk-bar" role="group" aria-label="Change the selected tools" data-testid="perm-bulk">
          <strong>{selected.size} selected:</strong>
          {(['allow', 'ask', 'disabled'] as const).map((m) => (
            <button key={m} type="button" className="button button-small" onClick={() => void bulk(m)} data-testid={`perm-bulk-${m}`}>
              Set to {MODE_WORDS[m]}
            </button>
          ))}
          <button type="button" className="button button-small" onClick={() => setSelected(new Set())}>
            Clear selection
          </button>
        </div>
      ) : null}
      {lastChange ? (
        <p className="change-note" role="status" data-testid="perm-last-change">
          {lastChange.message}{' '}
          {lastChange.undo ? (
            <button type="button" className="button button-small" onClick={() => void undoLastChange()} data-testid="perm-undo">
              Undo
            </button>
          ) : null}
        </p>
      ) : null}
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
      {changed.length > 0 ? (
        <section className="changed-list" aria-labelledby="changed-title" data-testid="perm-changed-list">
          <h2 id="changed-title" className="section-title">
            Changed tools ({changed.length})
          </h2>
          <ul>
            {changed.slice(0, 20).map((r) => (
              <li key={keyOf(r)}>
                <code>{r.toolName}</code> on {where(r.serverLabel, r.accountLabel)}: {r.changed === 'since-allowed' ? 'changed since you allowed it (Warden asks again)' : 'changed since it was last listed'}{' '}
                <button type="button" className="button button-small" onClick={() => setChangeOpen({ serverId: r.serverId, accountId: r.accountId, toolName: r.toolName })} data-testid={`perm-open-change-${r.serverId}-${r.accountId}-${r.toolName}`}>
                  See what changed
                </button>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {changeOpen ? <ChangePanel {...changeOpen} onClose={() => setChangeOpen(null)} /> : null}
      {matrix.length === 0 && !servers?.length ? <NoTools /> : null}
      {matrix.length > 0 && rows.length === 0 ? (
        <p className="empty" data-testid="perm-no-match">
          No tool matches “{query}”.{' '}
          <button type="button" className="link" onClick={() => setQuery('')}>
            Clear the search
          </button>
        </p>
      ) : null}
      <div className="matrix-groups" role="list" aria-label="Permissions by server and account">
        <div className="matrix-body" ref={scroller} data-testid="perm-body">
          <div className="matrix-inner" ref={(el) => el?.style.setProperty('height', `${virtualizer.getTotalSize()}px`)}>
            {virtualizer.getVirtualItems().map((v) => {
              const item = items[v.index]!;
              return (
                <div
                  key={item.key}
                  role="listitem"
                  className={`matrix-item matrix-${item.kind}${item.kind === 'tool' ? ' matrix-data' : ''}`}
                  data-index={v.index}
                  ref={(el) => {
                    if (!el) return;
                    el.style.setProperty('transform', `translateY(${v.start}px)`);
                    virtualizer.measureElement(el);
                  }}
                >
                  {item.kind === 'server' ? (
                    <ServerHeader item={item} open={!collapsed.has(item.key)} toggle={() => toggle(item.key)} />
                  ) : item.kind === 'account' ? (
                    <AccountHeader item={item} open={!collapsed.has(item.key)} toggle={() => toggle(item.key)} />
                  ) : item.kind === 'no-tools' ? (
                    <p className="muted small no-tools">
                      {item.account?.toolsFrom === 'none' ? 'Never connected: connect it in Servers to see its tools. You can already set a mode for all its tools above.' : 'No tools listed.'}
                    </p>
                  ) : (
                    <ToolRow
                      row={item.row}
                      selected={selected.has(keyOf(item.row))}
                      onSelect={(on) => setSelected((s) => (on ? new Set([...s, keyOf(item.row)]) : new Set([...s].filter((k) => k !== keyOf(item.row)))))}
                      onOpenChange={() => setChangeOpen({ serverId: item.row.serverId, accountId: item.row.accountId, toolName: item.row.toolName })}
                    />
                  )}
                </div>
              );
            })}
          </div>
        </div>
      </div>
    </ViewFrame>
  );
}
