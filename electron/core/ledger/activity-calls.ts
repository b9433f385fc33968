/**
 * The Activity list's channels (`activity:calls`, `activity:export-calls`): one row per operation
 * with what a person reads — the trusted one-line preview, the names they gave the server and
 * account, who asked (a person with Run…, or a model in which conversation), the decision, the
 * outcome, when and how long — and an export of the filtered rows streamed to a file chosen in a
 * native save dialog.
 *
 * Names come from the current configuration through `CallNames` (the ledger records ids only);
 * a server, account or conversation removed since is said so in words, and the ids stay in the
 * row for the details area and the export.
 */
import { createPrivateWriteStream } from '../storage/private-files';
import type { ActivityCall, CallCursor, CallFilter } from '../../../shared/domain/activity';
import type { OperationState } from '../../../shared/domain/operations';
import { TERMINAL_STATES } from '../../../shared/domain/operations';
import type { ServerDefinition } from '../../../shared/domain/servers';
import { visibleName } from '../../../shared/display';
import { WardenError } from '../../../shared/result';
import type { Handlers } from '../dispatch';
import type { FileDialogs } from '../ports';
import { serverKindOf, trustedPreview } from '../preview/trusted-preview';
import { csvCell } from './export';
import type { HistoryReads, RecordedCall } from './history';

/** What the rows are named from: the configuration as it is now. */
export interface CallNames {
  server(serverId: string): ServerDefinition | undefined;
  account(serverId: string, accountId: string): string | undefined;
  /** The tool's input schema when it is listed now (the preview reads its structure only). */
  inputSchema(serverId: string, accountId: string, toolName: string): Readonly<Record<string, unknown>> | undefined;
  conversation(conversationId: string): { title: string; model: string | null } | undefined;
}

export interface ActivityCallDeps {
  history: HistoryReads;
  names: CallNames;
  /** Where an export is saved: the person chooses the file. Without it, exports are refused. */
  fileDialogs?: FileDialogs;
  now?: () => number;
}

/** Most tool names Activity's Tool filter lists. */
const TOOL_NAMES_LISTED = 1000;

/**
 * Rows read (and folded from their records) per page while exporting: memory holds two pages
 * (the one written and the next, read meanwhile), whatever the size of the export, and folding a
 * page is one stretch of main-thread work, so a page stays small enough to be one short pause.
 */
const EXPORT_PAGE = 100;
/**
 * Rows described and written between two turns of the event loop. The export runs in the main
 * process beside every window: a page of 500 rows built in one go held the loop ~70 ms. Each
 * slice's text is written (and the write awaited) before the next is built, so the window's
 * input and IPC get a turn every few milliseconds at most.
 */
const EXPORT_SLICE = 25;

/** One operation as an Activity row. */
export function describeCall(call: RecordedCall, names: CallNames): ActivityCall {
  const v = call.view;
  const definition = names.server(v.serverId);
  const serverName = definition?.name ?? 'a removed server';
  const accountName = names.account(v.serverId, v.accountId) ?? 'a removed account';
  const schema = names.inputSchema(v.serverId, v.accountId, v.toolName);
  const summary = trustedPreview({ toolName: v.toolName, serverLabel: serverName, accountLabel: accountName, serverKind: serverKindOf(definition), ...(schema ? { inputSchema: schema } : {}) }, call.arguments as Record<string, unknown>).summary;
  const conversation = v.conversationId ? names.conversation(v.conversationId) : undefined;
  const state = v.state as OperationState;
  const finished = TERMINAL_STATES.has(state);
  return {
    operationId: v.operationId,
    summary,
    // A call the gate refused may name a tool no server lists, as the model or the window wrote it.
    toolName: visibleName(v.toolName),
    serverId: v.serverId,
    accountId: v.accountId,
    serverName,
    accountName,
    askedBy: {
      source: v.source as ActivityCall['askedBy']['source'],
      conversationId: v.conversationId,
      conversationTitle: conversation?.title ?? null,
      model: conversation?.model ?? null,
    },
    decision: v.decision?.decision ?? null,
    decisionReason: v.decision?.reason ?? null,
    state,
    reason: v.reason,
    requestedAt: v.requestedAt,
    finishedAt: finished ? v.updatedAt : null,
    durationMs: finished ? Math.max(0, v.updatedAt - v.requestedAt) : null,
    cursor: call.cursor,
  };
}

/** Who asked, in words, for the export ("a model (claude-x) in “Trip plans”", "you, with Run…"). */
export function askedByWords(a: ActivityCall['askedBy']): string {
  if (a.source === 'user') return 'you, with Run…';
  if (a.source === 'gateway') return 'another app, through Warden';
  const model = a.model ? `a model (${a.model})` : 'a model';
  if (a.conversationId === null) return model;
  return a.conversationTitle === null ? `${model} in a deleted conversation` : `${model} in “${a.conversationTitle}”`;
}

/** Export columns, in order (also the key order of each JSONL object). */
const EXPORT_COLUMNS = ['requestedAt', 'what', 'tool', 'server', 'account', 'askedBy', 'decision', 'decisionReason', 'outcome', 'reason', 'finishedAt', 'durationMs', 'operationId', 'serverId', 'accountId', 'conversationId', 'arguments'] as const;

function exportRecord(c: ActivityCall, args: Readonly<Record<string, unknown>>): Record<(typeof EXPORT_COLUMNS)[number], unknown> {
  return {
    requestedAt: new Date(c.requestedAt).toISOString(),
    what: c.summary,
    tool: c.toolName,
    server: c.serverName,
    account: c.accountName,
    askedBy: askedByWords(c.askedBy),
    decision: c.decision,
    decisionReason: c.decisionReason,
    outcome: c.state,
    reason: c.reason,
    finishedAt: c.finishedAt === null ? null : new Date(c.finishedAt).toISOString(),
    durationMs: c.durationMs,
    operationId: c.operationId,
    serverId: c.serverId,
    accountId: c.accountId,
    conversationId: c.askedBy.conversationId,
    arguments: JSON.stringify(args),
  };
}

/**
 * Streams the operations matching `filter` to `path`, oldest first, one page at a time: memory
 * holds one page whatever the size of the export. The file is owner-only (it holds arguments).
 */
export async function writeCallsFile(history: HistoryReads, names: CallNames, format: 'jsonl' | 'csv', filter: CallFilter, path: string): Promise<{ format: 'jsonl' | 'csv'; path: string; rows: number }> {
  const out = createPrivateWriteStream(path);
  const opened = new Promise<void>((resolve, reject) => {
    out.once('open', () => resolve());
    out.once('error', reject);
  });
  const write = (text: string): Promise<void> => new Promise<void>((resolve, reject) => out.write(text, (err) => (err ? reject(err) : resolve())));
  let rows = 0;
  try {
    await opened;
    if (format === 'csv') await write(EXPORT_COLUMNS.map(csvCell).join(',') + '\r\n');
    const pageAfter = (after: CallCursor | null) => {
      const read = history.calls(filter, { limit: EXPORT_PAGE, after, oldestFirst: true });
      read.catch(() => undefined); // awaited below; a failure while the page before is written is reported then
      return read;
    };
    // The next page is read while this one is written: the index query and the record reads
    // wait on the thread pool, and would otherwise leave the export idle a third of the time.
    let reading = pageAfter(null);
    for (;;) {
      const page = await reading;
      if (page.next) reading = pageAfter(page.next);
      for (let from = 0; from < page.calls.length; from += EXPORT_SLICE) {
        let text = '';
        for (const call of page.calls.slice(from, from + EXPORT_SLICE)) {
          const record = exportRecord(describeCall(call, names), call.arguments);
          text += format === 'csv' ? EXPORT_COLUMNS.map((c) => csvCell(record[c])).join(',') + '\r\n' : JSON.stringify(record) + '\n';
        }
        // Awaiting the write is the turn of the event loop between slices.
        await write(text);
      }
      rows += page.calls.length;
      if (!page.next) break;
    }
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    return { format, path, rows };
  } catch (error) {
    out.destroy();
    throw new WardenError('INTERNAL', `activity:export-calls: could not write ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Builds the handlers of the Activity list's channels. */
export function activityCallHandlers(deps: ActivityCallDeps): Pick<Handlers, 'activity:calls' | 'activity:export-calls' | 'activity:tools'> {
  return {
    // The names as the rows show them (describeCall), so choosing one filters to those rows.
    'activity:tools': async ({ serverId, accountId }) => ({
      tools: [...new Set((await deps.history.toolNames({ ...(serverId !== undefined ? { serverId } : {}), ...(accountId !== undefined ? { accountId } : {}) }, TOOL_NAMES_LISTED)).map(visibleName))],
    }),
    'activity:calls': async ({ filter, limit, after }) => {
      const page = await deps.history.calls(filter, { limit, after });
      return { calls: page.calls.map((c) => describeCall(c, deps.names)), next: page.next };
    },
    'activity:export-calls': async ({ format, filter }) => {
      if (!deps.fileDialogs) throw new WardenError('UNSUPPORTED', 'activity:export-calls: this host cannot show a save dialog; export from the Warden app');
      const at = new Date((deps.now ?? Date.now)()).toISOString().replace(/[:.]/g, '-');
      const path = await deps.fileDialogs.saveFile({
        title: 'Export the calls shown in Activity',
        defaultName: `warden-activity-${at}.${format}`,
        filters: [format === 'csv' ? { name: 'CSV (spreadsheets)', extensions: ['csv'] } : { name: 'JSON Lines', extensions: ['jsonl'] }],
      });
      if (path === null) return { format, path: null, rows: 0 };
      return writeCallsFile(deps.history, deps.names, format, filter, path);
    },
  };
}
