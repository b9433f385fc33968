/**
 * The organization layer's managed policy file (read-only in the app): parsing that fails closed.
 *
 * Format: `{ "version": 1, "rules": [{ "id", "serverId"?, "accountId"?, "toolName"?, "mode": "forbid" | "ask" | "allow" }] }`.
 * A missing file means no organization rules. A file that exists but cannot be read or parsed
 * means an administrator's intent is unknown, so every tool is forbidden until it is fixed, and
 * the reason is reported. Unknown mode values are kept as written; the engine reads them as
 * forbid and reports each one.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { OrgRule } from '../../../shared/domain/policy';

const OrgFile = z.object({
  version: z.literal(1),
  rules: z.array(
    z.object({
      id: z.string().min(1),
      serverId: z.string().min(1).nullable().optional(),
      accountId: z.string().min(1).nullable().optional(),
      toolName: z.string().min(1).nullable().optional(),
      mode: z.unknown(),
    }),
  ),
});

/** What the managed file says, plus anything wrong with it. */
export interface OrganizationPolicy {
  rules: OrgRule[];
  errors: string[];
}

const FORBID_ALL = (why: string): OrganizationPolicy => ({
  rules: [{ id: 'org:invalid-policy-file', serverId: null, accountId: null, toolName: null, mode: 'forbid' }],
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
    return FORBID_ALL(`${issue.path.map(String).join('.') || '(file)'}: ${issue.message}`);
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

/**
 * Reads and parses the managed policy file at `filePath`; a missing file means no rules.
 *
 * Why a separate reader: the parse is pure and tested directly; only this touches the disk.
 */
export function loadOrganizationPolicy(filePath: string): OrganizationPolicy {
  let text: string | null;
  try {
    text = readFileSync(filePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') text = null;
    else return FORBID_ALL(`cannot read ${filePath}: ${(error as Error).message}`);
  }
  return parseOrganizationPolicy(text);
}
