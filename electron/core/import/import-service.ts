/**
 * Import of server lists from Claude Desktop, VS Code and Cursor.
 *
 * Two steps, so nothing is imported that the person has not seen: `preview` reads and parses the
 * file, lists secret-looking values (by name and reason, never by value) and shows the exact,
 * untruncated command that each local server would run; the parsed values stay in main under a
 * preview id. `import` then uses exactly those values — the renderer cannot substitute others —
 * and moves a detected secret into the keychain only when the caller confirmed that value.
 */
import { randomUUID } from 'node:crypto';
import { lstat, readFile, readlink, stat } from 'node:fs/promises';
import { posix, win32 } from 'node:path';
import type { ImportEntry, ImportPreview, ImportSource, SecretDecision } from '../../../shared/contract/servers';
import {
  ServerDraft,
  displayCommandLine,
  envSecretName,
  headerSecretName,
  serverUrlProblem,
  type ServerView,
} from '../../../shared/domain/servers';
import { WardenError } from '../../../shared/result';
import { describeIssues } from '../dispatch';
import { systemClock, type Clock, type FileDialogs } from '../ports';
import type { SecretValue, ServerService } from '../settings/server-service';
import { ConfigFormatError, parseConfig, type RawServerEntry } from './config-formats';
import { defaultConfigPath, type LocationContext } from './config-locations';
import { localPathProblem } from '../local-path';
import { isVariableReference, secretReasons, urlCredentialReason } from './secret-detection';
import { isCodeLoadingEnvName } from '../../../shared/domain/code-loading-env';
import { mayBeSecretEnvName } from '../../../shared/domain/secret-env-names';

interface HeldSecret {
  valueId: string;
  field: 'env' | 'header';
  name: string;
  value: string;
}

interface HeldEntry {
  view: ImportEntry;
  /** The draft as shown, with detected secrets as `secret: true` markers. */
  draft: ServerDraft | null;
  secrets: HeldSecret[];
}

/** Where one detected secret-looking value of an import goes. */
export interface PlannedValue {
  /** Which of the plan's items (servers) it belongs to. */
  item: number;
  /** The server's name as it will be saved. */
  server: string;
  field: 'env' | 'header';
  name: string;
  /** In the keying convention (`env:API_KEY`, `header:authorization`). */
  secretName: string;
  length: number;
  action: SecretDecision['action'];
}

/** What an import would save: final definitions with the secret values to write, and each detected value's destination. */
export interface ImportPlan {
  items: Array<{ definition: ServerDraft; secrets: SecretValue[] }>;
  values: PlannedValue[];
}

interface HeldPreview {
  preview: ImportPreview;
  entries: Map<string, HeldEntry>;
  expiresAt: number;
}

/** What the importer needs: where servers are saved, where default config files are, the file chooser, a clock. */
export interface ImportServiceDeps {
  servers: Pick<ServerService, 'addServersAtomically'>;
  location: Omit<LocationContext, 'workspaceFolder'>;
  /** Main's native open dialog: the only way a file to import is chosen. */
  fileDialogs: FileDialogs;
  clock?: Clock;
  /** How long a preview can be imported (default 30 min). */
  previewTtlMs?: number;
  readText?: (path: string) => Promise<string>;
}

const MAX_CONFIG_BYTES = 2 * 1024 * 1024;
/** Symbolic links followed while checking where a chosen file really is (the kernel's own limit is 40). */
const MAX_LINKS = 40;

const SOURCE_LABELS: Record<ImportSource, string> = {
  'claude-desktop': 'Claude Desktop config (claude_desktop_config.json)',
  'vscode-user': 'VS Code user config (mcp.json)',
  'vscode-workspace': "VS Code workspace config (the workspace's .vscode/mcp.json)",
  cursor: 'Cursor config (~/.cursor/mcp.json)',
  file: 'MCP config file (.json)',
};

/** Preview then import, holding parsed values in main between the two steps. */
export class ImportService {
  private readonly previews = new Map<string, HeldPreview>();
  private readonly clock: Clock;

  constructor(private readonly deps: ImportServiceDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  /**
   * Asks the person to choose a config file in main's open dialog (starting at the known location
   * of `source`), then previews it. The renderer never names the file.
   */
  async chooseAndPreview(request: { source: ImportSource }): Promise<ImportPreview> {
    let defaultPath: string | undefined;
    if (request.source !== 'file' && request.source !== 'vscode-workspace') {
      const known = defaultConfigPath(request.source, this.deps.location);
      // A known location on a network share (a redirected profile) is not offered: opening it would contact the share.
      if (localPathProblem(known, this.deps.location.platform) === null) defaultPath = known;
    }
    const path = await this.deps.fileDialogs.openFile({
      title: `Warden: choose the ${SOURCE_LABELS[request.source]} to import`,
      ...(defaultPath ? { defaultPath } : {}),
      filters: [
        { name: 'MCP config', extensions: ['json', 'jsonc'] },
        { name: 'All files', extensions: ['*'] },
      ],
    });
    if (path === null) throw new WardenError('CANCELLED', 'No file was chosen; nothing was imported');
    return this.preview({ source: request.source, path });
  }

  /**
   * Reads and parses the config file at `path` and returns what importing it would do. Nothing is
   * stored. Only for a path the person chose (chooseAndPreview) or Warden's own code named.
   */
  async preview(request: { source: ImportSource; path: string }): Promise<ImportPreview> {
    this.sweep();
    const path = request.path;
    // Config files are JSON; refusing other names keeps this from being a way to probe any file.
    if (!/\.jsonc?$/i.test(path)) throw new WardenError('VALIDATION_FAILED', 'path: expected a .json config file (claude_desktop_config.json or mcp.json)');
    const text = await this.read(path);
    const formatFor: Record<ImportSource, 'claude-desktop' | 'vscode' | 'cursor' | null> = {
      'claude-desktop': 'claude-desktop',
      'vscode-user': 'vscode',
      'vscode-workspace': 'vscode',
      cursor: 'cursor',
      file: null,
    };
    let parsed;
    try {
      parsed = parseConfig(text, formatFor[request.source], /[\\/]\.cursor[\\/]/.test(path) ? 'cursor' : 'claude-desktop');
    } catch (error) {
      if (error instanceof ConfigFormatError) throw new WardenError('VALIDATION_FAILED', `path: ${path} is ${error.message}`);
      throw error;
    }
    const previewId = randomUUID();
    const entries = new Map<string, HeldEntry>();
    parsed.entries.forEach((raw, i) => {
      const held = buildEntry(`e${i}`, raw, parsed.passwordInputs);
      entries.set(held.view.entryId, held);
    });
    const preview: ImportPreview = {
      previewId,
      source: request.source,
      format: parsed.format,
      path,
      entries: [...entries.values()].map((e) => e.view),
    };
    this.previews.set(previewId, { preview, entries, expiresAt: this.clock.now() + (this.deps.previewTtlMs ?? 30 * 60_000) });
    return preview;
  }

  /**
   * What importing the chosen entries with these decisions would save, without saving anything:
   * the final definitions with the secrets to write, and where each detected value goes. Every
   * detected secret of a chosen entry needs an explicit decision (keychain / plain / omit). The
   * native confirmation is built from this, so it shows what will actually be stored.
   */
  plan(request: { previewId: string; entryIds: string[]; decisions: SecretDecision[] }): ImportPlan {
    this.sweep();
    const held = this.previews.get(request.previewId);
    if (!held) throw new WardenError('NOT_FOUND', 'previewId: no such preview (it expired or was already imported); preview the file again');
    const decisions = new Map<string, SecretDecision['action']>();
    request.decisions.forEach((d, i) => {
      if (decisions.has(d.valueId)) throw new WardenError('VALIDATION_FAILED', `decisions.${i}.valueId: "${d.valueId}" decided twice`);
      decisions.set(d.valueId, d.action);
    });
    const chosen = request.entryIds.map((id, i) => {
      const e = held.entries.get(id);
      if (!e) throw new WardenError('VALIDATION_FAILED', `entryIds.${i}: no entry "${id}" in this preview`);
      if (e.view.problem || !e.draft) throw new WardenError('VALIDATION_FAILED', `entryIds.${i}: "${e.view.sourceName}" cannot be imported: ${e.view.problem}`);
      return e;
    });
    if (new Set(request.entryIds).size !== request.entryIds.length) throw new WardenError('VALIDATION_FAILED', 'entryIds: an entry is listed twice');
    const relevant = new Set(chosen.flatMap((e) => e.secrets.map((s) => s.valueId)));
    for (const id of decisions.keys()) {
      if (!relevant.has(id)) throw new WardenError('VALIDATION_FAILED', `decisions: "${id}" is not a detected secret of the chosen entries`);
    }
    const values: PlannedValue[] = [];
    const items = chosen.map((e, item) => {
      const draft = structuredClone(e.draft!);
      const secrets: SecretValue[] = [];
      for (const s of e.secrets) {
        const action = decisions.get(s.valueId);
        if (!action) {
          throw new WardenError(
            'VALIDATION_FAILED',
            `decisions: no decision for ${s.field} "${s.name}" of "${e.view.sourceName}" (valueId ${s.valueId}); choose keychain, plain or omit`,
          );
        }
        const secretName = s.field === 'env' ? envSecretName(s.name) : headerSecretName(s.name);
        values.push({ item, server: draft.name, field: s.field, name: s.name, secretName, length: s.value.length, action });
        const list = draft.transport === 'stdio' ? (s.field === 'env' ? draft.env : []) : draft.transport === 'http' && s.field === 'header' ? draft.headers : [];
        const slot = list.find((x) => x.name === s.name)!;
        if (action === 'plain') {
          slot.secret = undefined;
          slot.value = s.value;
        } else if (action === 'keychain') {
          secrets.push({ name: secretName, value: s.value });
        }
      }
      clean(draft);
      return { definition: draft, secrets };
    });
    return { items, values };
  }

  /**
   * Imports the chosen entries of a preview as one change (see `plan`): only `keychain` values
   * are written, and only to the keychain. A preview can be imported once.
   */
  async import(request: { previewId: string; entryIds: string[]; decisions: SecretDecision[] }): Promise<ServerView[]> {
    const { items } = this.plan(request);
    const views = await this.deps.servers.addServersAtomically(items);
    this.previews.delete(request.previewId);
    return views;
  }

  /**
   * Reads a chosen config file, refusing anything that is not a regular file on this computer's
   * own disks: network and device paths, links to them (checked before any link is followed, since
   * following one would already contact the share), FIFOs and devices, and files over 2 MiB.
   */
  private async read(path: string): Promise<string> {
    const shown = JSON.stringify(path).slice(1, -1);
    const problem = localPathProblem(path, this.deps.location.platform);
    if (problem) throw new WardenError('VALIDATION_FAILED', `path: ${shown} ${problem}`);
    try {
      const linked = await this.networkLinkTarget(path);
      if (linked !== null) {
        throw new WardenError('VALIDATION_FAILED', `path: ${shown} links to ${JSON.stringify(linked).slice(1, -1)}, a network or device path; Warden reads config files only from this computer's own disks`);
      }
      const info = await stat(path);
      if (!info.isFile()) throw new WardenError('VALIDATION_FAILED', `path: ${shown} is not a regular file`);
      if (info.size > MAX_CONFIG_BYTES) throw new WardenError('VALIDATION_FAILED', `path: ${shown} is larger than ${MAX_CONFIG_BYTES} bytes`);
      const text = await (this.deps.readText ?? ((p) => readFile(p, 'utf8')))(path);
      if (text.length > MAX_CONFIG_BYTES) throw new WardenError('VALIDATION_FAILED', `path: ${shown} is larger than ${MAX_CONFIG_BYTES} bytes`);
      return text;
    } catch (error) {
      if (error instanceof WardenError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new WardenError('NOT_FOUND', `path: no config file at ${shown}`);
      throw new WardenError('VALIDATION_FAILED', `path: ${shown} could not be read (${code ?? String(error)})`);
    }
  }

  /**
   * The first symbolic-link target on the way to `path` that is a network or device path, or null.
   * Walks the path one component at a time with lstat/readlink (which never follow a link), and
   * continues through each link's target the way the system would.
   */
  private async networkLinkTarget(path: string, links = 0): Promise<string | null> {
    const platform = this.deps.location.platform;
    const p = platform === 'win32' ? win32 : posix;
    const { root } = p.parse(path);
    const parts = path.slice(root.length).split(platform === 'win32' ? /[\\/]+/ : /\/+/).filter(Boolean);
    let current = root;
    for (let i = 0; i < parts.length; i++) {
      current = p.join(current, parts[i]!);
      let info;
      try {
        info = await lstat(current);
      } catch {
        return null; // Missing: reading it reports that plainly.
      }
      if (!info.isSymbolicLink()) continue;
      if (links >= MAX_LINKS) throw new WardenError('VALIDATION_FAILED', `path: more than ${MAX_LINKS} symbolic links on the way to ${path}`);
      const target = await readlink(current);
      if (/^[\\/]{2}/.test(target) || /^\\\?\?\\/.test(target)) return target;
      return this.networkLinkTarget(p.resolve(p.dirname(current), target, ...parts.slice(i + 1)), links + 1);
    }
    return null;
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [id, p] of this.previews) if (p.expiresAt <= now) this.previews.delete(id);
  }
}

/** Drops `secret: undefined` / `value: undefined` keys so the strict schema sees clean entries. */
function clean(draft: ServerDraft): void {
  const list = draft.transport === 'stdio' ? draft.env : draft.transport === 'http' ? draft.headers : [];
  for (const e of list) {
    if (e.secret === undefined) delete e.secret;
    if (e.value === undefined) delete e.value;
  }
}

function buildEntry(entryId: string, raw: RawServerEntry, passwordInputs: ReadonlySet<string>): HeldEntry {
  const notes = [...raw.notes];
  const secrets: HeldSecret[] = [];
  let problem = raw.problem;
  const mark = (field: 'env' | 'header', list: Array<{ name: string; value: string }>) =>
    list.map(({ name, value }) => {
      const ref = /\$\{input:([^}]+)\}/.exec(value);
      // Only a credential may be hidden in the keychain: every other variable is a setting the
      // confirmation shows in full. A value that looks secret under such a name (and is not code
      // the program loads) could only be kept in plain settings, which import never does on its
      // own: the entry is refused, so putting it there is the person's choice, made by hand.
      if (field === 'env' && !mayBeSecretEnvName(name)) {
        const loadsCode = isCodeLoadingEnvName(name);
        const what = loadsCode ? `${name} changes which code the program loads` : `${name} is a setting, not a credential (its name does not say it holds one)`;
        if (ref) {
          problem ??= `env "${name}" comes from the VS Code input "${ref[1]}", but ${what}, so Warden must show its value: add this server by hand with the value written out`;
        } else if (loadsCode) {
          // Whatever it looks like, such a value is code the program runs: the person must see it.
          notes.push(`env "${name}" changes which code the program loads; it is imported as a plain setting and shown in full before saving.`);
        } else if (secretReasons(name, value).length > 0) {
          problem ??= `env "${name}" looks like it holds a secret, but ${what}, so Warden could only keep it in plain settings: add this server by hand if that is what you want`;
        }
        return { name, value };
      }
      if (ref) {
        const pw = passwordInputs.has(ref[1]!);
        notes.push(`${field} "${name}" comes from the VS Code input "${ref[1]}"${pw ? ' (a password)' : ''}; set its value in Warden after importing.`);
        return { name, secret: true as const };
      }
      if (isVariableReference(value)) notes.push(`${field} "${name}" refers to ${value}, which Warden does not expand; it is imported as literal text.`);
      const reasons = secretReasons(name, value);
      if (reasons.length === 0) return { name, value };
      secrets.push({ valueId: `${entryId}.${field}.${secrets.length}`, field, name, value });
      return { name, secret: true as const, reasons, length: value.length };
    });

  let draft: ServerDraft | null = null;
  const name = raw.sourceName.trim().slice(0, 100) || 'Imported server';
  if (!problem && raw.transport === 'stdio') {
    raw.args.forEach((a, i) => {
      const r = secretReasons('', a);
      if (r.length) notes.push(`Argument ${i + 1} looks like a secret (${r.join('; ')}); arguments are stored in plain settings — consider passing it as an env var instead.`);
    });
    const env = mark('env', raw.env);
    draft = { name, transport: 'stdio', command: raw.command!, args: raw.args, env: env.map(({ name, value, secret }) => (secret ? { name, secret } : { name, value })), ...(raw.cwd ? { cwd: raw.cwd } : {}) };
  } else if (!problem && raw.transport === 'http') {
    const urlProblem = serverUrlProblem(raw.url!);
    if (urlProblem) problem = `url: ${urlProblem}`;
    const credential = urlProblem ? null : urlCredentialReason(raw.url!);
    if (credential) problem = `url: the address carries a credential (${credential}); Warden keeps addresses in plain settings, so add this server by hand and pass the credential in a header instead`;
    const headers = mark('header', raw.headers);
    draft = {
      name,
      transport: 'http',
      url: raw.url!,
      headers: headers.map(({ name, value, secret }) => (secret ? { name, secret } : { name, value })),
      auth: { kind: 'none' },
    };
  }
  if (draft && !problem) {
    const r = ServerDraft.safeParse(draft);
    if (!r.success) problem = describeIssues(r.error.issues);
    else draft = r.data;
  }
  const view: ImportEntry = {
    entryId,
    sourceName: raw.sourceName,
    draft: problem ? null : draft,
    commandLine: raw.transport === 'stdio' && raw.command ? displayCommandLine(raw.command, raw.args) : null,
    detectedSecrets: secrets.map((s) => ({
      valueId: s.valueId,
      field: s.field,
      name: s.name,
      reasons: secretReasons(s.name, s.value),
      length: s.value.length,
    })),
    notes,
    problem,
  };
  return { view, draft: problem ? null : draft, secrets };
}
