/**
 * How a path resolves: the one place Warden works out where a path argument leads, with POSIX and
 * Windows semantics. What counts as a path in the first place is `./arguments.ts`.
 *
 * The pure half (`normalizePolicyPath`, `isPathUnder`) resolves `.`/`..`, duplicate separators
 * and case rules; the impure half (`resolvePathLikeKernel`) reads the file system and runs BEFORE
 * the policy's `decide`, so the engine stays pure.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';

export type PathSemantics = 'posix' | 'win32';

/**
 * Most symbolic links followed while resolving one path: Linux's MAXSYMLINKS (macOS allows 32,
 * Windows 63). More means a loop, or a chain the system would refuse to open as well.
 */
export const MAX_SYMLINKS = 40;

/**
 * Normalizes an absolute path: resolves `.`/`..`, collapses separators, drops a trailing separator,
 * folds case when the file system is case-insensitive. Returns null for relative paths.
 *
 * Why: `/project/docs/../secrets/x` must never count as "under /project/docs". A relative path has
 * no place without a working folder; the normalization step resolves it against the server's
 * when that is known, and the engine judges any left over by the strictest rule it could match.
 */
export function normalizePolicyPath(p: string, semantics: PathSemantics, caseInsensitive = semantics === 'win32'): string | null {
  const candidate = absoluteCandidate(p, semantics);
  if (candidate === null) return null;
  const lib = semantics === 'win32' ? path.win32 : path.posix;
  let normalized = lib.resolve(candidate);
  const root = lib.parse(normalized).root;
  if (normalized.length > root.length && normalized.endsWith(lib.sep)) normalized = normalized.slice(0, -1);
  return caseInsensitive ? normalized.toLowerCase() : normalized;
}

/**
 * The path a string names if it is a usable absolute path (a `file:` URL is read as the path it
 * names), else null.
 */
function absoluteCandidate(p: string, semantics: PathSemantics): string | null {
  if (p.includes('\u0000')) return null;
  const lib = semantics === 'win32' ? path.win32 : path.posix;
  let candidate = p;
  if (/^file:/i.test(candidate)) {
    const named = fileUrlPath(candidate, semantics);
    if (named === null) return null;
    candidate = named;
  }
  if (!lib.isAbsolute(candidate)) return null;
  // win32: a rooted path without a drive ("\\x") is relative to the current drive: not absolute.
  if (semantics === 'win32' && !/^([a-zA-Z]:[\\/]|[\\/]{2}[^\\/])/.test(candidate)) return null;
  return candidate;
}

/**
 * The path a `file:` URL names, decoded, or null when it names none this computer can place: a
 * malformed URL, or (outside Windows, where `file://host/share` is a UNC path) a file on another
 * host, which only that host could say where it is.
 */
function fileUrlPath(raw: string, semantics: PathSemantics): string | null {
  let url: URL;
  let pathname: string;
  try {
    url = new URL(raw);
    pathname = decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\u0000')) return null;
  const host = url.hostname.toLowerCase();
  if (semantics === 'win32') {
    if (host !== '' && host !== 'localhost') return `\\\\${url.hostname}${pathname.replace(/\//g, '\\')}`;
    // file:///C:/x names C:\x; file:///x (no drive) is relative to the current drive.
    return /^\/[a-zA-Z]:/.test(pathname) ? pathname.slice(1) : pathname;
  }
  return host === '' || host === 'localhost' ? pathname : null;
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

/** The file-system reads path resolution needs (node:fs's synchronous calls), injected so tests can fake a platform. */
export interface PathFs {
  /** Real path of an existing path; throws (with a `code`) if it cannot be resolved. */
  realpath(p: string): string;
  /** What is at `p` itself, not following a final symlink; throws (ENOENT, ENOTDIR, EACCES, ...) if nothing can be read there. */
  lstat(p: string): { isSymbolicLink(): boolean };
  /** The target a symlink stores, as written (relative targets are relative to the link's folder). */
  readlink(p: string): string;
}

/** Where a path really leads, or why that cannot be known. */
export type PathResolution =
  | { ok: true; path: string }
  /**
   * `loop`: more than MAX_SYMLINKS links (the system refuses such a path too);
   * `unknown`: relative with no working folder, unreadable folder, not a usable path.
   */
  | { ok: false; kind: 'loop' | 'unknown'; why: string };

/**
 * Resolves a path the way the operating system will when a server opens it: relative paths from
 * the server's working folder (when known), then every symlink where the path exists.
 *
 * POSIX (Linux, macOS): component by component, following each symlink before the next `..` is
 * applied, because the kernel does: with `docs/link → /outside/inner`, `docs/link/../x` opens
 * `/outside/x`, not `docs/x`. Windows applies `.` and `..` to the string before the file system
 * sees it (Win32 path normalization), so win32 semantics resolve `..` first and then follow links.
 * Past the first component that does not exist nothing can be a link yet, so the rest is
 * appended as written; the existing part is finally put in its on-disk form (`realpath`: case on
 * macOS and Windows, short names, junctions).
 */
export function resolvePathLikeKernel(raw: string, semantics: PathSemantics, fs: PathFs | null, workingFolder: string | null = null): PathResolution {
  const lib = semantics === 'win32' ? path.win32 : path.posix;
  const absolute = absoluteFrom(raw, semantics, workingFolder);
  if (!absolute.ok) return absolute;
  if (!fs) return { ok: true, path: lib.resolve(absolute.path) };
  if (semantics === 'win32') return canonical(lib.resolve(absolute.path), lib, fs);

  let done = '/';
  // Components still to walk, last one first (a link's target is pushed on top of the rest).
  const pending = absolute.path.split('/').reverse();
  let links = 0;
  let missing = false;
  while (pending.length > 0) {
    const part = pending.pop()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      done = lib.dirname(done);
      continue;
    }
    const next = done === '/' ? `/${part}` : `${done}/${part}`;
    if (missing) {
      done = next;
      continue;
    }
    let isLink: boolean;
    try {
      isLink = fs.lstat(next).isSymbolicLink();
    } catch (error) {
      const code = errorCode(error);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return unreadable(next, error);
      missing = true;
      done = next;
      continue;
    }
    if (!isLink) {
      done = next;
      continue;
    }
    if (++links > MAX_SYMLINKS) return loop(raw, next);
    let target: string;
    try {
      target = fs.readlink(next);
    } catch (error) {
      return unreadable(next, error);
    }
    if (target.startsWith('/')) done = '/';
    pending.push(...target.split('/').reverse());
  }
  return canonical(done, lib, fs, raw);
}

/** The absolute path a raw argument names, from the working folder if it is relative. */
function absoluteFrom(written: string, semantics: PathSemantics, workingFolder: string | null): PathResolution {
  const direct = absoluteCandidate(written, semantics);
  if (direct !== null) return { ok: true, path: direct };
  if (written.includes('\u0000')) return { ok: false, kind: 'unknown', why: 'contains a NUL character' };
  let raw = written;
  if (/^file:/i.test(raw)) {
    // Never read as a relative name "file:…" from the working folder: the server opens the URL.
    const named = fileUrlPath(raw, semantics);
    if (named === null) return { ok: false, kind: 'unknown', why: 'is a file: URL that names a file on another computer, or cannot be read' };
    raw = named;
  }
  // A leading ~ is a home folder to many servers (and a plain name to the kernel): either may be meant.
  if (/^~/.test(raw)) return { ok: false, kind: 'unknown', why: `starts with "~", which a server may read as a home folder` };
  const lib = semantics === 'win32' ? path.win32 : path.posix;
  const base = workingFolder !== null ? absoluteCandidate(workingFolder, semantics) : null;
  if (base === null) return { ok: false, kind: 'unknown', why: "is a relative path and the server's working folder is unknown" };
  if (semantics === 'win32') {
    // "C:x" is relative to drive C's own current folder, which only the server process knows.
    const drive = /^([a-zA-Z]):(?![\\/])/.exec(raw)?.[1];
    const baseDrive = /^([a-zA-Z]):/.exec(base)?.[1];
    if (drive !== undefined && drive.toLowerCase() !== baseDrive?.toLowerCase()) {
      return { ok: false, kind: 'unknown', why: `is relative to drive ${drive.toUpperCase()}:'s current folder, which Warden cannot know` };
    }
  }
  // Windows folds "." and ".." in the string before the file system sees it, so resolving there
  // is what the system does. POSIX kernels walk ".." after the link before it: the working folder
  // and the relative path are only joined, and the walk in resolvePathLikeKernel applies them.
  if (semantics === 'win32') return { ok: true, path: lib.resolve(base, raw) };
  return { ok: true, path: `${base}/${raw}` };
}

/**
 * A path with no `..` and no symlinks left in its existing part, put in on-disk form: the longest
 * existing ancestor through `realpath`, the rest appended. Only "does not exist" walks up; a loop
 * or an unreadable folder is reported, never guessed past.
 */
function canonical(resolved: string, lib: typeof path.posix, fs: PathFs, raw = resolved): PathResolution {
  const rest: string[] = [];
  let current = resolved;
  for (;;) {
    try {
      const real = fs.realpath(current);
      return { ok: true, path: rest.length ? lib.join(real, ...rest.reverse()) : real };
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ELOOP') return loop(raw, current);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return unreadable(current, error);
      const parent = lib.dirname(current);
      if (parent === current) return { ok: true, path: resolved };
      rest.push(lib.basename(current));
      current = parent;
    }
  }
}

function loop(raw: string, at: string): PathResolution {
  return { ok: false, kind: 'loop', why: `too many levels of symbolic links at ${at} while resolving ${JSON.stringify(raw)} (a symlink loop; the system would refuse to open it too)` };
}

function unreadable(at: string, error: unknown): PathResolution {
  // Clipped: the reason is journaled with the decision, and a path can be as long as an argument.
  const where = at.length > 200 ? `${at.slice(0, 200)}…` : at;
  return { ok: false, kind: 'unknown', why: `cannot be resolved: ${where} could not be read (${errorCode(error) ?? (error instanceof Error ? error.message : String(error))})` };
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The folder a process spawned with `cwd` (relative to ours, or ours when unset) opens relative
 * paths from, as the path to walk: on POSIX the child's chdir walks it component by component,
 * so its `..` is left for `resolvePathLikeKernel` rather than folded as text; Windows folds it
 * in the string, as `path.win32.resolve` does.
 */
export function spawnedWorkingFolder(cwd: string | undefined, platform: NodeJS.Platform = process.platform): string {
  const here = process.cwd();
  if (platform === 'win32') return path.win32.resolve(here, cwd ?? '.');
  if (cwd === undefined) return here;
  return path.posix.isAbsolute(cwd) ? cwd : `${here}/${cwd}`;
}

/**
 * The host's path semantics with real symlink resolution.
 *
 * Why the default: "symlinks where the path exists" is part of the path-rule guarantee; only tests
 * that force Windows semantics on a POSIX host pass their own.
 */
export function hostPaths(): { semantics: PathSemantics; fs: PathFs } {
  return {
    semantics: process.platform === 'win32' ? 'win32' : 'posix',
    fs: { realpath: (p) => realpathSync.native(p), lstat: (p) => lstatSync(p), readlink: (p) => readlinkSync(p, 'utf8') },
  };
}
