/**
 * Permissions: grouped server → account → tool, every configured account listed whether connected
 * or not (its tools from the last listing, marked as such), the active account shown. Each server,
 * account and tool is one compact row with one mode control (a radio group, one Tab stop); why it
 * has that mode, who set it, what changed, argument rules and conversation settings are one click
 * (or Enter) away in the row's details. Bulk changes apply to the tools the search shows, and each
 * change says what it did, with an Undo.
 *
 * Rows are virtualized (only the visible ones are in the DOM), so 10k tools stay fast; the search
 * filters the cached matrix locally, without a round trip per keystroke. The server's own words
 * are shown labelled as its claim, never as Warden's. */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useDeferredValue, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { MatrixAccount, MatrixRow, MatrixServer, PermissionChange } from '../../../shared/contract/permissions';
import type { PermissionMode } from '../../../shared/domain/operations';
import type { RuleOrigin } from '../../../shared/domain/policy';
import { EmptyState, ErrorNote, ViewFrame } from '../components/common';
import { useAppStore } from '../store';
import { AccountActions, ChangePanel, ConstraintEditor, ConversationOverrides, MODE_WORDS, ModeRadios } from './permission-parts';
import { filterMatrix, groupMatrix, type MatrixItem } from './view-helpers';

const ESTIMATE: Record<MatrixItem['kind'], number> = { server: 40, account: 38, tool: 36, 'no-tools': 34 };

/** "Weather (Work)", "Weather (every account)". */
const where = (serverLabel: string, accountLabel: string | null) => `${serverLabel} (${accountLabel ?? 'every account'})`;

function useModeChange() {
  const applyChanges = useAppStore((s) => s.applyChanges);
  return (change: PermissionChange, words: string) => applyChanges([change], words);
}

/** Removes the person's own mode (back to what the target follows), saying what it did. */
function useRevoke() {
  const revokeRule = useAppStore((s) => s.revokeRule);
  const say = useAppStore((s) => s.say);
  return async (ruleId: string, words: string) => {
    await revokeRule(ruleId);
    say(`Done: ${words}.`);
  };
}

/** "Work: 2 folders, Home: none" — how many folders each account gave the server. */
function rootsSummary(accounts: readonly { label: string; rootFolders?: string[] | undefined }[]): string {
  return accounts.map((a) => `${a.label}: ${(a.rootFolders ?? []).length === 0 ? 'no folders' : `${a.rootFolders!.length} folder${a.rootFolders!.length === 1 ? '' : 's'}`}`).join(', ');
}

/** What a person's mode lets a call do, as the decision the engine would make without any cap. */
const DECISION_OF: Record<PermissionMode, string> = { allow: 'allow', ask: 'ask', disabled: 'deny' };

/** The name of a row or group as the button that opens its details (not a Tab stop: Enter on its modes opens them too). */
function NameButton({ open, onToggle, controls, testId, label, children }: { open: boolean; onToggle: () => void; controls: string; testId: string; label: string; children: ReactNode }) {
  return (
    <button type="button" className="row-name" tabIndex={-1} aria-expanded={open} aria-controls={controls} aria-label={label} onClick={onToggle} data-testid={testId}>
      {children}
    </button>
  );
}

/** "Remove your mode (use the default)" inside a details box, when the target has a mode of its own. */
function UseDefault({ ruleId, what, follows, testId }: { ruleId: string; what: string; follows: string; testId: string }) {
  const revoke = useRevoke();
  return (
    <button type="button" className="button button-small" onClick={() => void revoke(ruleId, `your mode for ${what} removed`)} data-testid={testId}>
      Remove this mode (then it follows {follows})
    </button>
  );
}

function ServerHeader({ item, open, toggle }: { item: Extract<MatrixItem, { kind: 'server' }>; open: boolean; toggle: () => void }) {
  const change = useModeChange();
  const [details, setDetails] = useState(false);
  const s = item.server;
  const what = `all tools of ${where(item.label, null)}`;
  const detailsId = `perm-server-why-${item.serverId}`;
  return (
    <div className="group-head group-server" data-testid={`perm-server-${item.serverId}`}>
      <div className="group-line">
        <button type="button" className="twisty" aria-expanded={open} onClick={toggle} aria-label={`${open ? 'Collapse' : 'Expand'} ${item.label}`}>
          {open ? '▾' : '▸'}
        </button>
        <h2 className="group-title">
          <NameButton open={details} onToggle={() => setDetails(!details)} controls={detailsId} testId={`perm-server-details-${item.serverId}`} label={`${item.label}: why, and more`}>
            {item.label}
          </NameButton>
        </h2>
        <span className="muted small group-meta">
          {s ? `${s.location} · ` : ''}
          {item.toolCount} tool{item.toolCount === 1 ? '' : 's'}
        </span>
        {s?.orgLock ? <span className="pill pill-locked">{s.orgLock === 'forbid' ? 'Blocked by your organization' : 'Your organization requires asking'}</span> : null}
        {s?.rootsEnforced ? (
          <span className="pill pill-roots" data-testid={`perm-server-roots-${item.serverId}`}>
            Kept inside its folders
          </span>
        ) : null}
        <span className="spacer" />
        {s ? (
          <ModeRadios
            value={s.mode ?? s.inheritedMode ?? 'ask'}
            own={s.mode !== null}
            what={what}
            testId={`perm-server-mode-${item.serverId}`}
            onEnter={() => setDetails(!details)}
            onPick={(m) => change({ scope: 'server', serverId: item.serverId, accountId: null, mode: m }, `${what} set to ${MODE_WORDS[m]}`)}
          />
        ) : null}
      </div>
      {details && s ? (
        <div className="row-details small" id={detailsId} data-testid={`perm-server-why-body-${item.serverId}`}>
          <p>{s.explanation}.</p>
          {s.rootsEnforced ? (
            <p data-testid={`perm-server-roots-explain-${item.serverId}`}>
              You chose to keep {item.label} inside the folders you gave each account ({rootsSummary(s.accounts)}): a call with a path outside them asks first,
              even when the tool is set to Always Allow. Change this in Servers.
            </p>
          ) : null}
          {s.ruleId ? <UseDefault ruleId={s.ruleId} what={what} follows={`your default, ${MODE_WORDS[s.inheritedMode ?? 'ask']}`} testId={`perm-server-mode-${item.serverId}-default`} /> : null}
        </div>
      ) : null}
    </div>
  );
}

function connectionWords(a: MatrixAccount): string {
  const state = a.connection === 'connected' ? 'Connected' : a.connection === 'connecting' ? 'Connecting…' : a.connection === 'auth_required' ? 'Sign-in required' : a.connection === 'error' ? 'Connection error' : 'Not connected';
  // A never-connected account's "no tools known yet" is said once, in the line where its tools would be.
  const tools = a.toolsFrom === 'last-listing' ? ` · tools from its last listing${a.listedAt ? ` (${new Date(a.listedAt).toLocaleString()})` : ''}` : '';
  return `${state}${tools}`;
}

function AccountHeader({ item, open, toggle }: { item: Extract<MatrixItem, { kind: 'account' }>; open: boolean; toggle: () => void }) {
  const change = useModeChange();
  const [details, setDetails] = useState(false);
  const a = item.account;
  const what = `all tools of ${where(item.serverLabel, item.label)}`;
  const detailsId = `perm-account-why-${item.serverId}-${item.accountId}`;
  return (
    <div className="group-head group-account" data-testid={`perm-account-${item.serverId}-${item.accountId}`}>
      <div className="group-line">
        <button type="button" className="twisty" aria-expanded={open} onClick={toggle} aria-label={`${open ? 'Collapse' : 'Expand'} ${item.label} of ${item.serverLabel}`}>
          {open ? '▾' : '▸'}
        </button>
        <h2 className="group-title">
          <NameButton open={details} onToggle={() => setDetails(!details)} controls={detailsId} testId={`perm-account-details-${item.serverId}-${item.accountId}`} label={`${item.label} of ${item.serverLabel}: why, and more`}>
            {item.label}
          </NameButton>
        </h2>
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
        <span className="spacer" />
        {a ? (
          <ModeRadios
            value={a.mode ?? a.inheritedMode ?? 'ask'}
            own={a.mode !== null}
            what={what}
            testId={`perm-account-mode-${item.serverId}-${item.accountId}`}
            onEnter={() => setDetails(!details)}
            onPick={(m) => change({ scope: 'server', serverId: item.serverId, accountId: item.accountId, mode: m }, `${what} set to ${MODE_WORDS[m]}`)}
          />
        ) : null}
      </div>
      {details && a ? (
        <div className="row-details small" id={detailsId} data-testid={`perm-account-why-body-${item.serverId}-${item.accountId}`}>
          <p>{a.explanation}.</p>
          <div className="form-actions">
            {a.ruleId ? <UseDefault ruleId={a.ruleId} what={what} follows={`${item.serverLabel}’s mode, ${MODE_WORDS[a.inheritedMode ?? 'ask']}`} testId={`perm-account-mode-${item.serverId}-${item.accountId}-default`} /> : null}
            <AccountActions serverId={item.serverId} accountId={item.accountId} label={item.label} serverLabel={item.serverLabel} active={a.active} />
          </div>
        </div>
      ) : null}
    </div>
  );
}

/** A short flag for a tool whose calls do not get what its mode says (the reason is in its details). */
function heldWords(row: MatrixRow, mode: PermissionMode): string | null {
  if (row.changed === 'since-allowed') return 'Changed since you allowed it';
  if (row.changed === 'since-listed') return 'Changed since last listed';
  if (row.pin === 'endpoint-changed') return 'Server changed since allowed';
  if (row.orgLocked || row.effective === DECISION_OF[mode]) return null;
  return row.effective === 'ask' ? 'Asks for now' : row.effective === 'deny' ? 'Blocked for now' : null;
}

/** Who set a tool's own mode, in words, for its details. */
const SET_BY_WORDS: Record<RuleOrigin, string> = { person: 'You set this mode.', demo: 'This mode is one of the demo’s starting rules; change it and it is yours.', import: 'This mode came with an import.' };

function ToolRow({ row, onOpenChange }: { row: MatrixRow; onOpenChange: () => void }) {
  const change = useModeChange();
  const [open, setOpen] = useState(false);
  const id = `${row.serverId}-${row.accountId}-${row.toolName}`;
  const what = `${row.toolName} on ${where(row.serverLabel, row.accountLabel)}`;
  const follows = row.inheritedMode ?? 'ask';
  const mode = row.orgLocked ? (row.orgLock === 'forbid' ? 'disabled' : 'ask') : (row.mode ?? follows);
  const held = heldWords(row, mode);
  const extras = [
    (row.constraintRules ?? []).length > 0 ? `${row.constraintRules!.length} argument rule${row.constraintRules!.length === 1 ? '' : 's'}` : null,
    (row.conversationOverrides ?? []).length > 0 ? `${row.conversationOverrides!.length} conversation setting${row.conversationOverrides!.length === 1 ? '' : 's'}` : null,
  ].filter((x): x is string => x !== null);
  const detailsId = `perm-why-${id}`;
  return (
    <div className="tool-row" data-testid={`perm-row-${id}`} data-effective={row.effective}>
      <div className="tool-line">
        <NameButton open={open} onToggle={() => setOpen(!open)} controls={detailsId} testId={`perm-details-${id}`} label={`${row.toolName}: why ${MODE_WORDS[mode]}, and more`}>
          <span className="chevron" aria-hidden="true">
            {open ? '▾' : '▸'}
          </span>
          <code className="tool-name">{row.toolName}</code>
        </NameButton>
        {held ? (
          <span className="pill pill-warn" data-testid={`perm-changed-${id}`}>
            {held}
          </span>
        ) : null}
        {extras.length ? <span className="muted small">{extras.join(' · ')}</span> : null}
        <span className="spacer" />
        <ModeRadios
          value={mode}
          own={row.mode !== null}
          what={what}
          testId={`perm-mode-${id}`}
          onEnter={() => setOpen(!open)}
          {...(row.orgLocked ? { locked: 'your organization' } : {})}
          onPick={(m) => change({ scope: 'tool', serverId: row.serverId, accountId: row.accountId, toolName: row.toolName, mode: m }, `${what} set to ${MODE_WORDS[m]}`)}
        />
      </div>
      {open ? (
        <div className="row-details small" id={detailsId} data-testid={`perm-details-body-${id}`}>
          <p data-testid={`perm-explain-${id}`}>{row.explanation}.</p>
          {row.orgLock ? <p>Your organization {row.orgLock === 'forbid' ? 'blocks this tool' : 'requires asking before each call'}; it cannot be changed here.</p> : null}
          {row.setBy && !row.orgLocked ? <p>{SET_BY_WORDS[row.setBy]}</p> : null}
          {row.rootsWall ? <p data-testid={`perm-roots-${id}`}>{row.rootsWall}.</p> : null}
          {row.source === 'last-listing' ? <p className="muted">Known from the account’s last listing; it is not connected now.</p> : null}
          {(row.claims ?? []).length ? <p>The server says it is {row.claims!.join(', ')} (its claim, not checked by Warden).</p> : null}
          {row.serverDescription ? (
            <p className="tool-claim">
              <span className="claim-label">Server says it does:</span> {row.serverDescription}
            </p>
          ) : null}
          <div className="form-actions">
            {row.changed && row.changed !== 'none' ? (
              <button type="button" className="button button-small" onClick={onOpenChange} data-testid={`perm-see-change-${id}`}>
                See what changed
              </button>
            ) : null}
            {row.ruleId && !row.orgLocked ? <UseDefault ruleId={row.ruleId} what={what} follows={`${MODE_WORDS[follows]}, like its account’s other tools`} testId={`perm-mode-${id}-default`} /> : null}
          </div>
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
  // Bulk changes apply to the tools the search shows (a person narrows the list, then sets them all).
  const changeable = rows.filter((r) => !r.orgLocked);
  const bulk = async (mode: PermissionMode) => {
    const changes: PermissionChange[] = changeable.map((r) => ({ scope: 'tool', serverId: r.serverId, accountId: r.accountId, toolName: r.toolName, mode }));
    if (changes.length > 0) await applyChanges(changes, `${changes.length} tool${changes.length === 1 ? '' : 's'} set to ${MODE_WORDS[mode]}`);
  };
  const demoRules = matrix.filter((r) => r.setBy === 'demo');
  const accounts = servers?.reduce((n, s) => n + s.accounts.length, 0) ?? 0;

  return (
    <ViewFrame
      id="permissions"
      title="Permissions"
      wide
      note={
        <p>
          A tool without a mode of its own follows its account’s, then its server’s, then your default (Ask unless you chose Disabled in Settings). Warden
          confirms in its own dialog anything that makes it ask less; a tool that changed since you allowed it asks again.
        </p>
      }
    >
      <div className={matrix.length === 0 ? 'toolbar matrix-none' : 'toolbar'}>
        <input className="input grow" type="search" placeholder="Search servers, accounts, tools…" value={query} onChange={(e) => setQuery(e.target.value)} data-testid="perm-search" aria-label="Search permissions" />
        <span className="muted" data-testid="perm-count" data-complete={complete || total <= matrix.length}>
          {complete || total <= matrix.length ? `${rows.length} of ${matrix.length} tools` : `Showing the first ${matrix.length} of ${total} tools; loading the rest…`}
        </span>
        {servers ? (
          <span className="muted small">
            {servers.length} server{servers.length === 1 ? '' : 's'}, {accounts} account{accounts === 1 ? '' : 's'}
          </span>
        ) : null}
        {changeable.length > 1 ? (
          <select
            className="input input-small"
            value=""
            aria-label={`Set all ${changeable.length} tools shown to`}
            data-testid="perm-bulk"
            onChange={(e) => {
              if (e.target.value) void bulk(e.target.value as PermissionMode);
            }}
          >
            <option value="">Set all {changeable.length} shown to…</option>
            {(['ask', 'allow', 'disabled'] as const).map((m) => (
              <option key={m} value={m}>
                {MODE_WORDS[m]}
              </option>
            ))}
          </select>
        ) : null}
      </div>
      {demoRules.length > 0 ? (
        <p className="small matrix-origin" data-testid="perm-demo-rules">
          The demo server starts with its own rules: {demoRules.map((r) => `${r.toolName} ${MODE_WORDS[r.mode ?? 'ask']}`).join(', ')}. Change one and it is yours.
        </p>
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
      {matrix.length > 0 ? (
        <p className="muted small matrix-keys" id="perm-keys">
          Tab moves from row to row, ← → change its mode; Enter, or a click on a name, shows why and more.
        </p>
      ) : null}
      <div className="matrix-groups" role="list" aria-label="Permissions by server and account" aria-describedby="perm-keys">
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
