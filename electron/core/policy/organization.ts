/**
 * The organization layer's managed policy file (read-only in the app): parsing that fails closed.
 *
 * Format: `{ "version": 1, "rules": [{ "id", "serverId"?, "accountId"?, "toolName"?, "mode": "forbid" | "ask" | "allow" }] }`.
 * A missing file means no organization rules. A file that exists but cannot be read or parsed,
 * that has a key the format does not know (`"tool"` for `"toolName"` would otherwise silently
 * widen a rule to every tool), or that a non-administrator could change, means an administrator's
 * intent is unknown: every tool is forbidden until it is fixed, and the reason is reported.
 * Unknown mode values are kept as written; the engine reads them as forbid and reports each one.
 */
import { lstat, readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { OrgRule } from '../../../shared/domain/policy';
import { organizationPolicyPath, type WindowsRegistry } from './organization-location';
import { posixPolicyGuard, windowsPolicyGuard, type PolicyPathGuard, type WindowsSecurity } from './organization-guard';

const RULE_KEYS = ['id', 'serverId', 'accountId', 'toolName', 'mode'] as const;
const FILE_KEYS = ['version', 'rules'] as const;

const OrgFile = z
  .object({
    version: z.literal(1),
    rules: z.array(
      z
        .object({
          id: z.string().min(1),
          serverId: z.string().min(1).nullable().optional(),
          accountId: z.string().min(1).nullable().optional(),
          toolName: z.string().min(1).nullable().optional(),
          mode: z.unknown(),
        })
        .strict(),
    ),
  })
  .strict();

/** What the managed file says, plus anything wrong with it. */
export interface OrganizationPolicy {
  rules: OrgRule[];
  errors: string[];
}

const FORBID_EVERY_TOOL: OrgRule = { id: 'org:invalid-policy-file', serverId: null, accountId: null, toolName: null, mode: 'forbid' };

const FORBID_ALL = (why: string): OrganizationPolicy => ({
  rules: [FORBID_EVERY_TOOL],
  errors: [`Organization policy file is invalid (${why}); every tool is disabled until it is fixed`],
});

/**
 * Parses the managed policy file's text (null = no file).
 *
 * Why fail closed: a broken managed policy must never silently become "no restrictions".
 */
export function parseOrganizationPolicy(text: string | null): OrganizationPolicy {
  if (text === null) return { rules: [], errors: [] };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return FORBID_ALL(`not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = OrgFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.map(String).join('.') || '(file)';
    if (issue.code === 'unrecognized_keys') {
      const known = issue.path.length === 0 ? FILE_KEYS : RULE_KEYS;
      const keys = issue.keys.map((k) => JSON.stringify(k)).join(', ');
      return FORBID_ALL(`${where}: unknown key${issue.keys.length === 1 ? '' : 's'} ${keys} (known keys: ${known.join(', ')})`);
    }
    return FORBID_ALL(`${where}: ${issue.message}`);
  }
  const ids = new Set<string>();
  const errors: string[] = [];
  const rules = parsed.data.rules.map((r): OrgRule => {
    if (ids.has(r.id)) errors.push(`Organization rule id ${r.id} appears more than once`);
    ids.add(r.id);
    if (r.mode !== 'forbid' && r.mode !== 'ask' && r.mode !== 'allow') errors.push(`Organization rule ${r.id}: unknown mode ${JSON.stringify(r.mode)}; treated as forbid`);
    return { id: r.id, serverId: r.serverId ?? null, accountId: r.accountId ?? null, toolName: r.toolName ?? null, mode: r.mode };
  });
  return { rules, errors };
}

/** How the managed file is read; every part has a production default. */
export interface OrganizationPolicyReadOptions {
  /** Who may change the file and the folders above it. Default: POSIX owner and mode checks. */
  guard?: PolicyPathGuard;
  /** The file's text, or null when it does not exist. Default: the file system. */
  readText?: (filePath: string) => Promise<string | null>;
}

async function readIfPresent(filePath: string): Promise<string | null> {
  try {
    await lstat(filePath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  return readFile(filePath, 'utf8');
}

/**
 * Reads and parses the managed policy file at `filePath`; a missing file means no rules.
 *
 * A file that non-administrators could change (or replace, through a folder above it) is refused
 * before its content is trusted: a user who can edit the policy could lift it.
 */
export async function loadOrganizationPolicy(filePath: string, options: OrganizationPolicyReadOptions = {}): Promise<OrganizationPolicy> {
  const read = options.readText ?? readIfPresent;
  let text: string | null;
  try {
    text = await read(filePath);
  } catch (error) {
    return FORBID_ALL(`cannot read ${filePath}: ${(error as Error).message}`);
  }
  if (text === null) return { rules: [], errors: [] };
  let problems: string[];
  try {
    problems = await (options.guard ?? posixPolicyGuard()).problems(filePath);
  } catch (error) {
    problems = [`its permissions could not be checked (${error instanceof Error ? error.message : String(error)})`];
  }
  if (problems.length > 0) {
    return {
      rules: [FORBID_EVERY_TOOL],
      errors: [
        `Organization policy file ${filePath} is not protected: ${problems.join('; ')}. Only administrators may be able to change it; every tool is disabled until an administrator fixes its permissions`,
      ],
    };
  }
  return parseOrganizationPolicy(text);
}

/** What the app needs to find and check the managed policy on this machine. */
export interface ManagedPolicyPorts {
  platform: NodeJS.Platform;
  /** Windows: reads ProgramData's location from the registry (never from the environment). */
  registry?: WindowsRegistry;
  /** Windows: owners and access lists of the file and its folders. */
  security?: WindowsSecurity;
  /** For tests: the file's text, or null when it does not exist. */
  readText?: (filePath: string) => Promise<string | null>;
}

/**
 * Finds, checks and reads the machine's managed policy: `/etc/warden/policy.json`,
 * `/Library/Application Support/Warden/policy.json`, or `<ProgramData>\Warden\policy.json` with
 * ProgramData read from the registry. If the location cannot be determined, every tool is
 * forbidden (a policy that may exist but cannot be found must not count as none).
 */
export async function loadManagedOrganizationPolicy(ports: ManagedPolicyPorts): Promise<OrganizationPolicy & { path: string | null }> {
  let path: string;
  try {
    path = await organizationPolicyPath(ports.platform, ports.registry);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { path: null, rules: [FORBID_EVERY_TOOL], errors: [`Organization policy location could not be determined (${why}); every tool is disabled until this is fixed`] };
  }
  let guard: PolicyPathGuard;
  if (ports.platform === 'win32') {
    if (!ports.security) return { path, rules: [FORBID_EVERY_TOOL], errors: ['Organization policy permissions cannot be checked on this host; every tool is disabled'] };
    guard = windowsPolicyGuard(ports.security);
  } else {
    guard = posixPolicyGuard({ platform: ports.platform });
  }
  return { path, ...(await loadOrganizationPolicy(path, { guard, ...(ports.readText ? { readText: ports.readText } : {}) })) };
}
