/**
 * What counts as a path in a tool call: the one definition that the policy (`normalizeForPolicy`),
 * a server's folder wall, the trusted preview and the permission matrix's "takes a path" marker
 * all read. How such a path resolves is `./resolve.ts`.
 *
 * A schema cannot say "this is a path", and a model chooses what it writes where, so a string
 * is judged as a path on any of three kinds of evidence:
 * - its name (the nearest object key; case and separators ignored: `targetPath`, `target_path`,
 *   `TARGET-PATH` are one name), ending in a word such as path, file, dir, folder, src, dst,
 *   target, location;
 * - its schema (`format: uri`, `uri-reference`, `iri`, `iri-reference`): a path unless it names
 *   another scheme (`https:`, `mailto:`), which no file system opens;
 * - its value, wherever it appears: an absolute path, a leading `~`, a `file:` URL, a Windows
 *   drive (`C:`) or UNC (`\\server`) prefix, a relative path (`./x`, `../x`, `a/b`, `a\b`; not a
 *   URL of another scheme).
 * Judging too many strings as paths only makes a decision stricter (a path rule or the wall
 * looks at one more string); judging too few lets a path walk past them.
 */
import { resolvePathLikeKernel, type PathFs, type PathSemantics } from './resolve';

/** Why a string was judged as a path. */
export type PathEvidence = 'name' | 'schema' | 'value';

/** One string of a call judged as a path, before it is resolved. */
export interface FoundPath {
  /** Where it is in the arguments, dotted (`options.target.value`, `files.1`). */
  field: string;
  value: string;
  by: PathEvidence;
}

/** One path argument of a call: where it is, as written, and where the server will open it. */
export interface ArgumentPath {
  field: string;
  written: string;
  /** Where the server will open it, or null when that cannot be known (then `why` says why). */
  opened: string | null;
  why?: string;
  /** Set when it loops through symlinks: the system would refuse to open it too. */
  loop?: true;
}

/** Deepest nesting searched for paths; anything deeper is reported as a path whose place is unknown. */
export const MAX_PATH_DEPTH = 64;
/** Most paths judged in one call; more are reported as one whose place cannot be known. */
export const MAX_ARGUMENT_PATHS = 1000;

// Names end in one of these (after lowercasing and dropping separators).
const PATH_NAME_ENDINGS = [
  'path', 'paths', 'pathname', 'file', 'files', 'filename', 'filenames', 'dir', 'dirs', 'dirname',
  'directory', 'directories', 'folder', 'folders', 'cwd', 'root', 'roots', 'source', 'sources', 'src',
  'destination', 'destinations', 'dest', 'dst', 'target', 'targets', 'location', 'locations',
];
// Names that end like a path name but are known to name something else.
const NOT_PATH_NAMES = new Set(['profile', 'profiles', 'userprofile', 'xpath', 'jsonpath', 'geolocation', 'allocation']);
const PATH_NAME = new RegExp(`(?:${PATH_NAME_ENDINGS.join('|')})$`);
// Names of fields holding a URI or URL: a path unless it names another scheme.
const URI_NAME = /(?:uri|uris|url|urls|iri)$/;

const URI_FORMATS = new Set(['uri', 'uri-reference', 'iri', 'iri-reference', 'url']);
const PATH_FORMATS = new Set(['path', 'file-path', 'filepath', 'directory']);

/** A name as compared: lower case, letters and digits only (`target_path` = `targetPath`). */
function foldName(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
}

/** How an argument's name reads: as a path, as a URI, or neither. */
function nameEvidence(name: string | null): 'path' | 'uri' | null {
  if (name === null) return null;
  const folded = foldName(name);
  if (folded === '' || NOT_PATH_NAMES.has(folded)) return null;
  if (PATH_NAME.test(folded)) return 'path';
  return URI_NAME.test(folded) ? 'uri' : null;
}

/** True when an argument name reads as a path (case and separators ignored). */
export function isPathName(name: string): boolean {
  return nameEvidence(name) === 'path';
}

/**
 * True when a string is a path by its shape alone, wherever it appears: an absolute path, a
 * leading `~`, a `file:` URL, a Windows drive or UNC prefix, or a relative path (surrounding
 * spaces ignored, since servers trim them). Text of several lines is not a path (file contents
 * often start with `/`).
 */
export function isPathShaped(value: string): boolean {
  return isRootedShape(value) || isRelativeShape(value);
}

/** The single line a path could be (trimmed), or null for empty or multi-line text. */
function oneLine(value: string): string | null {
  const v = value.trim();
  return v === '' || /[\r\n\u2028\u2029]/.test(v) ? null : v;
}

/** An absolute path, a leading `~`, a `file:` URL, a Windows drive or UNC prefix. */
function isRootedShape(value: string): boolean {
  const v = oneLine(value);
  // "/…", "\…", "//server", "\\server", "~…", "file:…", "C:…" (a drive, not "Q: some words").
  return v !== null && /^(?:[/\\~]|file:|[A-Za-z]:(?!\s))/i.test(v);
}

/**
 * A relative path: `.` or `..` (alone, leading, or as any segment), or segments joined by `/` or
 * `\` (`docs/link/key`) none of which starts or ends with a space, and not a URL of another scheme.
 *
 * Why: a server opens a relative name from its working folder, so `../../outside/secret.txt` or
 * `docs/link/key` leads wherever the folders and links there lead. Prose such as `see /etc/passwd`
 * (a space beside the slash) is not read as one; were it opened, it would stay inside the working
 * folder, since it climbs no `..`.
 */
function isRelativeShape(value: string): boolean {
  const v = oneLine(value);
  if (v === null || namesOtherScheme(v)) return false;
  const segments = v.split(/[/\\]/);
  if (segments.some((s) => s === '.' || s === '..')) return true;
  return segments.length > 1 && segments.every((s) => s === s.trim());
}

/** True when a string names a scheme other than `file:` (`https://…`, `mailto:…`): no file system opens it. */
function namesOtherScheme(value: string): boolean {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(value.trim())?.[1];
  return scheme !== undefined && scheme.toLowerCase() !== 'file';
}

// ---- schemas --------------------------------------------------------------------------------

type Schema = Readonly<Record<string, unknown>>;
/** Most subschemas one position of a schema expands to (anyOf, allOf, $ref chains). */
const MAX_POSITIONS = 32;

const isSchema = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The schema a local `$ref` (`#/$defs/x`) points to inside `root`, or undefined. */
function deref(ref: unknown, root: Schema): Schema | undefined {
  if (typeof ref !== 'string' || !ref.startsWith('#')) return undefined;
  let at: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    at = isSchema(at) && Object.prototype.hasOwnProperty.call(at, part) ? at[part] : undefined;
  }
  return isSchema(at) ? at : undefined;
}

/** A schema with its combinators and local references opened: every subschema a value there must or may meet. */
function expand(schemas: readonly Schema[], root: Schema): Schema[] {
  const out: Schema[] = [];
  const queue = [...schemas];
  while (queue.length > 0 && out.length < MAX_POSITIONS) {
    const s = queue.shift()!;
    if (out.includes(s)) continue;
    out.push(s);
    const target = deref(s.$ref, root);
    if (target) queue.push(target);
    for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
      const list = s[key];
      if (Array.isArray(list)) queue.push(...list.filter(isSchema));
    }
  }
  return out;
}

/** The subschemas a child value (an object's key, or an array's index) falls under. */
function childPositions(positions: readonly Schema[], key: string | number, root: Schema): Schema[] {
  const out: Schema[] = [];
  for (const s of positions) {
    if (typeof key === 'number') {
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : null;
      if (prefix && key < prefix.length && isSchema(prefix[key])) out.push(prefix[key]);
      else if (isSchema(s.items)) out.push(s.items);
      else if (isSchema(s.additionalItems)) out.push(s.additionalItems);
    } else {
      const props = s.properties;
      if (isSchema(props) && Object.prototype.hasOwnProperty.call(props, key) && isSchema(props[key])) out.push(props[key]);
      else if (isSchema(s.additionalProperties)) out.push(s.additionalProperties);
    }
  }
  return expand(out, root);
}

/** How a schema position reads: as a path, as a URI, or neither. */
function schemaEvidence(positions: readonly Schema[]): 'path' | 'uri' | null {
  let uri = false;
  for (const s of positions) {
    const format = typeof s.format === 'string' ? s.format.toLowerCase() : '';
    if (PATH_FORMATS.has(format)) return 'path';
    if (URI_FORMATS.has(format)) uri = true;
  }
  return uri ? 'uri' : null;
}

/**
 * How a key's name reads, inherited one level from a path-named object: in `{"target": {"value":
 * "x"}}` the target is `value`.
 */
function nameEvidenceUnder(name: string | null, parent: string | null): 'path' | 'uri' | null {
  return nameEvidence(name) ?? (nameEvidence(parent) === 'path' ? 'path' : null);
}

/** Why a string is judged as a path, or null: its name, then a rooted shape, then its schema, then a relative shape. */
function evidenceFor(value: string, byName: 'path' | 'uri' | null, positions: readonly Schema[]): PathEvidence | null {
  if (byName === 'path') return 'name';
  if (isRootedShape(value)) return 'value';
  const bySchema = schemaEvidence(positions);
  if (bySchema === 'path') return 'schema';
  if ((bySchema === 'uri' || byName === 'uri') && !namesOtherScheme(value)) return bySchema ? 'schema' : 'name';
  return isRelativeShape(value) ? 'value' : null;
}

// ---- calls ----------------------------------------------------------------------------------

/** What `pathsIn` found, and whether it stopped before the end (too many paths, too deep). */
export interface PathsFound {
  paths: FoundPath[];
  /** Where searching stopped, with why, or null when every string was looked at. */
  cutOff: { field: string; why: string } | null;
}

/**
 * Every string of a call judged as a path (see the module comment for what counts), at any
 * depth and in every list, named by its dotted field.
 *
 * Why every depth and every string: a wall or a rule that read only the top-level `path` would be
 * walked around by `{"options": {"target": {"value": "/etc"}}}`, `{"files": ["/etc/passwd"]}`
 * or `{"note": "~/.ssh/id_rsa"}`.
 */
export function pathsIn(args: Readonly<Record<string, unknown>>, inputSchema?: Readonly<Record<string, unknown>>): PathsFound {
  const paths: FoundPath[] = [];
  let cutOff: PathsFound['cutOff'] = null;
  const root: Schema = isSchema(inputSchema) ? inputSchema : {};
  // `name` is how the string's own key (a list's, for its items) reads as a path name.
  const walk = (v: unknown, field: string, name: 'path' | 'uri' | null, key: string | null, positions: Schema[], depth: number): void => {
    if (cutOff) return;
    if (typeof v === 'string') {
      const by = evidenceFor(v, name, positions);
      if (by === null) return;
      if (paths.length >= MAX_ARGUMENT_PATHS) cutOff = { field, why: `is one of more than ${MAX_ARGUMENT_PATHS} paths in one call, more than Warden checks` };
      else paths.push({ field, value: v, by });
      return;
    }
    if (v === null || typeof v !== 'object') return;
    if (depth >= MAX_PATH_DEPTH) {
      cutOff = { field, why: `is nested more than ${MAX_PATH_DEPTH} levels deep, deeper than Warden looks for paths` };
      return;
    }
    // A list's items go by the list's own name ("files": [...] holds files).
    if (Array.isArray(v)) v.forEach((item, i) => walk(item, `${field}.${i}`, name, key, childPositions(positions, i, root), depth + 1));
    else for (const [k, child] of Object.entries(v)) walk(child, field ? `${field}.${k}` : k, nameEvidenceUnder(k, key), k, childPositions(positions, k, root), depth + 1);
  };
  walk(args, '', null, null, expand([root], root), 0);
  return { paths, cutOff };
}

/**
 * Every path of a call, resolved as the server will open it: symlinks followed, a relative path
 * from the server's working folder, and one whose place cannot be known reported with why
 * (including where searching had to stop). What the folder wall judges.
 */
export function argumentPathsOf(
  args: Readonly<Record<string, unknown>>,
  inputSchema: Readonly<Record<string, unknown>> | undefined,
  options: { semantics: PathSemantics; fs: PathFs | null; workingFolder?: string | null },
): ArgumentPath[] {
  const found = pathsIn(args, inputSchema);
  const out = found.paths.map((p) => placeOf(p.field, p.value, options));
  if (found.cutOff) out.push({ field: found.cutOff.field, written: '', opened: null, why: found.cutOff.why });
  return out;
}

/** Where one path argument will be opened, or why that cannot be known. */
export function placeOf(field: string, written: string, options: { semantics: PathSemantics; fs: PathFs | null; workingFolder?: string | null }): ArgumentPath {
  // " /etc/passwd" is a relative name to the kernel and /etc/passwd to a server that trims it.
  if (written !== written.trim()) return { field, written, opened: null, why: 'has spaces at its start or end, which some servers remove and others keep' };
  const r = resolvePathLikeKernel(written, options.semantics, options.fs, options.workingFolder ?? null);
  if (r.ok) return { field, written, opened: r.path };
  return r.kind === 'loop' ? { field, written, opened: null, why: r.why, loop: true } : { field, written, opened: null, why: r.why };
}

// ---- tools ----------------------------------------------------------------------------------

/** Which inputs of a tool are paths, read from its input schema alone (no call yet). */
export interface SchemaPaths {
  /** Fields that are paths by name or by schema, dotted (`options.target.value`; a list by its own name). */
  fields: string[];
  /** True when the tool takes some other text, which holds a path whenever a caller writes one there. */
  freeText: boolean;
}

/**
 * The path inputs a tool's schema declares, and whether it takes free text (which is judged as a
 * path whenever its value is one): what the permission matrix says a folder wall does to a tool.
 */
export function schemaPaths(inputSchema: Readonly<Record<string, unknown>> | undefined): SchemaPaths {
  const fields: string[] = [];
  let freeText = false;
  if (!isSchema(inputSchema)) return { fields, freeText: true };
  const root = inputSchema;
  const seen = new Set<Schema>();
  const visit = (positions: Schema[], field: string, byName: 'path' | 'uri' | null, key: string | null, depth: number): void => {
    if (depth > MAX_PATH_DEPTH || fields.length >= 100) return;
    const bySchema = schemaEvidence(positions);
    let container = false;
    let text = positions.length === 0;
    for (const s of positions) {
      const types = Array.isArray(s.type) ? s.type : s.type === undefined ? null : [s.type];
      if (types === null ? !isSchema(s.properties) && s.items === undefined && s.enum === undefined && s.const === undefined : types.includes('string')) text = true;
      if (isSchema(s.properties) || s.items !== undefined || isSchema(s.additionalProperties) || Array.isArray(s.prefixItems)) container = true;
      // Nested objects accept keys their schema never names (only top-level fields are refused).
      if (depth > 0 && types?.includes('object') && !isSchema(s.properties) && s.additionalProperties !== false) text = true;
    }
    if (text) {
      if (field !== '' && (byName === 'path' || bySchema === 'path' || byName === 'uri' || bySchema === 'uri')) {
        if (!fields.includes(field)) fields.push(field);
      } else freeText = true;
    }
    if (!container) return;
    for (const s of positions) {
      if (seen.has(s)) continue;
      seen.add(s);
      if (isSchema(s.properties)) for (const k of Object.keys(s.properties)) visit(childPositions([s], k, root), field ? `${field}.${k}` : k, nameEvidenceUnder(k, key), k, depth + 1);
      // A list's items go by the list's name, as in a call.
      if (s.items !== undefined || Array.isArray(s.prefixItems)) visit(childPositions([s], 0, root), field, byName, key, depth + 1);
      if (isSchema(s.additionalProperties)) visit(expand([s.additionalProperties], root), field ? `${field}.*` : '*', nameEvidenceUnder(null, key), null, depth + 1);
    }
  };
  visit(expand([root], root), '', null, null, 0);
  return { fields, freeText };
}
