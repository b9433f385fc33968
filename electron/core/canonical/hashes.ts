/**
 * The hashes identities are pinned to: fingerprints (approval binding), tool contract hashes
 * (rug-pull detection) and server endpoint hashes (what actually runs or is contacted).
 */
import * as nodeCrypto from 'node:crypto';
import { canonicalJson } from './canonical-json';

/** Node's one-shot `crypto.hash` (Node ≥ 20.12): several times cheaper than createHash for short inputs. */
const oneShotHash = (nodeCrypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

/** sha256 hex of a UTF-8 string. */
export function sha256Hex(text: string): string {
  return oneShotHash ? oneShotHash('sha256', text, 'hex') : nodeCrypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The fields a fingerprint binds. */
export interface FingerprintInput {
  serverId: string;
  endpointHash: string;
  accountId: string;
  toolName: string;
  contractHash: string;
  /** Canonical JSON of the arguments (from `canonicalJson`). */
  canonicalArguments: string;
}

/**
 * Fingerprint of one exact tool call: sha256 over (serverId, endpointHash, accountId, toolName,
 * contractHash, canonical arguments).
 *
 * Why: an approval is for this call on this server/account/tool contract with these arguments;
 * recomputing it at approval time from current state detects any change. The fields are hashed
 * as a canonical JSON array, so no separator trick can make two different tuples collide.
 */
export function fingerprint(input: FingerprintInput): string {
  const { serverId, endpointHash, accountId, toolName, contractHash, canonicalArguments } = input;
  if (
    typeof serverId !== 'string' ||
    typeof endpointHash !== 'string' ||
    typeof accountId !== 'string' ||
    typeof toolName !== 'string' ||
    typeof contractHash !== 'string' ||
    typeof canonicalArguments !== 'string'
  ) {
    return sha256Hex(canonicalJson(['warden.fingerprint.v1', serverId, endpointHash, accountId, toolName, contractHash, canonicalArguments]));
  }
  // For an array of strings JSON.stringify writes exactly the canonical form (no keys, no
  // numbers): same bytes, same hash. The identity part repeats call after call, so its text is
  // memoized; only the arguments are escaped per call (this runs on every tool call).
  return sha256Hex(identityPrefix(serverId, endpointHash, accountId, toolName, contractHash) + JSON.stringify(canonicalArguments) + ']');
}

interface PrefixEntry {
  serverId: string;
  endpointHash: string;
  accountId: string;
  toolName: string;
  prefix: string;
}

/** Canonical text of the identity fields (`["warden.fingerprint.v1",…,` up to the arguments), by contract hash. */
const prefixes = new Map<string, PrefixEntry>();

function identityPrefix(serverId: string, endpointHash: string, accountId: string, toolName: string, contractHash: string): string {
  const hit = prefixes.get(contractHash);
  if (hit && hit.serverId === serverId && hit.endpointHash === endpointHash && hit.accountId === accountId && hit.toolName === toolName) return hit.prefix;
  const text = JSON.stringify(['warden.fingerprint.v1', serverId, endpointHash, accountId, toolName, contractHash]);
  const prefix = text.slice(0, -1) + ',';
  if (prefixes.size >= 1024) prefixes.clear();
  prefixes.set(contractHash, { serverId, endpointHash, accountId, toolName, prefix });
  return prefix;
}

/** The parts of an MCP tool definition its contract hash covers. */
export interface ToolContract {
  name: string;
  title?: string | null;
  description?: string | null;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

/**
 * Hash of a tool's canonical {name, title, description, inputSchema, outputSchema, annotations}.
 *
 * Why: Always Allow is pinned to it; a server that changes only a description (a rug pull)
 * changes this hash, and the grant falls back to Ask.
 */
export function contractHash(tool: ToolContract): string {
  return sha256Hex(
    canonicalJson({
      v: 'warden.contract.v1',
      name: tool.name,
      title: tool.title ?? null,
      description: tool.description ?? null,
      inputSchema: tool.inputSchema ?? null,
      outputSchema: tool.outputSchema ?? null,
      annotations: tool.annotations ?? null,
    }),
  );
}

/** What a server runs (stdio) or contacts (http). */
export type Endpoint =
  | { kind: 'stdio'; command: string; args?: readonly string[]; cwd?: string | null }
  | { kind: 'http'; url: string };

/**
 * Hash of what a server actually runs or contacts: stdio {command, args, cwd}; http {origin + path}.
 *
 * Why: a changed endpoint is a changed identity; Always Allow granted under the old hash falls
 * back to Ask. Query strings and fragments are excluded for http (they carry tokens, not identity).
 */
export function endpointHash(endpoint: Endpoint): string {
  if (endpoint.kind === 'stdio') {
    return sha256Hex(
      canonicalJson({ v: 'warden.endpoint.v1', kind: 'stdio', command: endpoint.command, args: [...(endpoint.args ?? [])], cwd: endpoint.cwd ?? null }),
    );
  }
  const url = new URL(endpoint.url);
  return sha256Hex(canonicalJson({ v: 'warden.endpoint.v1', kind: 'http', origin: url.origin, path: url.pathname }));
}

/** Hash of a server's `instructions` text, pinned like a tool contract. */
export function instructionsHash(instructions: string | null | undefined): string {
  return sha256Hex(canonicalJson({ v: 'warden.instructions.v1', text: instructions ?? null }));
}
