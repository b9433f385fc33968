/**
 * Path normalization for argument constraints, with POSIX and Windows semantics.
 *
 * The pure half (`normalizePolicyPath`, `isPathUnder`) resolves `.`/`..`, duplicate separators
 * and case rules; the impure half (`resolveSymlinks`) reads the file system and runs BEFORE
 * `decide`, so the engine stays pure.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';

export type PathSemantics = 'posix' | 'win32';

/**
 * Normalizes an absolute path: resolves `.`/`..`, collapses separators, drops a trailing separator,
 * folds case when the file system is case-insensitive. Returns null for relative paths.
 *
 * Why: `/project/docs/../secrets/x` must never count as "under /project/docs"; a relative path
 * has no meaning without a cwd the client cannot know, so it matches no path rule.
 */
export function normalizePolicyPath(p: string, semantics: PathSemantics, caseInsensitive = semantics === 'win32'): string | null {
  if (p.includes('\u0000')) return null;
  const lib = semantics === 'win32' ? path.win32 : path.posix;
  let candidate = p;
  if (semantics === 'posix' && /^file:\/\//i.test(candidate)) {
    try {
      candidate = decodeURIComponent(new URL(candidate).pathname);
    } catch {
      return null;
    }
  }
  if (!lib.isAbsolute(candidate)) return null;
  // win32: a rooted path without a drive ("\\x") is relative to the current drive: reject.
  if (semantics === 'win32' && !/^([a-zA-Z]:[\\/]|[\\/]{2}[^\\/])/.test(candidate)) return null;
  let normalized = lib.resolve(candidate);
  const root = lib.parse(normalized).root;
  if (normalized.length > root.length && normalized.endsWith(lib.sep)) normalized = normalized.slice(0, -1);
  return caseInsensitive ? normalized.toLowerCase() : normalized;
}

/**
 * True if `candidate` is `root` or inside it, after normalization of both.
 *
 * Why: prefix checks on raw strings are the classic bypass (`/project/docs-evil`, `..`); this
 * compares whole path segments.
 */
export function isPathUnder(candidate: string, root: string, semantics: PathSemantics, caseInsensitive = semantics === 'win32'): boolean {
  const c = normalizePolicyPath(candidate, semantics, caseInsensitive);
  const r = normalizePolicyPath(root, semantics, caseInsensitive);
  if (c === null || r === null) return false;
  if (c === r) return true;
  const sep = semantics === 'win32' ? '\\' : '/';
  const prefix = r.endsWith(sep) ? r : r + sep;
  return c.startsWith(prefix);
}

/** The file-system reads symlink resolution needs, injected so tests can use a real temp dir. */
export interface PathFs {
  /** Real path of an existing path; throws if it does not exist. */
  realpath(p: string): string;
}

/**
 * Resolves symlinks in an absolute path where the path (or its longest existing ancestor) exists.
 *
 * Why: a link `/project/docs/link → /etc` would otherwise let `/project/docs/link/passwd` pass a
 * "under /project/docs" rule. For a path that does not exist yet, the existing ancestor is
 * resolved and the rest appended, so a new file inside a linked folder is judged by where it lands.
 */
export function resolveSymlinks(p: string, semantics: PathSemantics, fs: PathFs): string {
  const lib = semantics === 'win32' ? path.win32 : path.posix;
  if (!lib.isAbsolute(p)) return p;
  const resolved = lib.resolve(p);
  const rest: string[] = [];
  let current = resolved;
  for (;;) {
    try {
      const real = fs.realpath(current);
      return rest.length ? lib.join(real, ...rest.reverse()) : real;
    } catch {
      const parent = lib.dirname(current);
      if (parent === current) return resolved;
      rest.push(lib.basename(current));
      current = parent;
    }
  }
}

/**
 * The host's path semantics with real symlink resolution.
 *
 * Why the default: "symlinks where the path exists" is part of the path-rule guarantee; only tests
 * that force Windows semantics on a POSIX host pass their own.
 */
export function hostPaths(): { semantics: PathSemantics; fs: PathFs } {
  return { semantics: process.platform === 'win32' ? 'win32' : 'posix', fs: { realpath: (p) => realpathSync.native(p) } };
}
