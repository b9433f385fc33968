/**
 * Who can change the managed policy file. A policy that the person it restricts can edit,
 * replace or delete restricts nothing, so such a file is refused (and every tool forbidden)
 * instead of being obeyed. Checked for the file and for every folder above it: whoever can rename
 * a folder on the way can put another file in its place.
 *
 * - POSIX: like OpenSSH's check of its own config paths, every component must be owned by root
 *   and not writable by group or others (a group of administrators only: gid 0, and `admin` on
 *   macOS). Symbolic links are followed, and the links themselves must be root's.
 * - Windows: the owner and the access list of each path, read as SDDL through the
 *   `WindowsSecurity` port. Trusted: SYSTEM, Administrators, TrustedInstaller. Any other account
 *   or group that is allowed to write the file, change its permissions or owner, or delete or
 *   rename it (or entries of a folder on the way) makes it unprotected. Deny entries are not
 *   subtracted, so a complicated list can only err towards refusing.
 */
import { lstat, realpath, stat } from 'node:fs/promises';
import { posix, win32 } from 'node:path';

/** Reports why a path is not protected from non-administrators; [] when it is. */
export interface PolicyPathGuard {
  problems(filePath: string): Promise<string[]>;
}

// ---- POSIX --------------------------------------------------------------------------------

/** Which owners and groups count as administrators (defaults: uid 0; gid 0, plus 80 `admin` on macOS). */
export interface PosixTrust {
  platform?: NodeJS.Platform;
  uids?: readonly number[];
  gids?: readonly number[];
}

/** Owner and mode checks on the file and every folder above it, before and after following links. */
export function posixPolicyGuard(trust: PosixTrust = {}): PolicyPathGuard {
  const uids = new Set(trust.uids ?? [0]);
  const gids = new Set(trust.gids ?? ((trust.platform ?? process.platform) === 'darwin' ? [0, 80] : [0]));
  const check = (path: string, info: { uid: number; gid: number; mode: number; isSymbolicLink(): boolean }): string | null => {
    if (!uids.has(info.uid)) return `${path} is owned by uid ${info.uid}, not root`;
    if (info.isSymbolicLink()) return null; // A link's own mode means nothing; its owner does.
    if (info.mode & 0o002) return `${path} is writable by every user (mode ${(info.mode & 0o7777).toString(8)})`;
    if (info.mode & 0o020 && !gids.has(info.gid)) return `${path} is writable by group ${info.gid} (mode ${(info.mode & 0o7777).toString(8)})`;
    return null;
  };
  const chain = (path: string): string[] => {
    const out: string[] = [];
    for (let p = path; ; p = posix.dirname(p)) {
      out.push(p);
      if (p === posix.dirname(p)) return out;
    }
  };
  return {
    async problems(filePath) {
      const problems: string[] = [];
      for (const p of chain(posix.resolve(filePath))) {
        const problem = check(p, await lstat(p));
        if (problem) problems.push(problem);
      }
      const real = await realpath(filePath);
      for (const p of chain(real)) {
        const problem = check(p, await stat(p));
        if (problem && !problems.includes(problem)) problems.push(problem);
      }
      return problems;
    },
  };
}

// ---- Windows ------------------------------------------------------------------------------

/** Reads owners and access lists on Windows. */
export interface WindowsSecurity {
  /** The owner and DACL of each path as SDDL (`O:…D:…`), in the order given. */
  sddl(paths: readonly string[]): Promise<string[]>;
}

const TRUSTED_SIDS = new Set([
  'SY', // LocalSystem
  'BA', // BUILTIN\Administrators
  'S-1-5-18',
  'S-1-5-32-544',
  'S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464', // NT SERVICE\TrustedInstaller
]);

const SID_NAMES: Record<string, string> = {
  BU: 'Users',
  AU: 'Authenticated Users',
  WD: 'Everyone',
  IU: 'Interactive users',
  BG: 'Guests',
  CO: 'Creator Owner',
  OW: 'Owner Rights',
  PU: 'Power Users',
  AN: 'Anonymous',
  NU: 'Network users',
};

const RIGHT_CODES: Record<string, number> = {
  GA: 0x10000000, GR: 0x80000000, GW: 0x40000000, GX: 0x20000000,
  RC: 0x20000, SD: 0x10000, WD: 0x40000, WO: 0x80000,
  RP: 0x10, WP: 0x20, CC: 0x1, DC: 0x2, LC: 0x4, SW: 0x8, LO: 0x80, DT: 0x40, CR: 0x100,
  FA: 0x1f01ff, FR: 0x120089, FW: 0x120116, FX: 0x1200a0,
};

const DELETE = 0x10000;
const WRITE_DAC = 0x40000;
const WRITE_OWNER = 0x80000;
const GENERIC_ALL = 0x10000000;
const GENERIC_WRITE = 0x40000000;
/** Rights that let someone change a file's content, permissions or owner, or delete or rename it. */
const FILE_CHANGE = 0x2 /* write data */ | 0x4 /* append */ | DELETE | WRITE_DAC | WRITE_OWNER | GENERIC_ALL | GENERIC_WRITE;
/**
 * Rights on a folder that let someone put another file where the policy is: delete or rename its
 * entries (delete child), delete or rename the folder itself, or change its permissions or owner.
 * Adding new entries is not among them (every user may create folders in ProgramData).
 */
const FOLDER_CHANGE = 0x40 /* delete child */ | DELETE | WRITE_DAC | WRITE_OWNER | GENERIC_ALL;

/** One access entry of a DACL. */
interface Ace {
  type: string;
  flags: string;
  rights: number;
  sid: string;
}

function parseRights(text: string): number {
  if (/^0x[0-9a-f]+$/i.test(text)) return Number.parseInt(text.slice(2), 16);
  let mask = 0;
  for (let i = 0; i < text.length; i += 2) {
    const code = text.slice(i, i + 2).toUpperCase();
    // An unknown right is read as every right: a list Warden cannot read is not trusted.
    mask |= RIGHT_CODES[code] ?? GENERIC_ALL;
  }
  return mask >>> 0;
}

/** Owner and DACL of an SDDL string; `dacl` null when there is none (everyone has full access). */
export function parseSddl(sddl: string): { owner: string | null; dacl: Ace[] | null } {
  const owner = /O:(S-[0-9-]+|[A-Z]{2})/.exec(sddl)?.[1] ?? null;
  const d = /D:([^(]*)((?:\([^)]*\))*)/.exec(sddl);
  if (!d || d[1]!.includes('NO_ACCESS_CONTROL')) return { owner, dacl: null };
  const dacl: Ace[] = [];
  for (const m of d[2]!.matchAll(/\(([^)]*)\)/g)) {
    const [type = '', flags = '', rights = '', , , sid = ''] = m[1]!.split(';');
    dacl.push({ type, flags, rights: parseRights(rights), sid });
  }
  return { owner, dacl };
}

const nameOf = (sid: string) => SID_NAMES[sid] ?? sid;
/** ACE flags are two-letter codes written together (`OICIIO`): read them in pairs, never by substring. */
const flagsOf = (ace: Ace): string[] => ace.flags.match(/../g) ?? [];

/**
 * Why non-administrators can change this path (a file, or a folder above it), from its SDDL; []
 * when only SYSTEM, Administrators and TrustedInstaller can.
 */
export function sddlProblems(path: string, sddl: string, kind: 'file' | 'folder'): string[] {
  const { owner, dacl } = parseSddl(sddl);
  const problems: string[] = [];
  if (!owner || !TRUSTED_SIDS.has(owner)) problems.push(`${path} is owned by ${owner ? nameOf(owner) : 'an unknown account'}, not by Administrators or SYSTEM`);
  if (dacl === null) {
    problems.push(`${path} has no access list, so everyone can change it`);
    return problems;
  }
  const mask = kind === 'file' ? FILE_CHANGE : FOLDER_CHANGE;
  const writers = new Set<string>();
  for (const ace of dacl) {
    if (ace.type !== 'A') continue; // Deny entries are not subtracted (see the file comment).
    if (flagsOf(ace).includes('IO')) continue; // Inherit-only: applies to what is created inside, not to this path.
    if (TRUSTED_SIDS.has(ace.sid)) continue;
    if (ace.sid === 'OW' && owner && TRUSTED_SIDS.has(owner)) continue;
    if (ace.rights & mask) writers.add(nameOf(ace.sid));
  }
  if (writers.size) problems.push(`${[...writers].join(', ')} can ${kind === 'file' ? 'change or delete' : 'delete or rename what is in'} ${path}`);
  return problems;
}

/** The Windows guard: the file's and every folder's owner and access list, read through `security`. */
export function windowsPolicyGuard(security: WindowsSecurity): PolicyPathGuard {
  return {
    async problems(filePath) {
      const paths: string[] = [];
      for (let p = filePath; ; p = win32.dirname(p)) {
        paths.push(p);
        if (p === win32.dirname(p)) break;
      }
      const descriptors = await security.sddl(paths);
      if (descriptors.length !== paths.length) throw new Error(`expected ${paths.length} access lists, got ${descriptors.length}`);
      return paths.flatMap((p, i) => sddlProblems(p, descriptors[i]!, i === 0 ? 'file' : 'folder'));
    },
  };
}
