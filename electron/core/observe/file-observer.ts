/**
 * The local-files observer: what a call to a server on this computer really did to the paths it
 * named, read by Warden itself (never by asking the server being checked).
 *
 * Which strings are paths is the policy's one definition (`argumentPathsOf` in
 * electron/core/paths/arguments.ts), resolved where the server opens them (relative paths from
 * its working folder). A remote or built-in server has no working folder here: its paths name
 * another machine or nothing at all, so nothing is observed, and a call with no path pays
 * nothing (no watch is made).
 *
 * For each target Warden records, before the call is sent and after it ended, whether it exists,
 * what it is (file, folder, symlink), where it leads with every symlink followed, its size,
 * modification time and the SHA-256 of its bytes; and, for server-filesystem's write, edit, move
 * and create-directory tools, what the approved arguments say should be there afterwards. The
 * targets' folders are listed too (names, sizes and times, never contents), when they are small
 * enough: only then may the scope say that nothing else there changed.
 *
 * Every read is asynchronous (libuv's thread pool) and a file is hashed as a stream, so the
 * event loop is never held by the disk; what could not be read is said, never guessed.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ObservedTarget, OpObservation, PathFacts } from '../../../shared/domain/observation';
import type { CallObserver, CallWatch, ObservedCall, ObservedEnding } from '../gate/ports';
import { argumentPathsOf } from '../paths/arguments';
import type { PathSemantics } from '../paths/resolve';

/** Options of the local-files observer (defaults fit a desktop). */
export interface FileObserverOptions {
  semantics?: PathSemantics;
  /** Largest file hashed (bytes); a larger one is reported with its size and time only. */
  maxHashBytes?: number;
  /** Most entries of a folder listed; a larger folder is not checked, and the scope says so. */
  maxFolderEntries?: number;
  /** Most targets of one call observed; the rest are named as not checked. */
  maxTargets?: number;
  now?: () => number;
}

const DEFAULTS = { maxHashBytes: 64 * 1024 * 1024, maxFolderEntries: 256, maxTargets: 16 } as const;
/**
 * Bytes hashed per read: each read is one trip to the thread pool, and hashing one chunk holds the
 * loop for about a millisecond per MiB, so larger files are hashed a slice at a time between reads.
 */
const HASH_CHUNK_BYTES = 1024 * 1024;
/** Largest file read whole to apply an edit's replacements to (the approved new content). */
const MAX_EDIT_BYTES = 4 * 1024 * 1024;

/** What the approved arguments say one target should be after the call. */
type Expectation = { kind: 'content'; sha256: string } | { kind: 'directory' } | { kind: 'absent' } | { kind: 'none' } | { kind: 'same-as'; field: string };

interface Target {
  field: string;
  /** Where the server opens it, as the policy resolved it as text. */
  shown: string;
  /** The path as the kernel will walk it (symlinks before `..`), for reading. */
  read: string;
  expectation: Expectation;
  before: PathFacts | null;
}

/** The local-files observer (a `CallObserver` for the gate). */
export function createFileObserver(options: FileObserverOptions = {}): CallObserver {
  const semantics = options.semantics ?? (process.platform === 'win32' ? 'win32' : 'posix');
  const limits = { maxHashBytes: options.maxHashBytes ?? DEFAULTS.maxHashBytes, maxFolderEntries: options.maxFolderEntries ?? DEFAULTS.maxFolderEntries, maxTargets: options.maxTargets ?? DEFAULTS.maxTargets };
  const now = options.now ?? Date.now;
  return {
    watch(call: ObservedCall): CallWatch | null {
      const working = call.tool?.workingFolder;
      // Only a program on this computer opens paths here; a remote server's paths name another machine.
      if (working === undefined) return null;
      // Resolved as text only (no disk read on the call's path): the reads below follow the links.
      const found = argumentPathsOf(call.args, call.tool?.inputSchema, { semantics, fs: null, workingFolder: working });
      const places = found.filter((p): p is typeof p & { opened: string } => p.opened !== null);
      if (places.length === 0) return null;
      const kept = places.slice(0, limits.maxTargets);
      const known = call.tool?.serverKind === 'filesystem';
      const targets: Target[] = kept.map((p) => ({
        field: p.field,
        shown: p.opened,
        read: kernelPath(p.written, p.opened, working, semantics),
        expectation: known ? expectationOf(call.toolName, p.field, call.args) : { kind: 'none' },
        before: null,
      }));
      return new FileWatch(call, targets, places.length - kept.length, limits, now);
    },
  };
}

class FileWatch implements CallWatch {
  private folders: Map<string, Map<string, string> | null> = new Map();
  private spentMs = 0;

  constructor(
    private readonly call: ObservedCall,
    private readonly targets: Target[],
    private readonly leftOut: number,
    private readonly limits: { maxHashBytes: number; maxFolderEntries: number },
    private readonly now: () => number,
  ) {}

  async before(): Promise<void> {
    const began = performance.now();
    // The targets and their folders are read together: each read waits on the thread pool, not on the others.
    const [, folders] = await Promise.all([Promise.all(this.targets.map(async (t) => (t.before = await factsOf(t.read, this.limits.maxHashBytes)))), this.listFolders()]);
    this.folders = folders;
    for (const t of this.targets) t.expectation = await this.settleExpectation(t);
    this.spentMs += performance.now() - began;
  }

  async after(ending: ObservedEnding): Promise<OpObservation> {
    const began = performance.now();
    const [after, foldersAfter] = await Promise.all([Promise.all(this.targets.map((t) => factsOf(t.read, this.limits.maxHashBytes))), this.listFolders()]);
    const observed = this.targets.map((t, i) => judge(t, after[i]!));
    const otherChanges = this.otherChanges(foldersAfter, after);
    const foldersChecked = [...this.folders.values()].every((f) => f !== null) && [...foldersAfter.values()].every((f) => f !== null);
    this.spentMs += performance.now() - began;
    const one = this.targets.length === 1;
    const notChecked = this.leftOut > 0 ? `; ${this.leftOut} more path${this.leftOut === 1 ? '' : 's'} of this call not checked` : '';
    const scope = foldersChecked
      ? `${one ? 'this path' : 'these paths'} and the list of the other entries in ${one ? 'its folder' : 'their folders'} (names, sizes and times, not their contents); nothing outside ${one ? 'that folder' : 'those folders'} was checked${notChecked}`
      : `${one ? 'this path only' : 'these paths only'}; other files not checked${notChecked}`;
    const words = observed.map((o) => o.words);
    if (otherChanges.length > 0) words.push(`Other entries of the folder changed while the call ran: ${otherChanges.join(', ')} (Warden cannot tell who changed them).`);
    else if (foldersChecked) words.push('Nothing else in the folder changed.');
    if (ending === 'outcome_unknown') words.unshift('The server never answered.');
    return {
      operationId: this.call.operationId,
      observer: 'local-files',
      source: 'Warden read the files itself, not through the server',
      scope,
      targets: observed,
      otherChanges,
      foldersChecked,
      summary: words.join(' '),
      tookMs: Math.round(this.spentMs * 100) / 100,
      at: this.now(),
    };
  }

  /** A move's destination should hold what its source held before; an edit, its replacements applied. */
  private async settleExpectation(t: Target): Promise<Expectation> {
    const e = t.expectation;
    if (e.kind === 'same-as') {
      const source = this.targets.find((x) => x.field === e.field)?.before;
      if (source?.exists && source.sha256) return { kind: 'content', sha256: source.sha256 };
      if (source?.exists && source.type === 'dir') return { kind: 'directory' };
      return { kind: 'none' };
    }
    if (e.kind === 'none' && this.call.toolName === 'edit_file' && t.field === 'path' && t.before?.exists) {
      const edited = await editedContent(t.read, this.call.args);
      return edited === null ? e : { kind: 'content', sha256: sha256Hex(edited) };
    }
    return e;
  }

  /** Each target's folder listed (entry → type, size, time), or null when it is too large or unreadable. */
  private async listFolders(): Promise<Map<string, Map<string, string> | null>> {
    const out = new Map<string, Map<string, string> | null>();
    for (const t of this.targets) {
      const folder = path.dirname(t.read);
      if (!out.has(folder)) out.set(folder, null);
    }
    await Promise.all([...out.keys()].map(async (folder) => out.set(folder, await listFolder(folder, this.limits.maxFolderEntries))));
    return out;
  }

  /** Entries of the listed folders that changed and are none of the call's targets (nor where they led). */
  private otherChanges(after: Map<string, Map<string, string> | null>, targetsAfter: readonly PathFacts[]): string[] {
    const mine = new Set<string>();
    this.targets.forEach((t, i) => {
      mine.add(path.join(path.dirname(t.read), path.basename(t.read)));
      for (const f of [t.before, targetsAfter[i]]) if (f?.resolved) mine.add(f.resolved);
    });
    const changed: string[] = [];
    for (const [folder, before] of this.folders) {
      const now = after.get(folder);
      if (!before || !now) continue;
      for (const name of new Set([...before.keys(), ...now.keys()])) {
        const full = path.join(folder, name);
        if (before.get(name) === now.get(name) || mine.has(full)) continue;
        changed.push(full);
      }
    }
    return changed.sort();
  }
}

/** One target's before and after judged against what was approved. */
function judge(t: Target, after: PathFacts): ObservedTarget {
  const before = t.before;
  const changed = before === null || !sameFacts(before, after);
  const retargeted = before !== null && before.resolved !== null && after.resolved !== null && before.resolved !== after.resolved;
  const e = t.expectation;
  let matches: boolean | null = null;
  let expectedSha256: string | null = null;
  if (e.kind === 'content') {
    expectedSha256 = e.sha256;
    matches = after.exists && after.sha256 === e.sha256;
  } else if (e.kind === 'directory') matches = after.exists && (after.type === 'dir' || (after.type === 'symlink' && after.resolved !== null && after.mtimeMs !== null && after.size === null));
  else if (e.kind === 'absent') matches = !after.exists;
  const words: string[] = [];
  if (retargeted) words.push(`${t.shown} led to ${before!.resolved} before the call and to ${after.resolved} after it.`);
  words.push(describe(t.shown, before, after, e, matches));
  return {
    field: t.field,
    path: t.shown,
    before,
    after,
    expected: e.kind === 'same-as' ? 'none' : e.kind,
    expectedSha256,
    matches,
    changed,
    retargeted,
    words: words.join(' '),
  };
}

function describe(shown: string, before: PathFacts | null, after: PathFacts, e: Expectation, matches: boolean | null): string {
  const now = factWords(after);
  if (e.kind === 'content') {
    if (matches) return `${shown} holds exactly the approved content (${after.size} bytes, SHA-256 ${short(after.sha256)}).`;
    if (!after.exists) return `${shown} does not exist, so it does not hold the approved content.`;
    if (before && sameFacts(before, after)) return `${shown} is unchanged: it does not hold the approved content (it holds ${now}).`;
    return `${shown} does not hold the approved content: it holds ${now}, not the approved SHA-256 ${short(e.sha256)}.`;
  }
  if (e.kind === 'directory') return matches ? `${shown} is a folder, as approved.` : `${shown} is not a folder: ${after.exists ? now : 'nothing is there'}.`;
  if (e.kind === 'absent') return matches ? `${shown} is gone, as a move leaves it.` : `${shown} is still there (${now}).`;
  if (before && sameFacts(before, after)) return `${shown} is unchanged (${after.exists ? now : 'nothing there'}).`;
  return `${shown} was ${before ? (before.exists ? factWords(before) : 'absent') : 'not read before the call'} and is now ${after.exists ? now : 'absent'}.`;
}

function factWords(f: PathFacts): string {
  if (!f.exists) return 'nothing';
  if (f.unreadable) return `something Warden could not read (${f.unreadable})`;
  if (f.sha256 !== null) return `${f.size} bytes, SHA-256 ${short(f.sha256)}`;
  if (f.type === 'dir') return 'a folder';
  if (f.size !== null) return `${f.size} bytes`;
  return f.type === 'symlink' ? 'a link that leads nowhere' : `a ${f.type ?? 'thing'}`;
}

const short = (sha: string | null): string => (sha ? `${sha.slice(0, 12)}…` : 'unknown');

function sameFacts(a: PathFacts, b: PathFacts): boolean {
  return a.exists === b.exists && a.type === b.type && a.resolved === b.resolved && a.size === b.size && a.sha256 === b.sha256 && a.mtimeMs === b.mtimeMs;
}

/** What a server-filesystem tool's approved arguments say a target should be afterwards. */
function expectationOf(toolName: string, field: string, args: Readonly<Record<string, unknown>>): Expectation {
  switch (toolName) {
    case 'write_file':
      return field === 'path' && typeof args.content === 'string' ? { kind: 'content', sha256: sha256Hex(args.content) } : { kind: 'none' };
    case 'create_directory':
      return field === 'path' ? { kind: 'directory' } : { kind: 'none' };
    case 'move_file':
      return field === 'source' ? { kind: 'absent' } : field === 'destination' ? { kind: 'same-as', field: 'source' } : { kind: 'none' };
    default:
      // edit_file's new content needs the file as it was: settled once it has been read.
      return { kind: 'none' };
  }
}

/**
 * An edit_file call's content after its edits, applied exactly as written to the file as it was
 * (a dry run leaves it as it was); null when an edit's old text is not found exactly, since the
 * server may then match loosely and Warden cannot know what it chose.
 */
async function editedContent(file: string, args: Readonly<Record<string, unknown>>): Promise<string | null> {
  const edits = args.edits;
  if (!Array.isArray(edits)) return null;
  let text: string;
  try {
    const s = await stat(file);
    if (!s.isFile() || s.size > MAX_EDIT_BYTES) return null;
    text = await readFile(file, 'utf8');
  } catch {
    return null;
  }
  if (args.dryRun === true) return text;
  for (const e of edits as Array<{ oldText?: unknown; newText?: unknown } | null>) {
    if (typeof e?.oldText !== 'string' || typeof e.newText !== 'string') return null;
    const at = text.indexOf(e.oldText);
    if (at < 0) return null;
    text = text.slice(0, at) + e.newText + text.slice(at + e.oldText.length);
  }
  return text;
}

/** The path the kernel walks (symlinks before `..`): as written from the working folder, unless written in a form only the policy's resolution reads (`~`, `file:`). */
function kernelPath(written: string, opened: string, working: string, semantics: PathSemantics): string {
  if (semantics !== 'posix' || written.startsWith('~') || /^file:/i.test(written)) return opened;
  return written.startsWith('/') ? written : `${working}/${written}`;
}

/** What is at `p` now. */
async function factsOf(p: string, maxHashBytes: number): Promise<PathFacts> {
  const none: PathFacts = { exists: false, type: null, resolved: null, size: null, sha256: null, mtimeMs: null, unreadable: null };
  let own;
  try {
    own = await lstat(p);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? none : { ...none, exists: true, unreadable: code ?? 'unreadable' };
  }
  const type = own.isSymbolicLink() ? 'symlink' : own.isFile() ? 'file' : own.isDirectory() ? 'dir' : 'other';
  const resolved = await realpath(p).catch(() => null);
  const target = type === 'symlink' ? await stat(p).catch(() => null) : own;
  if (!target) return { ...none, exists: true, type, resolved };
  const base = { exists: true, type, resolved, size: target.isDirectory() ? null : target.size, sha256: null, mtimeMs: target.mtimeMs, unreadable: null } as PathFacts;
  if (!target.isFile()) return base;
  if (target.size > maxHashBytes) return { ...base, unreadable: `larger than the ${maxHashBytes} bytes Warden hashes` };
  try {
    return { ...base, sha256: await hashFile(p) };
  } catch (error) {
    return { ...base, unreadable: (error as NodeJS.ErrnoException).code ?? 'unreadable' };
  }
}

/** SHA-256 of a file's bytes, read as a stream (the loop is never held by one large read). */
function hashFile(p: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    const stream = createReadStream(p, { highWaterMark: HASH_CHUNK_BYTES });
    stream.on('data', (chunk) => hash.update(chunk));
    stream.on('error', reject);
    stream.on('end', () => resolve(hash.digest('hex')));
  });
}

/** A folder's entries (name → type, size, time), or null when it is larger than `max` or cannot be listed. */
async function listFolder(folder: string, max: number): Promise<Map<string, string> | null> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return null;
  }
  if (names.length > max) return null;
  const out = new Map<string, string>();
  await Promise.all(
    names.map(async (name) => {
      const s = await lstat(path.join(folder, name)).catch(() => null);
      out.set(name, s ? `${s.isSymbolicLink() ? 'l' : s.isDirectory() ? 'd' : 'f'}:${s.size}:${s.mtimeMs}` : 'gone');
    }),
  );
  return out;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
