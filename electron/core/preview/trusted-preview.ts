/**
 * Trusted previews: the one line that says what a tool call will do ("Write 1,204 characters to
 * "/home/me/notes.txt"", "Close the issue “Login fails” in acme/mobile"), written by Warden's own code.
 *
 * The inputs are only what Warden knows for itself: which server this is (from the definition the
 * person configured, never from what the server calls itself), the tool's name, the validated
 * arguments and the *shape* of the input schema (field names, types, which are required). The
 * server's description, title, annotations and the schema's own descriptions are never read, and
 * the model's text is not an input at all — so neither can write a word of the line. Argument
 * values (chosen by the model) appear only as quoted values, escaped, cut when long.
 *
 * This is the only place such a line is written: the native approval and batch dialogs, the
 * Approvals view, chat cards and Activity all show what this module returns.
 */
import type { ServerDefinition } from '../../../shared/domain/servers';
import { makeHiddenVisible } from '../../../shared/display';
import { isPathShaped, pathsIn } from '../paths/arguments';

/** Servers Warden has templates for, recognised from the person's own configuration. */
export type ServerKind = 'demo' | 'filesystem' | 'everything' | 'github' | 'other';

/** What the preview is written from. Nothing here is text a server or a model wrote about the call. */
export interface PreviewTool {
  toolName: string;
  serverLabel: string;
  accountLabel: string;
  /** Which server this is, from its configuration (see {@link serverKindOf}); 'other' when unknown. */
  serverKind?: ServerKind;
  /** The tool's input schema; only its structure is read (property names, types, required). */
  inputSchema?: Readonly<Record<string, unknown>>;
}

/** A trusted preview of one call. */
export interface TrustedPreview {
  /** What the call will do, in one line: "Move "/a.txt" to "/b.txt"". */
  summary: string;
  /** The summary with where it runs: "Move "/a.txt" to "/b.txt" — move_file on Files (Work)". */
  line: string;
  /** Which writer produced it: a template ("filesystem/move_file") or "schema" (the generic one). */
  source: string;
}

/** Longest quoted string shown before it is cut (the full value is one click away). */
export const MAX_QUOTED = 80;
/** How many fields the generic summary names before "and N more". */
export const MAX_FIELDS = 3;
/** How many paths inside objects the generic summary names before "and N more paths". */
export const MAX_NESTED_PATHS = 3;

// ---- values ---------------------------------------------------------------------------------

/**
 * A string argument as a quoted value: JSON-escaped (quotes, backslashes, newlines), hidden and
 * direction-changing characters made visible, line separators escaped, cut at {@link MAX_QUOTED}
 * characters with the full length said. It is always one line and always inside quotes.
 */
export function quote(value: string, max = MAX_QUOTED): string {
  const cut = value.length > max;
  // Never cut between the two halves of a surrogate pair.
  let end = max;
  if (cut && /[\ud800-\udbff]/.test(value.charAt(end - 1))) end -= 1;
  const shown = cut ? value.slice(0, end) : value;
  const escaped = makeHiddenVisible(JSON.stringify(shown).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029'));
  return cut ? `${escaped.slice(0, -1)}…" (${value.length.toLocaleString('en-US')} characters)` : escaped;
}

/** Any argument value, in a few words: quoted strings, plain numbers, "3 items", "an object with 2 fields". */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : quote(String(value));
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    if (value.length === 0) return 'an empty list';
    if (value.length <= 2 && value.every((v) => typeof v === 'string' || typeof v === 'number')) return value.map(describeValue).join(' and ');
    return `a list of ${value.length} items`;
  }
  if (typeof value === 'object') {
    const n = Object.keys(value).length;
    return n === 0 ? 'an empty object' : `an object with ${n} field${n === 1 ? '' : 's'}`;
  }
  return 'a value';
}

/** A name (tool, field) as it may appear unquoted: plain identifier characters, short. Anything else is quoted. */
export function nameWords(name: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/.test(name) ? name : quote(name, 64);
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

// ---- server kinds ---------------------------------------------------------------------------

/**
 * Which known server a definition runs, read from what the person configured (the package or
 * program in the command line, the remote host), never from `serverInfo` a server reports.
 */
export function serverKindOf(definition: ServerDefinition | undefined): ServerKind {
  if (!definition) return 'other';
  if (definition.transport === 'builtin') return definition.builtin === 'demo' ? 'demo' : 'other';
  if (definition.transport === 'http') {
    let host = '';
    try {
      host = new URL(definition.url).hostname.toLowerCase();
    } catch {
      return 'other';
    }
    return host === 'api.githubcopilot.com' ? 'github' : 'other';
  }
  const words = [definition.command, ...definition.args].map((w) => w.replace(/\\/g, '/'));
  const has = (pkg: string) => words.some((w) => w === pkg || w.startsWith(`${pkg}@`) || w.includes(`/${pkg}/`) || w.endsWith(`/${pkg}`));
  if (has('@modelcontextprotocol/server-filesystem') || has('mcp-server-filesystem')) return 'filesystem';
  if (has('@modelcontextprotocol/server-everything') || has('mcp-server-everything')) return 'everything';
  if (has('@modelcontextprotocol/server-github') || words.some((w) => /(^|\/)github-mcp-server(:|$|@)/.test(w) || w.startsWith('ghcr.io/github/github-mcp-server'))) return 'github';
  return 'other';
}

/**
 * Where a configured server runs, in words: "a program on this computer", "remote, at
 * mcp.example.com", "built into Warden". From the definition, never from the server.
 */
export function serverLocationOf(definition: ServerDefinition): string {
  if (definition.transport === 'builtin') return 'built into Warden (runs offline, inside Warden)';
  if (definition.transport === 'stdio') return 'a program on this computer';
  try {
    return `remote, at ${new URL(definition.url).host}`;
  } catch {
    return 'remote';
  }
}

const CLAIMS: ReadonlyArray<[string, string, string]> = [
  ['destructiveHint', 'destructive', 'not destructive'],
  ['readOnlyHint', 'read-only', 'not read-only'],
  ['idempotentHint', 'safe to repeat', 'not safe to repeat'],
  ['openWorldHint', 'reaching outside this machine', 'not reaching outside this machine'],
];

/** The server's claims (annotations) as words: "destructive", "read-only". */
export function claimsOf(annotations: Readonly<Record<string, unknown>> | undefined): string[] {
  const out: string[] = [];
  for (const [key, yes, no] of CLAIMS) {
    if (annotations?.[key] === true) out.push(yes);
    else if (annotations?.[key] === false && key === 'destructiveHint') out.push(no);
  }
  return out;
}

// ---- templates ------------------------------------------------------------------------------

type Args = Readonly<Record<string, unknown>>;
/** A template: the summary, or null when the arguments are not what it expects (the generic one is used then). */
type Template = (args: Args) => string | null;

const str = (v: unknown): v is string => typeof v === 'string';
const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const strList = (v: unknown): v is string[] => Array.isArray(v) && v.every(str);

/** "a", "b" and 3 more. */
function quotedList(values: readonly string[], show = 2): string {
  const shown = values.slice(0, show).map((v) => quote(v));
  const rest = values.length - shown.length;
  if (rest > 0) return `${shown.join(', ')} and ${rest} more`;
  return shown.length <= 1 ? (shown[0] ?? '') : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
}

const demo: Record<string, Template> = {
  notes_list: () => 'List the demo notes',
  notes_add: (a) => (str(a.text) ? `Add a demo note: ${quote(a.text)}` : null),
  notes_delete: (a) => (num(a.id) ? `Delete demo note #${a.id}` : null),
  files_list: (a) => (a.path === undefined ? 'List the demo files under "/demo"' : str(a.path) ? `List the demo files under ${quote(a.path)}` : null),
  files_read: (a) => (str(a.path) ? `Read the demo file ${quote(a.path)}` : null),
  read_inbox: () => 'Read the latest message in the demo inbox',
};

const readFile: Template = (a) => {
  if (!str(a.path)) return null;
  const part = num(a.head) ? `, only its first ${plural(a.head, 'line')}` : num(a.tail) ? `, only its last ${plural(a.tail, 'line')}` : '';
  return `Read the file ${quote(a.path)}${part}`;
};

const filesystem: Record<string, Template> = {
  read_file: readFile,
  read_text_file: readFile,
  read_media_file: (a) => (str(a.path) ? `Read the image or audio file ${quote(a.path)}` : null),
  read_multiple_files: (a) => (strList(a.paths) ? `Read ${plural(a.paths.length, 'file')}: ${quotedList(a.paths)}` : null),
  write_file: (a) => (str(a.path) && str(a.content) ? `Write ${plural(a.content.length, 'character')} to ${quote(a.path)}, replacing the file if it exists` : null),
  edit_file: (a) =>
    str(a.path) && Array.isArray(a.edits)
      ? a.dryRun === true
        ? `Show (without saving) ${plural(a.edits.length, 'change')} to ${quote(a.path)}`
        : `Change ${quote(a.path)}: ${plural(a.edits.length, 'replacement')} of text`
      : null,
  create_directory: (a) => (str(a.path) ? `Create the folder ${quote(a.path)}` : null),
  list_directory: (a) => (str(a.path) ? `List the folder ${quote(a.path)}` : null),
  list_directory_with_sizes: (a) => (str(a.path) ? `List the folder ${quote(a.path)} with sizes` : null),
  directory_tree: (a) => (str(a.path) ? `List everything under ${quote(a.path)}` : null),
  move_file: (a) => (str(a.source) && str(a.destination) ? `Move ${quote(a.source)} to ${quote(a.destination)}` : null),
  search_files: (a) => (str(a.path) && str(a.pattern) ? `Search under ${quote(a.path)} for names matching ${quote(a.pattern)}` : null),
  get_file_info: (a) => (str(a.path) ? `Read the details (size, dates, permissions) of ${quote(a.path)}` : null),
  list_allowed_directories: () => 'List the folders this server may use',
  delete_file: (a) => (str(a.path) ? `Delete the file ${quote(a.path)}` : null),
};

const everything: Record<string, Template> = {
  echo: (a) => (str(a.message) ? `Echo back the message ${quote(a.message)}` : null),
  'get-sum': (a) => (num(a.a) && num(a.b) ? `Add ${a.a} and ${a.b}` : null),
  add: (a) => (num(a.a) && num(a.b) ? `Add ${a.a} and ${a.b}` : null),
  'get-env': () => "Read every environment variable of the server's process",
  'get-tiny-image': () => 'Return a small test image',
  'trigger-long-running-operation': (a) =>
    (a.duration === undefined || num(a.duration)) && (a.steps === undefined || num(a.steps))
      ? `Run a test operation for ${plural((a.duration as number | undefined) ?? 10, 'second')} in ${plural((a.steps as number | undefined) ?? 5, 'step')}`
      : null,
  'trigger-sampling-request': (a) => (str(a.prompt) ? `Have the server ask your model: ${quote(a.prompt)}` : null),
  'gzip-file-as-resource': (a) => (a.data === undefined || str(a.data) ? `Fetch ${a.data === undefined ? "the server's default file" : quote(a.data)} and compress it${str(a.name) ? ` as ${quote(a.name)}` : ''}` : null),
};

const repoOf = (a: Args): string | null => (str(a.owner) && str(a.repo) ? `${a.owner}/${a.repo}` : null);
const github: Record<string, Template> = {
  update_issue: (a) => {
    const repo = repoOf(a);
    if (!repo || !num(a.issue_number)) return null;
    const verb = a.state === 'closed' ? 'Close' : a.state === 'open' ? 'Reopen' : 'Change';
    return `${verb} issue #${a.issue_number} in ${quote(repo)}`;
  },
  create_issue: (a) => (repoOf(a) && str(a.title) ? `Open an issue in ${quote(repoOf(a)!)} titled ${quote(a.title)}` : null),
  add_issue_comment: (a) => (repoOf(a) && num(a.issue_number) && str(a.body) ? `Comment on issue #${a.issue_number} in ${quote(repoOf(a)!)} (${plural(a.body.length, 'character')})` : null),
  create_pull_request: (a) => (repoOf(a) && str(a.title) ? `Open a pull request in ${quote(repoOf(a)!)} titled ${quote(a.title)}` : null),
  merge_pull_request: (a) => (repoOf(a) && num(a.pullNumber ?? a.pull_number) ? `Merge pull request #${(a.pullNumber ?? a.pull_number) as number} in ${quote(repoOf(a)!)}` : null),
  create_or_update_file: (a) => (repoOf(a) && str(a.path) ? `Write ${quote(a.path)} in ${quote(repoOf(a)!)}${str(a.branch) ? ` on branch ${quote(a.branch)}` : ''}` : null),
  delete_file: (a) => (repoOf(a) && str(a.path) ? `Delete ${quote(a.path)} in ${quote(repoOf(a)!)}${str(a.branch) ? ` on branch ${quote(a.branch)}` : ''}` : null),
};

const TEMPLATES: Record<Exclude<ServerKind, 'other'>, Record<string, Template>> = { demo, filesystem, everything, github };

// ---- the schema-driven summary --------------------------------------------------------------

const URL_FIELD = /^(url|urls|uri|href|link|endpoint|website)$/i;
const RECIPIENT_FIELD = /^(to|recipient|recipients|email|emails|cc|bcc|channel|channel_id|channelId|phone|phone_number|user|username|user_id|userId|chat_id|chatId)$/i;

function schemaProperties(schema: PreviewTool['inputSchema']): Record<string, Record<string, unknown>> {
  const props = schema?.properties;
  return props && typeof props === 'object' && !Array.isArray(props) ? (props as Record<string, Record<string, unknown>>) : {};
}

/** The fields a person most needs to see first: required ones, then in the schema's order, then the rest by name. */
function orderedFields(args: Args, schema: PreviewTool['inputSchema']): string[] {
  const keys = Object.keys(args).filter((k) => args[k] !== undefined);
  const required = Array.isArray(schema?.required) ? (schema.required as unknown[]).filter(str) : [];
  const declared = Object.keys(schemaProperties(schema));
  const rank = (k: string) => (required.includes(k) ? 0 : declared.includes(k) ? 1 : 2);
  const at = (k: string) => {
    const i = declared.indexOf(k);
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  return keys.sort((a, b) => rank(a) - rank(b) || at(a) - at(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** The host of a URL argument, so "contacts example.com" is read before the long address. */
function hostOf(value: string): string | null {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.hostname : null;
  } catch {
    return null;
  }
}

function isUrlField(name: string, prop: Record<string, unknown> | undefined): boolean {
  return URL_FIELD.test(name) || prop?.format === 'uri' || prop?.format === 'url';
}

/**
 * The generic summary: the tool's name, then what it acts on — recipients ("to "bob@x.org""),
 * addresses ("contacting example.com"), paths ("on "/a/b"") — then the other fields, a few at
 * most, each as name and quoted value.
 */
function schemaSummary(tool: PreviewTool, args: Args): string {
  const props = schemaProperties(tool.inputSchema);
  const fields = orderedFields(args, tool.inputSchema);
  const head = nameWords(tool.toolName);
  if (fields.length === 0) return `Run ${head} (no arguments)`;
  const parts: string[] = [];
  const used = new Set<string>();
  const take = (k: string, words: string) => {
    used.add(k);
    parts.push(words);
  };
  for (const k of fields) {
    const v = args[k];
    if (RECIPIENT_FIELD.test(k) && (str(v) || strList(v))) take(k, `${nameWords(k)} ${str(v) ? quote(v) : quotedList(v)}`);
  }
  for (const k of fields) {
    const v = args[k];
    if (used.has(k) || !isUrlField(k, props[k])) continue;
    if (str(v)) {
      const host = hostOf(v);
      take(k, host ? `contacting ${quote(host)} (${nameWords(k)} ${quote(v)})` : `${nameWords(k)} ${quote(v)}`);
    } else if (strList(v)) take(k, `${nameWords(k)} ${quotedList(v)}`);
  }
  // Paths, by the one definition of what a path is (name, schema or value): every one is named,
  // so none hides under "and 2 more fields" or "an object with 3 fields".
  const paths = pathsIn(args, tool.inputSchema).paths;
  const topOf = (field: string) => field.split('.')[0]!;
  for (const k of fields) {
    const v = args[k];
    if (used.has(k) || !paths.some((p) => topOf(p.field) === k) || !(str(v) || strList(v))) continue;
    if (str(v)) take(k, `${nameWords(k)} ${quote(v)}`);
    else {
      // Absolute, home and drive paths first, so the one that matters is not one of "and 3 more".
      take(k, `${nameWords(k)} ${quotedList([...v.filter(isPathShaped), ...v.filter((x) => !isPathShaped(x))])}`);
    }
  }
  const nested = paths.filter((p) => !used.has(topOf(p.field)));
  // Keys below the top level are the model's own words: quoted like values.
  for (const p of nested.slice(0, MAX_NESTED_PATHS)) parts.push(`${nameWords(topOf(p.field))} (at ${quote(p.field.slice(topOf(p.field).length + 1))}) ${quote(p.value)}`);
  if (nested.length > MAX_NESTED_PATHS) parts.push(plural(nested.length - MAX_NESTED_PATHS, 'more path'));
  for (const k of fields) {
    if (used.has(k)) continue;
    if (parts.length >= MAX_FIELDS) break;
    const v = args[k];
    // Plain values follow their name; a described one ("a list of 3 items") is set apart.
    const plain = typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null;
    take(k, plain ? `${nameWords(k)} ${describeValue(v)}` : `${nameWords(k)} (${describeValue(v)})`);
  }
  const more = fields.length - used.size;
  return `Run ${head} with ${parts.join(', ')}${more > 0 ? ` and ${plural(more, 'more field')}` : ''}`;
}

// ---- the one entry point --------------------------------------------------------------------

/**
 * The trusted preview of one call.
 *
 * `args` must be the validated arguments the gate holds (what will be sent). A template applies
 * only for a server recognised from its configuration and only when the arguments have the
 * shape it expects; otherwise the summary is built from the schema's structure and the values.
 */
export function trustedPreview(tool: PreviewTool, args: Args | null): TrustedPreview {
  const kind = tool.serverKind ?? 'other';
  const template = kind === 'other' || !Object.prototype.hasOwnProperty.call(TEMPLATES[kind], tool.toolName) ? undefined : TEMPLATES[kind][tool.toolName];
  let summary: string | null = null;
  let source = 'schema';
  if (args === null) {
    summary = `Run ${nameWords(tool.toolName)}`;
    source = 'identity';
  } else if (template) {
    try {
      summary = template(args);
    } catch {
      summary = null;
    }
    if (summary !== null) source = `${kind}/${tool.toolName}`;
  }
  summary ??= schemaSummary(tool, args ?? {});
  return { summary, line: `${summary} — ${whereWords(tool)}`, source };
}

/** "move_file on Files (Work)": the identity part of a preview line, with names the person chose. */
export function whereWords(tool: Pick<PreviewTool, 'toolName' | 'serverLabel' | 'accountLabel'>): string {
  return `${nameWords(tool.toolName)} on ${makeHiddenVisible(tool.serverLabel)} (${makeHiddenVisible(tool.accountLabel)})`;
}
