/**
 * Activity: one row per tool call (what, who asked, decision, outcome, when, how long), newest
 * first, a page at a time; each row opens into its timeline and "why did this run?". Filters by
 * server, account, tool, decision, outcome and time are shown as removable chips, and the rows
 * matching them export to a file chosen in main's native save dialog.
 */
import { useEffect, useMemo, useState } from 'react';
import type { ActivityCall, CallFilter } from '../../../shared/domain/activity';
import { toShownError, type ShownError } from '../api';
import { DecisionPill, EmptyState, ErrorNote, Time, ViewFrame } from '../components/common';
import { stateWords } from '../components/names';
import { useAppStore } from '../store';
import { connectionKey } from '../store/servers-slice';
import { askedByWords, CallDetails, durationWords } from './activity-call';

/** The outcomes a person filters by, in words (the states a call ends in, and waiting). */
const OUTCOMES: Array<[NonNullable<CallFilter['outcome']>, string]> = [
  ['succeeded', 'Succeeded'],
  ['failed', 'Failed'],
  ['denied', 'Refused by the rules'],
  ['rejected', 'Rejected by you'],
  ['awaiting_approval', 'Waiting for approval'],
  ['outcome_unknown', 'Outcome unknown'],
  ['expired', 'Expired without approval'],
  ['cancelled', 'Cancelled'],
  ['validation_failed', 'Arguments did not fit'],
  ['invalidated', 'No longer valid'],
];

const DECISIONS: Array<[NonNullable<CallFilter['decision']>, string]> = [
  ['allow', 'Allowed'],
  ['ask', 'Asked first'],
  ['deny', 'Refused'],
];

/** `datetime-local` text → ms since epoch, or undefined when empty/invalid. */
function toMs(text: string): number | undefined {
  if (!text) return undefined;
  const ms = new Date(text).getTime();
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** ms since epoch → `datetime-local` text in local time. */
function toLocalText(ms: number | undefined): string {
  if (ms === undefined) return '';
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/** One filter as a person reads it, and the filter without it. */
interface Chip {
  key: keyof CallFilter;
  label: string;
}

function useChips(filter: CallFilter, calls: ActivityCall[]): Chip[] {
  const servers = useAppStore((s) => s.servers);
  const serverName = (id: string) => servers.find((s) => s.definition.id === id)?.definition.name ?? 'a removed server';
  const accountName = (id: string) => servers.flatMap((s) => s.accounts).find((a) => a.id === id)?.label ?? 'a removed account';
  const chips: Chip[] = [];
  if (filter.operationId) {
    const one = calls.find((c) => c.operationId === filter.operationId);
    chips.push({ key: 'operationId', label: one ? `Only this call: ${one.toolName} on ${one.serverName}` : 'Only one call' });
  }
  if (filter.serverId) chips.push({ key: 'serverId', label: `Server: ${serverName(filter.serverId)}` });
  if (filter.accountId) chips.push({ key: 'accountId', label: `Account: ${accountName(filter.accountId)}` });
  if (filter.toolName) chips.push({ key: 'toolName', label: `Tool: ${filter.toolName}` });
  if (filter.decision) chips.push({ key: 'decision', label: `Decision: ${DECISIONS.find(([d]) => d === filter.decision)?.[1] ?? filter.decision}` });
  if (filter.outcome) chips.push({ key: 'outcome', label: `Outcome: ${OUTCOMES.find(([o]) => o === filter.outcome)?.[1] ?? filter.outcome}` });
  if (filter.conversationId) chips.push({ key: 'conversationId', label: 'One conversation' });
  if (filter.from !== undefined) chips.push({ key: 'from', label: `From ${new Date(filter.from).toLocaleString()}` });
  if (filter.to !== undefined) chips.push({ key: 'to', label: `Until ${new Date(filter.to).toLocaleString()}` });
  return chips;
}

function Filters() {
  const filter = useAppStore((s) => s.callFilter);
  const setCallFilter = useAppStore((s) => s.setCallFilter);
  const servers = useAppStore((s) => s.servers);
  const tools = useAppStore((s) => s.tools);
  const update = (patch: Partial<CallFilter>) => {
    const next: CallFilter = { ...filter, ...patch };
    for (const k of Object.keys(next) as Array<keyof CallFilter>) if (next[k] === undefined || next[k] === '') delete next[k];
    setCallFilter(next);
  };
  const accounts = useMemo(
    () => servers.filter((s) => !filter.serverId || s.definition.id === filter.serverId).flatMap((s) => s.accounts.map((a) => ({ id: a.id, label: filter.serverId ? a.label : `${s.definition.name} / ${a.label}` }))),
    [servers, filter.serverId],
  );
  const callTools = useAppStore((s) => s.callTools);
  // Every tool a recorded call names, the tools the servers list now (of the chosen server only,
  // when one is), and the filtered one.
  const toolNames = useMemo(() => {
    const names = new Set<string>(callTools);
    const listed = filter.serverId ? (servers.find((s) => s.definition.id === filter.serverId)?.accounts ?? []).map((a) => tools[connectionKey(filter.serverId!, a.id)] ?? []) : Object.values(tools);
    for (const list of listed) for (const t of list) names.add(t.name);
    if (filter.toolName) names.add(filter.toolName);
    return [...names].sort();
  }, [callTools, tools, servers, filter.serverId, filter.toolName]);
  return (
    <div className="toolbar filters" data-testid="activity-filters" role="group" aria-label="Filters">
      <label className="inline-label">
        Server
        <select className="input" value={filter.serverId ?? ''} onChange={(e) => update({ serverId: e.target.value || undefined, accountId: undefined })} data-testid="activity-filter-server">
          <option value="">All</option>
          {servers.map((s) => (
            <option key={s.definition.id} value={s.definition.id}>
              {s.definition.name}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-label">
        Account
        <select className="input" value={filter.accountId ?? ''} onChange={(e) => update({ accountId: e.target.value || undefined })} data-testid="activity-filter-account">
          <option value="">All</option>
          {accounts.map((a) => (
            <option key={a.id} value={a.id}>
              {a.label}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-label">
        Tool
        <select className="input" value={filter.toolName ?? ''} onChange={(e) => update({ toolName: e.target.value || undefined })} data-testid="activity-filter-tool">
          <option value="">All</option>
          {toolNames.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-label">
        Decision
        <select className="input" value={filter.decision ?? ''} onChange={(e) => update({ decision: (e.target.value || undefined) as CallFilter['decision'] })} data-testid="activity-filter-decision">
          <option value="">Any</option>
          {DECISIONS.map(([d, words]) => (
            <option key={d} value={d}>
              {words}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-label">
        Outcome
        <select className="input" value={filter.outcome ?? ''} onChange={(e) => update({ outcome: (e.target.value || undefined) as CallFilter['outcome'] })} data-testid="activity-filter-outcome">
          <option value="">Any</option>
          {OUTCOMES.map(([o, words]) => (
            <option key={o} value={o}>
              {words}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-label">
        From
        <input className="input" type="datetime-local" value={toLocalText(filter.from)} onChange={(e) => update({ from: toMs(e.target.value) })} data-testid="activity-filter-from" />
      </label>
      <label className="inline-label">
        Until
        <input className="input" type="datetime-local" value={toLocalText(filter.to)} onChange={(e) => update({ to: toMs(e.target.value) })} data-testid="activity-filter-to" />
      </label>
    </div>
  );
}

function CallRow({ call }: { call: ActivityCall }) {
  const open = useAppStore((s) => s.openCalls[call.operationId]);
  const toggle = useAppStore((s) => s.toggleCall);
  const detailsId = `activity-call-${call.operationId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return (
    <>
      <tr data-testid="activity-row" data-operation={call.operationId} data-state={call.state} className={open ? 'call-open' : undefined}>
        <td className="small">
          <Time at={call.requestedAt} />
          <div className="muted">{call.finishedAt === null ? 'not finished' : `took ${durationWords(call.durationMs)}`}</div>
        </td>
        <td>
          <button type="button" className="link call-toggle" aria-expanded={open !== undefined} aria-controls={detailsId} onClick={() => void toggle(call.operationId)} data-testid="activity-row-toggle">
            {call.summary}
          </button>
          <div className="small muted" data-testid="activity-row-where">
            {call.toolName} on {call.serverName} ({call.accountName})
          </div>
        </td>
        <td className="small" data-testid="activity-row-asked">
          {askedByWords(call.askedBy)}
        </td>
        <td>
          <DecisionPill decision={call.decision} />
        </td>
        <td>
          <span className={`pill pill-op pill-op-${call.state}`} data-testid="activity-row-outcome" data-state={call.state}>
            {stateWords(call.state)}
          </span>
        </td>
      </tr>
      {open !== undefined ? (
        <tr className="call-detail-row">
          <td colSpan={5} id={detailsId}>
            <CallDetails call={call} history={open} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** The Activity view. */
export function ActivityView() {
  const calls = useAppStore((s) => s.calls);
  const next = useAppStore((s) => s.callsNext);
  const loaded = useAppStore((s) => s.callsLoaded);
  const error = useAppStore((s) => s.activityError);
  const filter = useAppStore((s) => s.callFilter);
  const setCallFilter = useAppStore((s) => s.setCallFilter);
  const refreshCalls = useAppStore((s) => s.refreshCalls);
  const loadMore = useAppStore((s) => s.loadMoreCalls);
  const exportCalls = useAppStore((s) => s.exportCalls);
  const navigate = useAppStore((s) => s.navigate);
  const [exported, setExported] = useState<{ path: string; rows: number } | null>(null);
  const [exportError, setExportError] = useState<ShownError | null>(null);
  useEffect(() => {
    void refreshCalls();
  }, [refreshCalls]);
  const chips = useChips(filter, calls);
  const without = (key: keyof CallFilter) => {
    const { [key]: _removed, ...rest } = filter;
    setCallFilter(rest);
  };

  const doExport = async (format: 'jsonl' | 'csv') => {
    setExportError(null);
    try {
      const out = await exportCalls(format);
      setExported(out.path === null ? null : { path: out.path, rows: out.rows });
    } catch (e) {
      setExportError(toShownError(e));
    }
  };

  return (
    <ViewFrame
      id="activity"
      title="Activity"
      wide
      note={<p>Every tool call a model or you asked for: what it did, Warden’s decision and why, and how it ended. Open a call to see its timeline.</p>}
      actions={
        <span className="inline-actions">
          <button type="button" className="button" onClick={() => void doExport('csv')} data-testid="activity-export-csv">
            Export CSV
          </button>
          <button type="button" className="button" onClick={() => void doExport('jsonl')} data-testid="activity-export-jsonl">
            Export JSONL
          </button>
        </span>
      }
    >
      <Filters />
      {chips.length > 0 ? (
        <div className="filter-chips" data-testid="activity-chips" role="group" aria-label="Filters in use">
          <span className="muted">Showing only:</span>
          {chips.map((c) => (
            <button key={c.key} type="button" className="chip" onClick={() => without(c.key)} aria-label={`Remove filter ${c.label}`} data-testid="activity-chip">
              {c.label} <span aria-hidden="true">×</span>
            </button>
          ))}
          <button type="button" className="button button-small" onClick={() => setCallFilter({})} data-testid="activity-clear-filters">
            Clear all filters
          </button>
        </div>
      ) : null}
      <ErrorNote error={error} testId="activity-error" />
      <ErrorNote error={exportError} testId="activity-export-error" />
      {exported ? (
        <div className="card export" data-testid="activity-export" role="status">
          <p>
            Saved {exported.rows === 1 ? '1 call' : `${exported.rows} calls`} to <code data-testid="activity-export-path">{exported.path}</code>.{' '}
            <button type="button" className="button button-small" onClick={() => setExported(null)}>
              Close
            </button>
          </p>
        </div>
      ) : null}
      {loaded && calls.length === 0 && chips.length === 0 ? (
        <EmptyState
          testId="activity-empty"
          title="No activity yet"
          actions={
            <button type="button" className="button" onClick={() => navigate('servers')}>
              Go to Servers
            </button>
          }
        >
          <p>
            Every call a model or you make is recorded here: what was asked, Warden's decision and why, and what happened. Connect a server and run
            one of its tools to see the first entries.
          </p>
        </EmptyState>
      ) : loaded && calls.length === 0 ? (
        <div className="no-match" data-testid="activity-no-match" role="status">
          <p>
            <strong>No calls match these filters.</strong> To see more, remove a filter above{filter.from !== undefined || filter.to !== undefined ? ' or widen the time range' : ''}.
          </p>
          <button type="button" className="button" onClick={() => setCallFilter({})}>
            Show every call
          </button>
        </div>
      ) : calls.length > 0 ? (
        <>
          <p className="muted" data-testid="activity-count">
            {next
              ? `The newest ${calls.length} calls${chips.length ? ' that match' : ''}.`
              : chips.length
                ? `${calls.length === 1 ? '1 call matches' : `${calls.length} calls match`}, newest first.`
                : `${calls.length === 1 ? '1 call' : `${calls.length} calls`}, newest first.`}
          </p>
          <div className="table-scroll" tabIndex={0} role="region" aria-label="Tool calls">
            <table className="table activity-table" data-testid="activity-table">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">What</th>
                  <th scope="col">Asked by</th>
                  <th scope="col">Decision</th>
                  <th scope="col">Outcome</th>
                </tr>
              </thead>
              <tbody>
                {calls.map((c) => (
                  <CallRow key={c.operationId} call={c} />
                ))}
              </tbody>
            </table>
          </div>
          {next ? (
            <button type="button" className="button more" onClick={() => void loadMore()} data-testid="activity-more">
              Show older calls
            </button>
          ) : null}
        </>
      ) : null}
    </ViewFrame>
  );
}
