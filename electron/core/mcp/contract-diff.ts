/**
 * A server's tool listing held against the contracts pinned for it: each listed tool hashed
 * field by field, and what was added, removed or changed since the pins. Pure — no transport, no
 * clock, no state — so every rule of contract pinning is tested on plain values
 * (`test/unit/mcp/contract-diff.test.ts`); `tool-listing.ts` feeds it what a server lists.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson, contractHash, sha256Hex } from '../canonical';
import { sanitizeServerText } from '../text/sanitize';
import { TEXT_LIMITS } from './connection-common';

/** Which parts of a tool's contract changed between two discoveries. */
export type ContractField = 'title' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations';
const CONTRACT_FIELDS: readonly ContractField[] = ['title', 'description', 'inputSchema', 'outputSchema', 'annotations'];
/** What a pin covers: the tool's contract fields plus the server's instructions. */
export type PinnedField = ContractField | 'instructions';
const PINNED_FIELDS: readonly PinnedField[] = [...CONTRACT_FIELDS, 'instructions'];

/** A tool as discovered on one (server, account), with its pinned hashes. */
export interface DiscoveredTool {
  serverId: string;
  accountId: string;
  name: string;
  title?: string;
  /**
   * The server's description through the sanitizer (and capped): the only form shown or
   * forwarded, to a person or a model. The raw text only feeds the contract hash.
   */
  displayDescription?: string;
  /**
   * Why the raw description reads like instructions to a model, in plain words (absent: it does
   * not). Read once here, from the raw text: orders hidden in invisible characters are gone from
   * the display form.
   */
  descriptionFlags?: readonly string[];
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  contractHash: string;
  /** Why the tool cannot be used (see ToolDescriptor.unusable), decided when it was listed. */
  unusable?: string;
  /** One hash per contract field, so a change can be reported as "description changed". */
  fieldHashes: Record<PinnedField, string>;
}

/** Why a listing was made: the first of a connection object, or a re-list for one of three reasons. */
export type ListingTrigger = 'initial' | 'list_changed' | 'reconnect' | 'recheck';

/** What changed between the pinned and the newly discovered tools of one (server, account). */
export interface ToolsChange {
  serverId: string;
  accountId: string;
  added: string[];
  removed: string[];
  /** `fields` is empty when the earlier contract's fields are unknown (pins from an earlier run). */
  changed: Array<{ name: string; fields: PinnedField[]; oldHash: string; newHash: string }>;
  instructionsChanged: { oldHash: string | null; newHash: string } | null;
  /** The server's instructions hash in force after this discovery (journaled so pins survive restarts). */
  instructionsHash: string;
  /** Contract hashes before (pinned) and after this discovery, by tool name. */
  oldHashes: Record<string, string>;
  newHashes: Record<string, string>;
  /**
   * 'initial' for the first discovery of this connection object, otherwise 'list_changed',
   * 'reconnect', or 'recheck' (a listing re-checked before a call: too old, or the last re-list failed).
   */
  trigger: ListingTrigger;
}

/**
 * The contracts one (server, account) is held to: a hash per tool and the instructions hash,
 * plus each tool's per-field hashes when this run listed it (pins from an earlier run have none).
 */
export interface Pins {
  tools: ReadonlyMap<string, string>;
  instructionsHash: string | null;
  fields: ReadonlyMap<string, Record<PinnedField, string>>;
}

/** What `compareListing` found. */
export interface ListingComparison {
  /** The listed tools by name (the first of a name listed twice). */
  tools: Map<string, DiscoveredTool>;
  /** Names the server listed more than once (only the first was kept). */
  duplicates: string[];
  change: ToolsChange;
  /** True when something was added, removed or changed (instructions included). */
  isChange: boolean;
  /** The pins after this listing: exactly what it listed. */
  pins: Pins;
}

/**
 * A discovered tool with its pinned hash. The pinned `contractHash` covers the tool's own
 * contract AND the server's instructions (instructions are pinned the same way): instructions
 * reach the model with every tool, so new instructions change what an Always Allow grant
 * allowed — every tool of the server then reports `instructions` as a changed field, the change
 * is journaled per tool, survives restarts through the journal, and grants drop to ask.
 */
export function describeTool(tool: Tool, ids: { serverId: string; accountId: string }, serverInstructionsHash: string): DiscoveredTool {
  const contract = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
  };
  const fieldHashes = {
    ...Object.fromEntries(CONTRACT_FIELDS.map((f) => [f, sha256Hex(canonicalJson({ f, v: (contract as Record<string, unknown>)[f] ?? null }))])),
    instructions: serverInstructionsHash,
  } as Record<PinnedField, string>;
  const description = tool.description !== undefined ? sanitizeServerText(tool.description, { maxBytes: TEXT_LIMITS.description, flag: true }) : undefined;
  return {
    serverId: ids.serverId,
    accountId: ids.accountId,
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(description !== undefined ? { displayDescription: description.text } : {}),
    ...(description !== undefined && description.flags.length > 0 ? { descriptionFlags: Object.freeze(description.flags) } : {}),
    inputSchema: tool.inputSchema as Record<string, unknown>,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
    ...(tool.annotations ? { annotations: tool.annotations as Record<string, unknown> } : {}),
    contractHash: sha256Hex(canonicalJson({ tool: contractHash(contract), serverInstructions: serverInstructionsHash })),
    fieldHashes,
  };
}

/**
 * Holds a complete listing (every page) against the pins: which tools were added, removed or
 * changed and in which fields, and whether the instructions changed. Without pins (nothing ever
 * recorded for this server and account) the listing is the initial one and nothing counts as
 * changed.
 */
export function compareListing(
  listed: readonly Tool[],
  pinned: Pins | undefined,
  context: { serverId: string; accountId: string; instructionsHash: string; trigger: ListingTrigger },
): ListingComparison {
  const { serverId, accountId, instructionsHash } = context;
  const tools = new Map<string, DiscoveredTool>();
  const duplicates: string[] = [];
  for (const tool of listed) {
    if (tools.has(tool.name)) duplicates.push(tool.name);
    else tools.set(tool.name, describeTool(tool, { serverId, accountId }, instructionsHash));
  }
  const change: ToolsChange = {
    serverId,
    accountId,
    added: [],
    removed: [],
    changed: [],
    instructionsChanged: null,
    instructionsHash,
    oldHashes: Object.fromEntries(pinned?.tools ?? []),
    newHashes: Object.fromEntries([...tools].map(([n, t]) => [n, t.contractHash])),
    trigger: pinned ? context.trigger : 'initial',
  };
  for (const [name, tool] of tools) {
    const oldHash = pinned?.tools.get(name);
    if (oldHash === undefined) change.added.push(name);
    else if (oldHash !== tool.contractHash) {
      const oldFields = pinned!.fields.get(name);
      const fields: PinnedField[] = oldFields ? PINNED_FIELDS.filter((f) => oldFields[f] !== tool.fieldHashes[f]) : [];
      // A pin from an earlier run has no per-field hashes; the instructions hash is still known.
      if (!oldFields && pinned!.instructionsHash !== null && pinned!.instructionsHash !== instructionsHash) fields.push('instructions');
      change.changed.push({ name, fields, oldHash, newHash: tool.contractHash });
    }
  }
  for (const name of pinned?.tools.keys() ?? []) if (!tools.has(name)) change.removed.push(name);
  if (pinned && pinned.instructionsHash !== instructionsHash) {
    change.instructionsChanged = { oldHash: pinned.instructionsHash, newHash: instructionsHash };
  }
  const isChange = change.added.length + change.removed.length + change.changed.length > 0 || change.instructionsChanged !== null;
  const pins: Pins = {
    tools: new Map([...tools].map(([n, t]) => [n, t.contractHash])),
    instructionsHash,
    fields: new Map([...tools].map(([n, t]) => [n, t.fieldHashes])),
  };
  return { tools, duplicates, change, isChange, pins };
}
