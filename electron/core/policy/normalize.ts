/**
 * The impure step before `decide`: turns validated arguments into the normalized view the policy
 * reads (path-like fields resolved as the operating system will open them). What is *sent* stays
 * the stored original; the server resolves the same paths the same way, so the policy judges what
 * will really happen.
 */
import type { PolicyState } from '../../../shared/domain/policy';
import { normalizePolicyPath, resolvePathLikeKernel, type PathFs, type PathSemantics } from './paths';

/** Argument names treated as paths even without a path rule (the schema cannot say "this is a path"). */
const PATH_LIKE_NAME = /(^|[_-])(path|paths|file|filename|filepath|dir|directory|folder|cwd|root|source|destination|dest|target)$/i;

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
   * Every string field read as a path (a path-like name, or a field a `pathUnder` rule reads):
   * the value as written, and where the server will open it (null when that cannot be known).
   * A `matches` glob is judged on both (see the engine).
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
  // Nothing path-like to resolve (the common case): the input as is, no copy.
  if (!options.fs && pathFields.length === 0) return { arguments: args, unresolvedPaths: NO_PROBLEMS, pathRoots: roots, refused: null, pathValues: NO_PATHS };
  if (!needsResolution(args, pathFields)) return { arguments: args, unresolvedPaths: NO_PROBLEMS, pathRoots: roots, refused: null, pathValues: NO_PATHS };
  const copy = structuredClone(args) as Record<string, unknown>;
  const unresolved = new Map<string, string>();
  const pathValues = new Map<string, PathValue>();
  let refused: string | null = null;
  const working = options.workingFolder ?? null;

  // Path-like names without a rule: only absolute paths, and only where they resolve.
  if (options.fs) {
    const fs = options.fs;
    const fix = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(fix);
      if (typeof v !== 'string') return v;
      const r = resolvePathLikeKernel(v, options.semantics, fs);
      return r.ok ? r.path : v;
    };
    for (const [k, v] of Object.entries(copy)) {
      if (!PATH_LIKE_NAME.test(k) || pathFields.includes(k)) continue;
      if (typeof v !== 'string') {
        copy[k] = fix(v);
        continue;
      }
      // The value the other constraints read is as before (absolute paths resolved, relative ones
      // as written); a glob also sees where a relative one leads from the server's working folder.
      const r = resolvePathLikeKernel(v, options.semantics, fs, working);
      if (r.ok && normalizePolicyPath(v, options.semantics) !== null) copy[k] = r.path;
      pathValues.set(k, r.ok ? { written: v, opened: r.path } : { written: v, opened: null, why: r.why });
    }
  }

  // Fields a path rule reads: resolved from the working folder; what cannot be placed is reported.
  for (const dotted of pathFields) {
    const parts = dotted.split('.');
    let parent: unknown = copy;
    for (const part of parts.slice(0, -1)) {
      parent = parent && typeof parent === 'object' ? (parent as Record<string, unknown>)[part] : undefined;
    }
    const last = parts[parts.length - 1]!;
    if (!parent || typeof parent !== 'object' || !Object.prototype.hasOwnProperty.call(parent, last)) continue;
    const value = (parent as Record<string, unknown>)[last];
    if (typeof value !== 'string') continue;
    const r = resolvePathLikeKernel(value, options.semantics, options.fs, working);
    pathValues.set(dotted, r.ok ? { written: value, opened: r.path } : { written: value, opened: null, why: r.why });
    if (r.ok) {
      (parent as Record<string, unknown>)[last] = r.path;
    } else if (r.kind === 'loop') {
      refused ??= `arguments.${dotted}: ${r.why}`;
    } else {
      unresolved.set(dotted, `arguments.${dotted} ${JSON.stringify(value)} ${r.why}`);
    }
  }
  return { arguments: copy, unresolvedPaths: unresolved.size ? unresolved : NO_PROBLEMS, pathRoots: roots, refused, pathValues: pathValues.size ? pathValues : NO_PATHS };
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

/** True when some field would be rewritten: a path-like name holding a string or array, or an explicit path field. */
function needsResolution(args: Readonly<Record<string, unknown>>, pathFields: readonly string[]): boolean {
  if (pathFields.length > 0) return true;
  for (const k in args) {
    if (!Object.prototype.hasOwnProperty.call(args, k)) continue;
    const v = args[k];
    if ((typeof v === 'string' || Array.isArray(v)) && PATH_LIKE_NAME.test(k)) return true;
  }
  return false;
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

/** One path argument of a call: where it is, as written, and where the server will open it. */
export interface ArgumentPath {
  field: string;
  written: string;
  opened: string | null;
  why?: string;
}

/** Deepest nesting searched for path arguments (arguments are at most 1 MiB of JSON anyway). */
const MAX_PATH_DEPTH = 16;
/** Most path arguments judged in one call; more is judged as one whose place cannot be known. */
const MAX_ARGUMENT_PATHS = 1000;

/**
 * Every path argument of a call, for a server whose folders are a wall: each field with a
 * path-like name at any depth (a string, or each string of a list), resolved as the server will
 * open it — symlinks followed, a relative path from the server's working folder, and one whose
 * place cannot be known reported with why.
 *
 * Why every depth and every list item: a wall that only read top-level strings would be walked
 * around by `{"options": {"path": "/etc"}}` or `{"paths": ["/etc/passwd"]}`.
 */
export function argumentPathsOf(args: Readonly<Record<string, unknown>>, options: Pick<NormalizeOptions, 'semantics' | 'fs' | 'workingFolder'>): ArgumentPath[] {
  const out: ArgumentPath[] = [];
  const working = options.workingFolder ?? null;
  const judge = (field: string, value: string) => {
    if (out.length >= MAX_ARGUMENT_PATHS) {
      if (out.length === MAX_ARGUMENT_PATHS) out.push({ field, written: value, opened: null, why: `is one of more than ${MAX_ARGUMENT_PATHS} paths in one call, more than Warden checks` });
      return;
    }
    const r = resolvePathLikeKernel(value, options.semantics, options.fs, working);
    out.push(r.ok ? { field, written: value, opened: r.path } : { field, written: value, opened: null, why: r.why });
  };
  const walk = (v: unknown, field: string, pathLike: boolean, depth: number) => {
    if (depth > MAX_PATH_DEPTH) return;
    if (typeof v === 'string') {
      if (pathLike) judge(field, v);
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${field}.${i}`, pathLike, depth + 1));
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) walk(child, field ? `${field}.${k}` : k, PATH_LIKE_NAME.test(k), depth + 1);
    }
  };
  walk(args, '', false, 0);
  return out;
}

/**
 * The top-level arguments of a tool's input schema that read as paths (by name), for the matrix:
 * a tool with none of them is not touched by its server's folder wall.
 */
export function pathArgumentNames(inputSchema: Readonly<Record<string, unknown>> | undefined): string[] {
  const props = inputSchema?.properties;
  if (!props || typeof props !== 'object') return [];
  return Object.keys(props).filter((k) => PATH_LIKE_NAME.test(k));
}
