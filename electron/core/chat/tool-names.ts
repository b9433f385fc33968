/**
 * The lookup table between the names a model sees and the tools they stand for.
 *
 * A model-facing name is built by Warden from the server's label and the tool's name, made
 * provider-legal (`^[a-zA-Z0-9_-]{1,64}$`) and unique across servers and accounts. The way back is
 * ONLY a lookup in this table: a name is never split into a server and a tool, so a model cannot
 * reach a tool by spelling a name the table does not hold.
 */
import { createHash } from 'node:crypto';
import type { ToolDescriptor } from '../gate/ports';

/** The names providers accept for a tool. */
export const MODEL_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** One tool in the table. */
export interface ToolEntry {
  modelName: string;
  tool: ToolDescriptor;
}

/** The table for one model round. */
export interface ToolTable {
  /** Every listed tool, offered or not, by model-facing name. */
  byName: ReadonlyMap<string, ToolEntry>;
  entries: readonly ToolEntry[];
}

function slug(text: string, max: number): string {
  const s = text
    .normalize('NFKD')
    .replace(/[^a-zA-Z0-9_-]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^[_-]+|[_-]+$/g, '');
  return (s || 'x').slice(0, max);
}

function shortHash(tool: ToolDescriptor): string {
  return createHash('sha256').update(`${tool.serverId}\u0000${tool.accountId}\u0000${tool.name}`).digest('hex').slice(0, 6);
}

/**
 * Builds the table over every listed tool: `server__tool`, or `server_account__tool` when a
 * server has more than one account listed. A name that had to be shortened or that two tools
 * would share gets a short hash of the tool's identity, so the result does not depend on order.
 *
 * Why all tools and not only the offered ones: a model that names a Disabled tool anyway must be
 * told "not permitted" and the refusal recorded with the tool's real identity.
 */
export function buildToolTable(tools: readonly ToolDescriptor[]): ToolTable {
  const accountsPerServer = new Map<string, Set<string>>();
  for (const t of tools) {
    let set = accountsPerServer.get(t.serverId);
    if (!set) accountsPerServer.set(t.serverId, (set = new Set()));
    set.add(t.accountId);
  }
  const wanted = tools.map((tool) => {
    const server = slug(tool.serverLabel ?? tool.serverId, 24);
    const account = (accountsPerServer.get(tool.serverId)?.size ?? 1) > 1 ? `_${slug(tool.accountLabel ?? tool.accountId, 12)}` : '';
    const full = `${server}${account}__${slug(tool.name, 64)}`;
    return { tool, base: full.slice(0, 64), shortened: full.length > 64 };
  });
  const counts = new Map<string, number>();
  for (const w of wanted) counts.set(w.base, (counts.get(w.base) ?? 0) + 1);
  const byName = new Map<string, ToolEntry>();
  const entries: ToolEntry[] = [];
  for (const w of wanted) {
    let name = w.base;
    if (w.shortened || counts.get(w.base)! > 1) name = `${w.base.slice(0, 57)}_${shortHash(w.tool)}`;
    // Identical server, account and tool names listed twice would still collide: keep the first.
    if (byName.has(name)) continue;
    const entry = { modelName: name, tool: w.tool };
    byName.set(name, entry);
    entries.push(entry);
  }
  return { byName, entries };
}
