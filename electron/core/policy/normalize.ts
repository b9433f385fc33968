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
   * field a `pathUnder` rule reads: the value as written, and where the server will open it (null
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
  const found = options.fs ? pathsIn(args, options.inputSchema).paths.filter((p) => !pathFields.includes(p.field)) : [];
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
    pathValues.set(p.field, place.opened !== null ? { written: p.value, opened: place.opened } : { written: p.value, opened: null, why: place.why });
    if (place.opened !== null && normalizePolicyPath(p.value, options.semantics) !== null) setField(copy, p.field.split('.'), place.opened);
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

/** The fields and folders the `pathUnder` rules for one (server, tool) read. */
export interface PathRules {
  fields: readonly string[];
  roots: readonly string[];
}

/**
 * The fields and the folders of every `pathUnder` rule for this tool.
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
        if (c.op !== 'pathUnder') continue;
        const entry = index.get(key) ?? { fields: [], roots: [] };
        if (!entry.fields.includes(c.field)) entry.fields.push(c.field);
        if (!entry.roots.includes(c.value)) entry.roots.push(c.value);
        index.set(key, entry);
      }
    }
    pathRuleIndex.set(state.user, index);
  }
  return index.get(`${serverId}\u0000${toolName}`) ?? NO_RULES;
}

/** Path rules per (server, tool), built once per rule array (rules are replaced, never mutated). */
const pathRuleIndex = new WeakMap<readonly unknown[], Map<string, { fields: string[]; roots: string[] }>>();
const NO_RULES: PathRules = Object.freeze({ fields: Object.freeze([]) as readonly string[], roots: Object.freeze([]) as readonly string[] });
