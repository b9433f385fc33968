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

/** Server, account and tool: what a tool is, whatever it is called. */
function identityKey(tool: ToolDescriptor): string {
  return `${tool.serverId}\u0000${tool.accountId}\u0000${tool.name}`;
}

function identityHash(tool: ToolDescriptor): string {
  return createHash('sha256').update(identityKey(tool)).digest('hex');
}

/** `base` cut to leave room for `_` and the first `length` hex digits of the tool's identity hash. */
function hashed(base: string, tool: ToolDescriptor, length: number): string {
  return `${base.slice(0, 64 - 1 - length)}_${identityHash(tool).slice(0, length)}`;
}

/** Hash lengths tried in turn while two different tools still share a name. */
const HASH_LENGTHS = [6, 16, 32] as const;

/** The names that two or more different tools hold (the same tool listed twice is one holder). */
function sharedNames(names: readonly string[], tools: readonly ToolDescriptor[]): Set<string> {
  const holders = new Map<string, Set<string>>();
  names.forEach((name, i) => {
    const set = holders.get(name) ?? new Set<string>();
    set.add(identityKey(tools[i]!));
    holders.set(name, set);
  });
  return new Set([...holders].filter(([, set]) => set.size > 1).map(([name]) => name));
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
  // A name two different tools would share is lengthened with a hash of each one's identity, and
  // again with a longer one while a clash remains: a hashed name can equal another tool's plain
  // one (a server may name its tool after the hash it expects), and six hex digits can collide.
  // Every tool of a clash is renamed, so the result does not depend on listing order.
  let names = wanted.map((w) => (w.shortened ? hashed(w.base, w.tool, HASH_LENGTHS[0]) : w.base));
  for (const length of HASH_LENGTHS) {
    const shared = sharedNames(names, wanted.map((w) => w.tool));
    if (shared.size === 0) break;
    names = names.map((name, i) => (shared.has(name) ? hashed(wanted[i]!.base, wanted[i]!.tool, length) : name));
  }
  const byName = new Map<string, ToolEntry>();
  const entries: ToolEntry[] = [];
  wanted.forEach((w, i) => {
    const name = names[i]!;
    // The same server, account and tool listed twice: one entry. (Two different tools still
    // sharing a name after a 32-digit hash would mean a SHA-256 collision; the first is kept.)
    if (byName.has(name)) return;
    const entry = { modelName: name, tool: w.tool };
    byName.set(name, entry);
    entries.push(entry);
  });
  return { byName, entries };
}
