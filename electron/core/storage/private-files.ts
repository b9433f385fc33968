/**
 * The one way the core creates files and folders: readable and writable by the person alone.
 *
 * Conversations, listings, the ledger and its index, roots and sampling settings are nobody
 * else's business on a shared machine, so every file is created 0600 and every folder 0700, with
 * the mode given to the call that creates it (never a chmod afterwards, which would leave a window
 * in which another user could open the file and keep it open). The process umask can only take
 * bits away, so it never loosens these. `test/unit/storage/private-files.test.ts` fails when core
 * code outside this folder creates a file or folder itself.
 *
 * SQLite creates its own `-journal` and `-wal` files next to the database, with the database
 * file's permissions: so the database file is created here first (`ensurePrivateFile`), and
 * SQLite's companions inherit 0600, inside a 0700 folder.
 *
 * Windows ignores these mode bits. There the files are protected by the ACL they inherit from the
 * user-data folder under the person's profile (`%APPDATA%`), which grants access to the person,
 * SYSTEM and Administrators only; Warden does not change ACLs.
 */
import * as fs from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';

/** The mode of every file the core creates. */
export const PRIVATE_FILE_MODE = 0o600;
/** The mode of every folder the core creates. */
export const PRIVATE_FOLDER_MODE = 0o700;

/**
 * Creates `dir` and any missing parents, each 0700. Folders that already exist keep their mode:
 * the user-data folder itself belongs to whoever made it (Electron, or the person).
 */
export async function makePrivateFolder(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_FOLDER_MODE });
}

/** Opens `path` as a FileHandle; a file it creates (`w`, `wx`, `a`) is created 0600. */
export function openPrivate(path: string, flags: 'r' | 'r+' | 'w' | 'wx' | 'a'): Promise<FileHandle> {
  return open(path, flags, PRIVATE_FILE_MODE);
}

/**
 * Opens `path` as a descriptor, with the callback API (the ledger's hot path: less overhead per
 * call than a FileHandle); a file it creates is created 0600.
 */
export function openPrivateFd(path: string, flags: 'r' | 'r+' | 'w' | 'wx'): Promise<number> {
  return new Promise<number>((resolve, reject) => fs.open(path, flags, PRIVATE_FILE_MODE, (err, fd) => (err ? reject(err) : resolve(fd))));
}

/** Creates `path` empty and 0600 if it does not exist; leaves an existing file as it is. */
export async function ensurePrivateFile(path: string): Promise<void> {
  const handle = await openPrivate(path, 'a');
  await handle.close();
}

/** Copies `from` to a new file `to`, created 0600 whatever the source's mode. */
export async function copyPrivate(from: string, to: string): Promise<void> {
  const target = await openPrivate(to, 'w');
  try {
    await target.writeFile(await fs.promises.readFile(from));
    await target.sync();
  } finally {
    await target.close();
  }
}

/** A write stream to a new file (exports to a place the person chose), created 0600. */
export function createPrivateWriteStream(path: string): fs.WriteStream {
  return fs.createWriteStream(path, { flags: 'w', mode: PRIVATE_FILE_MODE });
}

/** Makes a create, rename or delete inside `dir` durable (POSIX); Windows cannot open a folder for sync, and its rename is durable through the metadata journal. */
export async function syncFolder(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
