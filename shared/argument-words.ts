/**
 * Arguments and schema changes in words, for the places where a person decides: the approval and
 * batch dialogs, the Approvals cards, Recovery, chat cards and the changed-tool panel.
 *
 * A call's arguments become labelled lines ("to: alice@example.com"), nested objects and lists
 * indented below their field; a change of a tool's input schema becomes sentences ("New input:
 * forward_to — “Email address a copy is sent to” (the server’s words)"). The JSON stays one click
 * away wherever this is shown; these words are what a person reads first.
 *
 * Both run in main (dialogs, the core) and in the window, so they live here, pure. Every name and
 * value passes through the one display choke point (shared/display.ts): field names through
 * `visibleName`, server descriptions through `dialogLine`, string values escaped like a JSON
 * string whenever they could be misread. A line therefore never breaks inside a value, and a
 * hidden or direction-changing character is always shown as an escape.
 */
import { dialogLine, makeHiddenVisible, visibleName } from './display';

/** One labelled line of an argument list. */
export interface ArgumentLine {
  /** How deep it is nested (0 for a top-level field). */
  depth: number;
  /** The field's name, made visible; for a list item its position ("1."). */
  label: string;
  /** The value in words, or '' when the lines below hold it (an object or a list). */
  value: string;
  /** True for an item of a list (shown "1. value", without a colon). */
  item: boolean;
}

/** Options of {@link argumentLines}. */
export interface ArgumentWordsOptions {
  /** Longest string value shown before it is cut with "… (N more characters)"; Infinity never cuts. */
  maxValue?: number;
}

/** Longest string value the window shows before cutting it (the JSON, one click away, has it all). */
export const MAX_VALUE_CHARS = 200;

/** Below this depth the rest of a value is shown as one line of JSON. */
const MAX_DEPTH = 8;

type Schema = Readonly<Record<string, unknown>>;

function asSchema(value: unknown): Schema | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Schema) : undefined;
}

function propertiesOf(schema: Schema | undefined): Record<string, Schema> {
  const props = asSchema(schema?.properties);
  return (props ?? {}) as Record<string, Schema>;
}

function requiredOf(schema: Schema | undefined): string[] {
  return Array.isArray(schema?.required) ? (schema.required as unknown[]).filter((r): r is string => typeof r === 'string') : [];
}

/** Required fields first, then in the schema's order, then the rest by name. */
function ordered(keys: string[], schema: Schema | undefined): string[] {
  const required = requiredOf(schema);
  const declared = Object.keys(propertiesOf(schema));
  const rank = (k: string) => (required.includes(k) ? 0 : declared.includes(k) ? 1 : 2);
  const at = (k: string) => (declared.includes(k) ? declared.indexOf(k) : Number.MAX_SAFE_INTEGER);
  return [...keys].sort((a, b) => rank(a) - rank(b) || at(a) - at(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** Text that reads the same unquoted: no edge spaces, no quotes or backslashes, nothing that looks like another type. */
const PLAIN = /^[^\s"\\](?:[^"\\\t]*[^\s"\\])?$/u;
const LOOKS_TYPED = /^(?:true|false|null|-?\d[\d.eE+-]*)$/;

/** Cuts a string, never between the halves of a surrogate pair. */
function cut(value: string, max: number): { shown: string; rest: number } {
  if (value.length <= max) return { shown: value, rest: 0 };
  let end = max;
  if (/[\ud800-\udbff]/.test(value.charAt(end - 1))) end -= 1;
  return { shown: value.slice(0, end), rest: value.length - end };
}

/**
 * A string value as a person reads it: as it is when that cannot mislead, otherwise as a quoted
 * JSON string (so "42", "", " x", a line break or a backslash read as exactly what they are);
 * hidden characters always shown as escapes; cut at `max` characters with how many more there are.
 */
export function stringWords(value: string, max = MAX_VALUE_CHARS): string {
  const { shown, rest } = cut(value, max);
  const escaped = makeHiddenVisible(shown);
  const plain = escaped === shown && PLAIN.test(shown) && !LOOKS_TYPED.test(shown) && !/[\n\r…]/.test(shown);
  const text = plain ? shown : makeHiddenVisible(JSON.stringify(shown));
  return rest > 0 ? `${text}… (${rest.toLocaleString('en-US')} more characters)` : text;
}

function scalarWords(value: unknown, max: number): string | null {
  if (typeof value === 'string') return stringWords(value, max);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : stringWords(String(value), max);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === null) return 'null';
  if (value === undefined) return '(not set)';
  return null;
}

function push(out: ArgumentLine[], value: unknown, schema: Schema | undefined, depth: number, label: string, item: boolean, max: number): void {
  const scalar = scalarWords(value, max);
  if (scalar !== null) return void out.push({ depth, label, value: scalar, item });
  if (depth >= MAX_DEPTH) return void out.push({ depth, label, value: stringWords(JSON.stringify(value), max), item });
  if (Array.isArray(value)) {
    if (value.length === 0) return void out.push({ depth, label, value: '(empty list)', item });
    out.push({ depth, label, value: '', item });
    const items = asSchema(schema?.items);
    value.forEach((v, i) => push(out, v, items, depth + 1, `${i + 1}.`, true, max));
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((k) => record[k] !== undefined);
  if (keys.length === 0) return void out.push({ depth, label, value: '(empty)', item });
  out.push({ depth, label, value: '', item });
  const props = propertiesOf(schema);
  for (const k of ordered(keys, schema)) push(out, record[k], props[k], depth + 1, visibleName(k), false, max);
}

/**
 * A call's arguments as labelled lines, in the order a person needs them (required fields first,
 * then the schema's order). `schema` is the tool's input schema; only its structure is read, so
 * nothing a server wrote in it becomes a word here.
 */
export function argumentLines(args: Readonly<Record<string, unknown>>, schema?: Readonly<Record<string, unknown>>, options: ArgumentWordsOptions = {}): ArgumentLine[] {
  const max = options.maxValue ?? MAX_VALUE_CHARS;
  const out: ArgumentLine[] = [];
  const props = propertiesOf(schema);
  for (const k of ordered(Object.keys(args).filter((key) => args[key] !== undefined), schema)) push(out, args[k], props[k], 0, visibleName(k), false, max);
  return out;
}

/** One line as text: "to: alice@example.com", "1. first", "options:" (its lines follow). */
export function lineText(line: ArgumentLine): string {
  const sep = line.item ? ' ' : ':';
  return line.value === '' ? `${line.label}${line.item ? '' : ':'}` : `${line.label}${sep}${line.item ? '' : ' '}${line.value}`;
}

/** The lines as plain text, two spaces per level (`indent` before every line); "(no arguments)" for none. */
export function argumentText(lines: readonly ArgumentLine[], indent = ''): string {
  if (lines.length === 0) return `${indent}(no arguments)`;
  return lines.map((l) => `${indent}${'  '.repeat(l.depth)}${lineText(l)}`).join('\n');
}

/**
 * Arguments as the stored text of a call (canonical JSON) in words; the text itself, escaped, when
 * it is not a JSON object (an old or damaged record).
 */
export function argumentTextOfJson(json: string, schema?: Readonly<Record<string, unknown>>, options: ArgumentWordsOptions = {}): string {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return stringWords(json, options.maxValue ?? MAX_VALUE_CHARS);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return stringWords(json, options.maxValue ?? MAX_VALUE_CHARS);
  return argumentText(argumentLines(value as Record<string, unknown>, schema, options));
}

// ---- schema changes -------------------------------------------------------------------------

/** Longest server description quoted in a change sentence. */
const MAX_DESCRIPTION_CHARS = 160;

/** A server's description of an input, on one line, quoted, cut, and said to be the server's. */
function serverWords(text: string): string {
  const { shown, rest } = cut(dialogLine(text), MAX_DESCRIPTION_CHARS);
  return `“${shown}${rest > 0 ? `… (${rest.toLocaleString('en-US')} more characters)` : ''}” (the server’s words)`;
}

function typeOf(schema: Schema | undefined): string | null {
  const t = schema?.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t) && t.every((x) => typeof x === 'string')) return t.join(' or ');
  return null;
}

/** A schema value with its keys sorted, so a reordered schema is not a change. */
function stable(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sort) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort((v as Record<string, unknown>)[k])])) : v;
  return JSON.stringify(sort(value)) ?? '';
}

/**
 * How a tool's input schema changed, one sentence per change a person should weigh: "New input:
 * forward_to — “Email address a copy is sent to” (the server’s words)", "Removed input: cc",
 * "Now required: path", "No longer required: dryRun", "Changed type: count (was string, now
 * number)", "Description changed: to — now “…” (the server’s words)", "Rules changed: mode".
 * Empty when the schemas are the same; one general sentence when only something else changed.
 */
export function schemaChanges(before: Readonly<Record<string, unknown>> | undefined, after: Readonly<Record<string, unknown>> | undefined): string[] {
  const a = propertiesOf(before);
  const b = propertiesOf(after);
  const requiredBefore = requiredOf(before);
  const requiredAfter = requiredOf(after);
  const out: string[] = [];
  for (const k of Object.keys(b)) {
    if (k in a) continue;
    const description = typeof b[k]?.description === 'string' ? (b[k].description as string) : '';
    out.push(`New input: ${visibleName(k)}${requiredAfter.includes(k) ? ' (required)' : ''}${description ? ` — ${serverWords(description)}` : ''}`);
  }
  for (const k of Object.keys(a)) if (!(k in b)) out.push(`Removed input: ${visibleName(k)}`);
  for (const k of Object.keys(b)) {
    if (!(k in a)) continue;
    const was = a[k];
    const now = b[k];
    if (requiredAfter.includes(k) && !requiredBefore.includes(k)) out.push(`Now required: ${visibleName(k)}`);
    if (!requiredAfter.includes(k) && requiredBefore.includes(k)) out.push(`No longer required: ${visibleName(k)}`);
    const typeWas = typeOf(was);
    const typeNow = typeOf(now);
    if (typeWas !== typeNow) out.push(`Changed type: ${visibleName(k)} (was ${typeWas ?? 'any type'}, now ${typeNow ?? 'any type'})`);
    const dWas = typeof was?.description === 'string' ? was.description : '';
    const dNow = typeof now?.description === 'string' ? now.description : '';
    if (dWas !== dNow) out.push(dNow ? `Description changed: ${visibleName(k)} — now ${serverWords(dNow)}` : `Description removed: ${visibleName(k)}`);
    const rest = (s: Schema | undefined) => stable({ ...s, description: undefined, type: undefined });
    if (rest(was) !== rest(now)) out.push(`Rules changed: ${visibleName(k)} (the values it accepts are different)`);
  }
  if (out.length === 0 && stable(before) !== stable(after)) out.push('The inputs’ rules changed (nothing a single input shows: see the schema)');
  return out;
}
