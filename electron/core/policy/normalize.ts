/**
 * The impure step before `decide`: turns validated arguments into the normalized view the policy
 * reads (path-like fields resolved as the operating system will open them). What is *sent* stays
 * the stored original; the server resolves the same paths the same way, so the policy judges what
 * will really happen.
 */
import type { PolicyState } from '../../../shared/domain/policy';
import { placeOf, pathsIn } from '../paths/arguments';
import { normalizePolicyPath, resolvePathLikeKernel, type PathFs, type PathSemantics } from '../paths/resolve';

/** Options of the normalization step. */
export interface NormalizeOptions {
  semantics: PathSemantics;
  /** The real file system (node:fs), or null to resolve `..` and working folders without reading it. */
  fs: PathFs | null;
  /** Extra dotted fields to treat as paths (e.g. every `pathUnder` field of the rules for this tool). */
  pathFields?: readonly string[];
  /**
   * Dotted fields a value rule (`matches`, `equals`, `oneOf`) reads: their string is read as a path
   * too (as written and as opened) even when nothing else marks it as one.
   */
  valueFields?: readonly string[];
  /** Folders the rules name (`pathUnder` values): resolved too, so a rule on a symlink covers what it leads to. */
  pathRoots?: readonly string[];
  /**
   * The folder the server opens relative paths from (a stdio server's working folder), or null
   * when it is unknown (remote and built-in servers).
   */
  workingFolder?: string | null;
  /** The tool's input schema: a field it marks as a URI is a path too (see `paths/arguments.ts`). */
  inputSchema?: Readonly<Record<string, unknown>>;
}

/** The policy's view of one call's arguments. */
export interface NormalizedArguments {
  arguments: Readonly<Record<string, unknown>>;
  /**
   * Path fields whose place cannot be known (relative with no working folder, unreadable folder):
   * dotted field → why. The engine decides them by the strictest rule they could fall under.
   */
  unresolvedPaths: ReadonlyMap<string, string>;
  /** Rule folder as written → where it really leads. */
  pathRoots: ReadonlyMap<string, string>;
  /** Set when a path field loops through symlinks: the call is refused with this reason. */
  refused: string | null;
  /**
   * Every string judged as a path (by name, schema or value, at any depth: `pathsIn`), and every
   * field a `pathUnder`, `matches`, `equals` or `oneOf` rule reads: the value as written, and where the server will open it (null
   * when that cannot be known). A `matches` glob is judged on both (see the engine).
   */
  pathValues: ReadonlyMap<string, PathValue>;
}

/** One path argument as written and as the system will open it. */
export interface PathValue {
  written: string;
  opened: string | null;
  /** Why `opened` is null (a relative path with no known working folder, an unreadable folder). */
  why?: string;
  /**
   * Set when only a value rule naming the field makes it a path (`"key"` in a field a glob reads):
   * then a rule compares where it is opened only when the rule itself names a path from a root.
   */
  byRule?: true;
}

const NO_PROBLEMS: ReadonlyMap<string, string> = new Map();
const NO_PATHS: ReadonlyMap<string, PathValue> = new Map();

/**
 * Returns the policy's view of `args`: path fields resolved like the kernel, rule folders resolved,
 * and the fields whose place cannot be known.
 *
 * Why: keeps `decide` pure while still honouring "symlinks where the path exists"
 * and never letting an unplaceable path make a call more allowed.
 */
export function normalizeForPolicy(args: Readonly<Record<string, unknown>>, options: NormalizeOptions): NormalizedArguments {
  const pathFields = options.pathFields ?? [];
  const roots = resolveRoots(options);
  // Paths the call holds, by the one definition (read only where the file system can place them).
  const found: Array<{ field: string; value: string; byRule?: true }> = options.fs ? pathsIn(args, options.inputSchema).paths.filter((p) => !pathFields.includes(p.field)) : [];
  // A field a value rule reads is a path too: `"key"` opened from a working folder inside
  // secrets/ is that folder's key, whatever the field is called.
  if (options.fs) {
    for (const dotted of options.valueFields ?? []) {
      if (pathFields.includes(dotted) || found.some((p) => p.field === dotted)) continue;
      const parts = dotted.split('.');
      const value = parentOf(args as Record<string, unknown>, parts)?.[parts[parts.length - 1]!];
      if (typeof value === 'string' && value !== '') found.push({ field: dotted, value, byRule: true });
    }
  }
  // Nothing path-like to resolve (the common case): the input as is, no copy.
  if (found.length === 0 && pathFields.length === 0) return { arguments: args, unresolvedPaths: NO_PROBLEMS, pathRoots: roots, refused: null, pathValues: NO_PATHS };
  const copy = structuredClone(args) as Record<string, unknown>;
  const unresolved = new Map<string, string>();
  const pathValues = new Map<string, PathValue>();
  let refused: string | null = null;
  const working = options.workingFolder ?? null;

  // Paths no rule names: the value the other constraints read is the resolved one for an absolute
  // path and as written for a relative one; a glob also sees where a relative one leads.
  for (const p of found) {
    const place = placeOf(p.field, p.value, { semantics: options.semantics, fs: options.fs, workingFolder: working });
    const value: PathValue = place.opened !== null ? { written: p.value, opened: place.opened } : { written: p.value, opened: null, why: place.why };
    pathValues.set(p.field, p.byRule ? { ...value, byRule: true } : value);
    if (!p.byRule && place.opened !== null && normalizePolicyPath(p.value, options.semantics) !== null) setField(copy, p.field.split('.'), place.opened);
  }

  // Fields a path rule reads: resolved from the working folder; what cannot be placed is reported.
  for (const dotted of pathFields) {
    const parts = dotted.split('.');
    const parent = parentOf(copy, parts);
    const last = parts[parts.length - 1]!;
    if (!parent || !Object.prototype.hasOwnProperty.call(parent, last)) continue;
    const value = parent[last];
    if (typeof value !== 'string') continue;
    const place = placeOf(dotted, value, { semantics: options.semantics, fs: options.fs, workingFolder: working });
    pathValues.set(dotted, place.opened !== null ? { written: value, opened: place.opened } : { written: value, opened: null, why: place.why });
    if (place.opened !== null) {
      parent[last] = place.opened;
    } else if (place.loop) {
      refused ??= `arguments.${dotted}: ${place.why}`;
    } else {
      unresolved.set(dotted, `arguments.${dotted} ${JSON.stringify(value)} ${place.why}`);
    }
  }
  return { arguments: copy, unresolvedPaths: unresolved.size ? unresolved : NO_PROBLEMS, pathRoots: roots, refused, pathValues: pathValues.size ? pathValues : NO_PATHS };
}

/** The object holding the last part of a dotted field (an array counts: `files.1`), or undefined. */
function parentOf(root: Record<string, unknown>, parts: readonly string[]): Record<string, unknown> | undefined {
  let parent: unknown = root;
  for (const part of parts.slice(0, -1)) {
    parent = parent && typeof parent === 'object' && Object.prototype.hasOwnProperty.call(parent, part) ? (parent as Record<string, unknown>)[part] : undefined;
  }
  return parent && typeof parent === 'object' ? (parent as Record<string, unknown>) : undefined;
}

function setField(root: Record<string, unknown>, parts: readonly string[], value: string): void {
  const parent = parentOf(root, parts);
  if (parent) parent[parts[parts.length - 1]!] = value;
}

/** Where each rule folder really leads (a folder that cannot be resolved is judged as written). */
function resolveRoots(options: NormalizeOptions): ReadonlyMap<string, string> {
  if (!options.fs || !options.pathRoots || options.pathRoots.length === 0) return NO_PROBLEMS;
  const out = new Map<string, string>();
  for (const root of options.pathRoots) {
    const r = resolvePathLikeKernel(root, options.semantics, options.fs);
    if (r.ok) out.set(root, r.path);
  }
  return out;
}

/** The fields and folders the `pathUnder` rules for one (server, tool) read, and the fields its value rules read. */
export interface PathRules {
  fields: readonly string[];
  roots: readonly string[];
  /** Fields a `matches`, `equals` or `oneOf` rule reads: read as paths too. */
  valueFields: readonly string[];
}

/**
 * The fields and the folders of every `pathUnder` rule for this tool, and the fields of its
 * `matches`, `equals` and `oneOf` rules.
 *
 * Why: both sides of "under" must be resolved the same way; a rule on `/etc` (a symlink to
 * `/private/etc` on macOS) must cover the files it leads to.
 */
export function pathRulesFor(state: PolicyState, serverId: string, toolName: string): PathRules {
  let index = pathRuleIndex.get(state.user);
  if (!index) {
    index = new Map();
    for (const rule of state.user) {
      if (rule.scope.kind !== 'tool-constraint') continue;
      const key = `${rule.scope.serverId}\u0000${rule.scope.toolName}`;
      for (const c of rule.scope.constraints) {
        const entry = index.get(key) ?? { fields: [], roots: [], valueFields: [] };
        if (c.op === 'pathUnder') {
          if (!entry.fields.includes(c.field)) entry.fields.push(c.field);
          if (!entry.roots.includes(c.value)) entry.roots.push(c.value);
        } else if (c.op === 'matches' || c.op === 'equals' || c.op === 'oneOf') {
          if (!entry.valueFields.includes(c.field)) entry.valueFields.push(c.field);
        } else continue;
        index.set(key, entry);
      }
    }
    pathRuleIndex.set(state.user, index);
  }
  return index.get(`${serverId}\u0000${toolName}`) ?? NO_RULES;
}

/** Path rules per (server, tool), built once per rule array (rules are replaced, never mutated). */
const pathRuleIndex = new WeakMap<readonly unknown[], Map<string, { fields: string[]; roots: string[]; valueFields: string[] }>>();
const NO_FIELDS = Object.freeze([]) as readonly string[];
const NO_RULES: PathRules = Object.freeze({ fields: NO_FIELDS, roots: NO_FIELDS, valueFields: NO_FIELDS });
