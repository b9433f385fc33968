/**
 * What changed in a tool's contract between two listings, for a person deciding what to do about
 * a rug pull: a readable diff of the description (by words), the input and output schemas and the
 * annotations (by lines of pretty-printed JSON), the title and the server's instructions, plus a
 * short summary in words for the native confirmation ("the input schema gained the field cc; it now
 * claims to be destructive").
 *
 * Every text here came from the server: it is sanitized for display (no escapes, controls or bidi
 * marks) before it is compared, and the views label it as the server's, untrusted.
 */
import { schemaChanges } from '../../../shared/argument-words';
import { sanitizeForDisplay, sanitizeJsonText } from '../text/sanitize';
import type { ContractVersion } from './listing-store';
import { claimsOf } from '../preview/trusted-preview';

export { claimsOf };

/** One run of a diff: unchanged, only in the new version, or only in the old one. */
export interface DiffPart {
  kind: 'same' | 'added' | 'removed';
  text: string;
}

/** The parts of a contract a change can touch, in the order a person reads them. */
export type ContractField = 'title' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations' | 'instructions';

/** One changed field: the old and new text (null when absent) and the diff between them. */
export interface FieldDiff {
  field: ContractField;
  before: string | null;
  after: string | null;
  parts: DiffPart[];
}

/** The whole change of one tool. */
export interface ContractDiff {
  fields: FieldDiff[];
  /** Plain words, one line per changed field, for the native confirmation. */
  summary: string[];
}

/** Above this many token pairs the diff gives up on alignment and shows old and new whole. */
const MAX_CELLS = 2_000_000;

/**
 * The longest-common-subsequence diff of two token lists, runs merged. Quadratic, so bounded by
 * {@link MAX_CELLS}: two huge texts are shown as "all removed, all added" instead of stalling.
 */
export function diffTokens(before: readonly string[], after: readonly string[], joiner: string): DiffPart[] {
  const n = before.length;
  const m = after.length;
  const parts: DiffPart[] = [];
  const push = (kind: DiffPart['kind'], token: string) => {
    const last = parts.at(-1);
    if (last && last.kind === kind) last.text += joiner + token;
    else parts.push({ kind, text: token });
  };
  if (n * m > MAX_CELLS) {
    if (n) parts.push({ kind: 'removed', text: before.join(joiner) });
    if (m) parts.push({ kind: 'added', text: after.join(joiner) });
    return parts;
  }
  // lengths[i][j] = LCS of before[i..] and after[j..], in one flat array.
  const lengths = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[i * (m + 1) + j] = before[i] === after[j] ? lengths[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lengths[(i + 1) * (m + 1) + j]!, lengths[i * (m + 1) + j + 1]!);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (before[i] === after[j]) {
      push('same', before[i]!);
      i++;
      j++;
    } else if (lengths[(i + 1) * (m + 1) + j]! >= lengths[i * (m + 1) + j + 1]!) push('removed', before[i++]!);
    else push('added', after[j++]!);
  }
  while (i < n) push('removed', before[i++]!);
  while (j < m) push('added', after[j++]!);
  return parts;
}

/** Pretty JSON with keys sorted, so a reordered schema is not reported as changed. */
export function prettyJson(value: unknown): string | null {
  if (value === undefined) return null;
  const sort = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sort) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort((v as Record<string, unknown>)[k])])) : v;
  return sanitizeForDisplay(JSON.stringify(sort(value), null, 2));
}

function textOf(field: ContractField, v: ContractVersion): string | null {
  switch (field) {
    case 'title':
      return v.tool.title !== undefined ? sanitizeForDisplay(v.tool.title) : null;
    case 'description':
      return v.tool.description !== undefined ? sanitizeForDisplay(v.tool.description) : null;
    case 'instructions':
      return v.instructions !== null ? sanitizeForDisplay(v.instructions) : null;
    case 'inputSchema':
      return prettyJson(v.tool.inputSchema);
    case 'outputSchema':
      return prettyJson(v.tool.outputSchema);
    case 'annotations':
      return prettyJson(v.tool.annotations);
  }
}

const FIELDS: readonly ContractField[] = ['title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'instructions'];

/** The diff between the version a person knew (`before`) and the one listed now (`after`). */
export function contractDiff(before: ContractVersion, after: ContractVersion): ContractDiff {
  const fields: FieldDiff[] = [];
  for (const field of FIELDS) {
    const a = textOf(field, before);
    const b = textOf(field, after);
    if (a === b) continue;
    const prose = field === 'description' || field === 'instructions' || field === 'title';
    // Prose by words and the spaces between them (so a word gaining a trailing space is not "changed"), JSON by lines.
    const split = (t: string | null) => (t === null || t === '' ? [] : prose ? (t.match(/\s+|\S+/g) ?? []) : t.split('\n'));
    fields.push({ field, before: a, after: b, parts: diffTokens(split(a), split(b), prose ? '' : '\n') });
  }
  return { fields, summary: summaryOf(before, after, fields) };
}

// ---- the summary in words --------------------------------------------------------------------


function countWords(parts: DiffPart[], kind: DiffPart['kind']): number {
  return parts.filter((p) => p.kind === kind).reduce((n, p) => n + p.text.split(/\s+/).filter(Boolean).length, 0);
}

function summaryOf(before: ContractVersion, after: ContractVersion, fields: FieldDiff[]): string[] {
  const out: string[] = [];
  for (const f of fields) {
    switch (f.field) {
      case 'title':
        out.push('The title changed (the server’s words).');
        break;
      case 'description': {
        const added = countWords(f.parts, 'added');
        const removed = countWords(f.parts, 'removed');
        out.push(`The description changed (the server’s words): ${added} word${added === 1 ? '' : 's'} added, ${removed} removed.`);
        break;
      }
      case 'inputSchema': {
        // One sentence per input a person should weigh ("New input: forward_to — …"), written from
        // the schemas after the sanitizer took out what hides text; names and the server's
        // descriptions are then shown through the display choke point by schemaChanges.
        const clean = (s: ContractVersion['tool']['inputSchema']) => sanitizeJsonText(s) as Record<string, unknown>;
        const changes = schemaChanges(clean(before.tool.inputSchema), clean(after.tool.inputSchema));
        out.push(...(changes.length ? changes : ['The inputs’ rules changed (see the schema).']));
        break;
      }
      case 'outputSchema':
        out.push('What it says it returns changed (output schema).');
        break;
      case 'annotations': {
        const was = claimsOf(before.tool.annotations);
        const now = claimsOf(after.tool.annotations);
        const gained = now.filter((c) => !was.includes(c));
        const lost = was.filter((c) => !now.includes(c));
        const bits = [gained.length ? `now claims ${gained.join(', ')}` : '', lost.length ? `no longer claims ${lost.join(', ')}` : ''].filter(Boolean);
        out.push(`The server’s claims about the tool changed${bits.length ? `: it ${bits.join('; ')}` : ''}.`);
        break;
      }
      case 'instructions':
        out.push('The server’s instructions (sent to the model with every tool) changed.');
        break;
    }
  }
  return out;
}
