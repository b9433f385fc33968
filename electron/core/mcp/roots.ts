/**
 * Roots: the folders a person chose for each (server, account), which the server learns through
 * `roots/list` and is told about again (`notifications/roots/list_changed`) whenever they change.
 *
 * A folder is only ever added through the native folder chooser (the FileDialogs port in main):
 * the window asks for the chooser, never names a path, so a compromised window cannot point a
 * server at a folder the person did not pick. A server's folders can also be made a wall (the
 * policy engine decides with them; see `enforcedRoots` in the policy state). Removing a folder needs no dialog (it only narrows
 * what the server is told). Roots are kept one file per server in `dir` (JsonFileFolder: written
 * asynchronously and atomically); without a folder they live in memory only.
 */
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WardenError } from '../../../shared/result';
import type { Handlers } from '../dispatch';
import type { FileDialogs } from '../ports';
import { JsonFileFolder, keepAsIs, type Scrub } from '../storage/json-file-folder';

/** One folder given to a server as a root. */
export interface RootFolder {
  path: string;
  name: string;
}

/** Folders one (server, account) may have; more is refused with a sentence. */
const MAX_ROOTS = 50;

export interface RootsServiceOptions {
  /** Where roots are kept (one `<serverId>.json` per server); null: memory only. */
  dir: string | null;
  /** The app's redactor over every file written. */
  scrub?: Scrub;
  /** The native folder chooser; absent: folders cannot be added (headless hosts). */
  chooseFolder?: FileDialogs['chooseFolder'];
  /** Told after the roots of (server, account) changed, to send `notifications/roots/list_changed`. */
  onChanged: (serverId: string, accountId: string) => void;
  /** Warden's name for the server, for the chooser's title. */
  serverName: (serverId: string) => string | undefined;
}

export class RootsService {
  /** serverId → accountId → folders. */
  private readonly byServer = new Map<string, Map<string, RootFolder[]>>();
  private readonly files: JsonFileFolder;
  /** Settles once the kept roots are read (problems are logged, never fatal). */
  readonly loaded: Promise<void>;

  constructor(private readonly options: RootsServiceOptions) {
    this.files = new JsonFileFolder(options.dir, (serverId) => {
      const accounts = this.byServer.get(serverId);
      return accounts && accounts.size ? { accounts: Object.fromEntries(accounts) } : undefined;
    }, options.scrub ?? keepAsIs);
    const problems: string[] = [];
    this.loaded = this.files
      .readAll(/^([a-z0-9-]+)\.json$/, (serverId, value) => this.accept(serverId, value), problems)
      .then(() => {
        for (const p of problems) console.error(`roots: ignored ${p}`);
        // Servers that connected before the roots were read learn them now.
        for (const [serverId, accounts] of this.byServer) for (const accountId of accounts.keys()) this.options.onChanged(serverId, accountId);
      })
      .catch((error: unknown) => console.error('roots: could not read the kept roots', error));
  }

  /** The folders chosen for (server, account). */
  list(serverId: string, accountId: string): RootFolder[] {
    return [...(this.byServer.get(serverId)?.get(accountId) ?? [])];
  }

  /** The `roots/list` answer for (server, account): file URIs and names. */
  forServer(serverId: string, accountId: string): Array<{ uri: string; name: string }> {
    return this.list(serverId, accountId).map((r) => ({ uri: pathToFileURL(r.path).href, name: r.name }));
  }

  /** Asks the person for a folder in the native chooser and adds it; null if they cancelled. */
  async choose(serverId: string, accountId: string): Promise<RootFolder | null> {
    if (!this.options.chooseFolder) throw new WardenError('UNSUPPORTED', 'This window has no folder chooser, so no folder can be given to a server here.');
    if (this.list(serverId, accountId).length >= MAX_ROOTS) throw new WardenError('CONFLICT', `A server can be given at most ${MAX_ROOTS} folders; remove one first.`);
    const name = this.options.serverName(serverId) ?? 'this server';
    const path = await this.options.chooseFolder({ title: `Choose a folder ${name} may work in` });
    if (path === null) return null;
    await this.loaded;
    const current = this.list(serverId, accountId);
    if (current.some((r) => r.path === path)) return current.find((r) => r.path === path)!;
    const folder = { path, name: basename(path) || path };
    this.set(serverId, accountId, [...current, folder]);
    return folder;
  }

  /** Removes a folder from (server, account); false if it was not there. */
  async remove(serverId: string, accountId: string, path: string): Promise<boolean> {
    await this.loaded;
    const current = this.list(serverId, accountId);
    const next = current.filter((r) => r.path !== path);
    if (next.length === current.length) return false;
    this.set(serverId, accountId, next);
    return true;
  }

  /** Forgets a deleted server's roots (and its file). */
  async forgetServer(serverId: string): Promise<void> {
    const accounts = [...(this.byServer.get(serverId)?.keys() ?? [])];
    this.byServer.delete(serverId);
    for (const accountId of accounts) this.options.onChanged(serverId, accountId);
    await this.files.remove(serverId);
  }

  /**
   * Forgets the roots of a server's accounts that no longer exist (an account was removed), so a
   * later account never inherits folders given to a deleted one. Waits for the kept roots to be
   * read, or a removal racing start-up would be undone by the file.
   */
  async forgetMissingAccounts(serverId: string, live: (accountId: string) => boolean): Promise<void> {
    await this.loaded;
    const accounts = this.byServer.get(serverId);
    if (!accounts) return;
    for (const accountId of [...accounts.keys()]) if (!live(accountId)) this.set(serverId, accountId, []);
  }

  async flush(): Promise<void> {
    await this.files.flush();
  }

  private set(serverId: string, accountId: string, folders: RootFolder[]): void {
    let accounts = this.byServer.get(serverId);
    if (!accounts) this.byServer.set(serverId, (accounts = new Map()));
    if (folders.length) accounts.set(accountId, folders);
    else accounts.delete(accountId);
    if (accounts.size === 0) this.byServer.delete(serverId);
    void this.files.save(serverId).catch((error: unknown) => console.error(`roots: could not save the roots of ${serverId}`, error));
    this.options.onChanged(serverId, accountId);
  }

  private accept(serverId: string, value: unknown): void {
    const accounts = (value as { accounts?: unknown })?.accounts;
    if (!accounts || typeof accounts !== 'object') throw new Error('no "accounts" object');
    const map = new Map<string, RootFolder[]>();
    for (const [accountId, folders] of Object.entries(accounts as Record<string, unknown>)) {
      if (!Array.isArray(folders)) throw new Error(`account ${accountId}: not a list of folders`);
      const ok = folders.filter((f): f is RootFolder => !!f && typeof (f as RootFolder).path === 'string' && typeof (f as RootFolder).name === 'string').slice(0, MAX_ROOTS);
      if (ok.length) map.set(accountId, ok.map((f) => ({ path: f.path, name: f.name })));
    }
    if (map.size) this.byServer.set(serverId, map);
  }
}

/** Whether a server's folders are a wall, and the way to change it (the gate module's). */
export interface RootsEnforcement {
  enforced(serverId: string): boolean;
  /** Turning it off is confirmed natively by the implementation. */
  set(serverId: string, enforced: boolean): Promise<{ enforced: boolean }>;
}

/** The roots channels over `roots`. */
export function rootsHandlers(
  roots: RootsService,
  known: (serverId: string, accountId: string) => boolean,
  enforcement: RootsEnforcement,
  knownServer: (serverId: string) => boolean,
): Pick<Handlers, 'roots:list' | 'roots:choose' | 'roots:remove' | 'roots:enforce'> {
  const check = (serverId: string, accountId: string) => {
    if (!known(serverId, accountId)) throw new WardenError('NOT_FOUND', 'There is no such server and account.');
  };
  return {
    'roots:list': async ({ serverId, accountId }) => {
      check(serverId, accountId);
      await roots.loaded;
      return { roots: roots.list(serverId, accountId), enforced: enforcement.enforced(serverId) };
    },
    'roots:enforce': async ({ serverId, enforced }) => {
      if (!knownServer(serverId)) throw new WardenError('NOT_FOUND', 'serverId: there is no such server.');
      return enforcement.set(serverId, enforced);
    },
    'roots:choose': async ({ serverId, accountId }) => {
      check(serverId, accountId);
      const added = await roots.choose(serverId, accountId);
      return { added, roots: roots.list(serverId, accountId) };
    },
    'roots:remove': async ({ serverId, accountId, path }) => {
      check(serverId, accountId);
      const removed = await roots.remove(serverId, accountId, path);
      return { removed, roots: roots.list(serverId, accountId) };
    },
  };
}
