/**
 * Reads MCP server lists from other clients' config files:
 * - Claude Desktop `claude_desktop_config.json`: `{ mcpServers: { name: { command, args, env } | { url, headers } } }`
 * - Cursor `mcp.json`: the same `mcpServers` shape (stdio or `url`)
 * - VS Code `mcp.json` (JSONC): `{ servers: { name: { type: 'stdio'|'http'|'sse', command, args, env, cwd, url, headers } }, inputs }`
 *
 * Output is a neutral list of raw entries; nothing here decides what is secret or what is
 * imported. Unknown fields are noted rather than silently ignored.
 */
import type { ImportFormat } from '../../../shared/contract/servers';
import { parseJsonc } from './jsonc';

/** One server as a config file describes it, before any Warden validation. */
export interface RawServerEntry {
  sourceName: string;
  transport: 'stdio' | 'http' | null;
  command?: string;
  args: string[];
  cwd?: string;
  env: Array<{ name: string; value: string }>;
  url?: string;
  headers: Array<{ name: string; value: string }>;
  notes: string[];
  /** Why this entry cannot be imported as is, or null. */
  problem: string | null;
}

/** A parsed config file. */
export interface ParsedConfig {
  format: ImportFormat;
  entries: RawServerEntry[];
  /** VS Code `inputs` ids that are `password: true`, for notes on `${input:id}` references. */
  passwordInputs: Set<string>;
}

/** Thrown when a file is not a config this importer understands; the message says why. */
export class ConfigFormatError extends Error {}

/**
 * Parses the text of a config file. `format` null → detected from the content (`servers` →
 * VS Code, `mcpServers` → Claude Desktop/Cursor, told apart by `formatHint`).
 */
export function parseConfig(text: string, format: ImportFormat | null, formatHint: ImportFormat = 'claude-desktop'): ParsedConfig {
  let root: unknown;
  try {
    root = parseJsonc(text);
  } catch (error) {
    // Only the position: V8's message quotes the start of the text, and this file could be anything.
    const at = /position (\d+)/.exec(error instanceof Error ? error.message : '');
    throw new ConfigFormatError(`not valid JSON${at ? ` (error at character ${at[1]})` : ''}`);
  }
  if (!isObject(root)) throw new ConfigFormatError('expected a JSON object at the top level');
  const detected: ImportFormat | null =
    format ?? (isObject(root.servers) ? 'vscode' : isObject(root.mcpServers) ? (formatHint === 'vscode' ? 'claude-desktop' : formatHint) : null);
  if (detected === null) throw new ConfigFormatError('found neither "mcpServers" (Claude Desktop, Cursor) nor "servers" (VS Code)');
  const key = detected === 'vscode' ? 'servers' : 'mcpServers';
  const servers = root[key];
  if (servers === undefined) return { format: detected, entries: [], passwordInputs: new Set() };
  if (!isObject(servers)) throw new ConfigFormatError(`"${key}" must be an object of servers by name`);
  const passwordInputs = new Set<string>();
  if (detected === 'vscode' && Array.isArray(root.inputs)) {
    for (const input of root.inputs) if (isObject(input) && typeof input.id === 'string' && input.password === true) passwordInputs.add(input.id);
  }
  const entries = Object.entries(servers).map(([name, raw]) => parseEntry(name, raw, detected));
  return { format: detected, entries, passwordInputs };
}

const KNOWN_FIELDS = new Set(['type', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'envFile', 'disabled', 'transport', 'serverUrl']);

function parseEntry(name: string, raw: unknown, format: ImportFormat): RawServerEntry {
  const entry: RawServerEntry = { sourceName: name, transport: null, args: [], env: [], headers: [], notes: [], problem: null };
  if (!isObject(raw)) {
    entry.problem = 'expected an object with "command" or "url"';
    return entry;
  }
  const type = typeof raw.type === 'string' ? raw.type.toLowerCase() : undefined;
  const url = typeof raw.url === 'string' ? raw.url : typeof raw.serverUrl === 'string' ? raw.serverUrl : undefined;
  if (typeof raw.command === 'string' && raw.command.length > 0 && (type === undefined || type === 'stdio')) {
    entry.transport = 'stdio';
    entry.command = raw.command;
  } else if (url !== undefined && (type === undefined || type === 'http' || type === 'sse' || type === 'streamable-http' || type === 'streamablehttp')) {
    entry.transport = 'http';
    entry.url = url;
    if (type === 'sse') entry.notes.push('Configured as legacy SSE; Warden tries Streamable HTTP first and falls back to SSE automatically.');
  } else if (type !== undefined && !['stdio', 'http', 'sse'].includes(type)) {
    entry.problem = `unsupported server type "${type}"`;
    return entry;
  } else {
    entry.problem = type === 'stdio' || (type === undefined && url === undefined) ? 'missing "command"' : 'missing "url"';
    return entry;
  }

  if (raw.args !== undefined) {
    if (Array.isArray(raw.args) && raw.args.every((a) => typeof a === 'string' || typeof a === 'number' || typeof a === 'boolean')) {
      entry.args = raw.args.map(String);
    } else {
      entry.problem = '"args" must be a list of strings';
    }
  }
  if (typeof raw.cwd === 'string' && raw.cwd.length > 0) entry.cwd = raw.cwd;
  entry.env = stringMap(raw.env, '"env"', entry);
  entry.headers = stringMap(raw.headers, '"headers"', entry);
  if (entry.transport === 'http' && entry.env.length > 0) entry.notes.push('"env" is ignored for a remote server.');
  if (entry.transport === 'stdio' && entry.headers.length > 0) entry.notes.push('"headers" is ignored for a local server.');
  if (typeof raw.envFile === 'string') entry.notes.push(`"envFile" (${raw.envFile}) is not imported; add those variables by hand.`);
  if (raw.disabled === true) entry.notes.push(`The server is disabled in the ${format} config.`);
  const unknown = Object.keys(raw).filter((k) => !KNOWN_FIELDS.has(k));
  if (unknown.length) entry.notes.push(`Fields not imported: ${unknown.join(', ')}.`);
  return entry;
}

function stringMap(value: unknown, field: string, entry: RawServerEntry): Array<{ name: string; value: string }> {
  if (value === undefined || value === null) return [];
  if (!isObject(value)) {
    entry.problem = `${field} must be an object of names to values`;
    return [];
  }
  const out: Array<{ name: string; value: string }> = [];
  for (const [name, v] of Object.entries(value)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out.push({ name, value: String(v) });
    else entry.notes.push(`${field} "${name}" is not a string and was skipped.`);
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
