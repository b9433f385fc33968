/**
 * The impure step before `decide`: turns validated arguments into the normalized view the policy
 * reads (path-like fields resolved through symlinks). What is *sent* stays the stored original;
 * the server resolves the same paths the same way, so the policy judges what will really happen.
 */
import type { PolicyState } from '../../../shared/domain/policy';
import { resolveSymlinks, type PathFs, type PathSemantics } from './paths';

/** Argument names treated as paths even without a path rule (the schema cannot say "this is a path"). */
const PATH_LIKE_NAME = /(^|[_-])(path|paths|file|filename|filepath|dir|directory|folder|cwd|root|source|destination|dest|target)$/i;

/** Options of the normalization step. */
export interface NormalizeOptions {
  semantics: PathSemantics;
  /** The real file system (node:fs realpathSync.native), or null to skip symlink resolution. */
  fs: PathFs | null;
  /** Extra dotted fields to treat as paths (e.g. every `pathUnder` field of the rules for this tool). */
  pathFields?: readonly string[];
}

/**
 * Returns a normalized copy of `args` for the policy: path-like strings symlink-resolved.
 *
 * Why: keeps `decide` pure while still honouring "symlinks where the path exists" (DESIGN.md §3).
 */
export function normalizeArgumentsForPolicy(args: Readonly<Record<string, unknown>>, options: NormalizeOptions): Readonly<Record<string, unknown>> {
  // Without a file system there is nothing to resolve; decide() never mutates its input.
  if (!options.fs) return args;
  // Nothing path-like to resolve (the common case): the input as is, no copy.
  if (!needsResolution(args, options.pathFields)) return args;
  const copy = structuredClone(args) as Record<string, unknown>;
  const fs = options.fs;
  const fix = (v: unknown): unknown => (typeof v === 'string' ? resolveSymlinks(v, options.semantics, fs) : Array.isArray(v) ? v.map(fix) : v);
  for (const [k, v] of Object.entries(copy)) {
    if (PATH_LIKE_NAME.test(k)) copy[k] = fix(v);
  }
  for (const dotted of options.pathFields ?? []) {
    const parts = dotted.split('.');
    let parent: unknown = copy;
    for (const part of parts.slice(0, -1)) {
      parent = parent && typeof parent === 'object' ? (parent as Record<string, unknown>)[part] : undefined;
    }
    const last = parts[parts.length - 1]!;
    if (parent && typeof parent === 'object' && Object.prototype.hasOwnProperty.call(parent, last)) {
      (parent as Record<string, unknown>)[last] = fix((parent as Record<string, unknown>)[last]);
    }
  }
  return copy;
}

/** True when some field would be rewritten: a path-like name holding a string or array, or an explicit path field. */
function needsResolution(args: Readonly<Record<string, unknown>>, pathFields: readonly string[] | undefined): boolean {
  if (pathFields && pathFields.length > 0) return true;
  for (const k in args) {
    if (!Object.prototype.hasOwnProperty.call(args, k)) continue;
    const v = args[k];
    if ((typeof v === 'string' || Array.isArray(v)) && PATH_LIKE_NAME.test(k)) return true;
  }
  return false;
}

/**
 * Every dotted field any `pathUnder` or `matches` rule for this tool inspects.
 *
 * Why: those fields must be symlink-resolved even when their names do not look like paths.
 */
export function pathFieldsFor(state: PolicyState, serverId: string, toolName: string): readonly string[] {
  let index = pathFieldIndex.get(state.user);
  if (!index) {
    index = new Map();
    for (const rule of state.user) {
      if (rule.scope.kind !== 'tool-constraint') continue;
      const key = `${rule.scope.serverId}\u0000${rule.scope.toolName}`;
      for (const c of rule.scope.constraints) {
        if (c.op !== 'pathUnder') continue;
        const list = index.get(key) ?? [];
        if (!list.includes(c.field)) list.push(c.field);
        index.set(key, list);
      }
    }
    pathFieldIndex.set(state.user, index);
  }
  return index.get(`${serverId}\u0000${toolName}`) ?? NO_FIELDS;
}

/** Path fields per (server, tool), built once per rule array (rules are replaced, never mutated). */
const pathFieldIndex = new WeakMap<readonly unknown[], Map<string, string[]>>();
const NO_FIELDS: readonly string[] = Object.freeze([]);
