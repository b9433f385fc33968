/**
 * Identities of servers and accounts (DESIGN.md §3): the endpoint hash and id generation.
 *
 * The endpoint hash is a hash of what actually runs or is contacted. A changed endpoint is a
 * changed identity: Always Allow grants made under the old hash fall back to Ask. It is part of
 * the gate's approval fingerprint, so it must be pure and stable across runs and platforms.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ServerDefinition } from '../../../shared/domain/servers';

/**
 * The canonical object that the endpoint hash covers.
 *
 * stdio: {transport, command, args, cwd}; http: {transport, origin + path}. Env vars, headers,
 * names and timeouts are not part of the endpoint (they do not change what runs or where).
 * The query string and fragment are excluded too: the brief defines an http endpoint as origin +
 * path, and a changed query is the same server.
 */
export function endpointIdentity(def: ServerDefinition): Record<string, unknown> {
  if (def.transport === 'stdio') {
    return { transport: 'stdio', command: def.command, args: [...def.args], cwd: def.cwd ?? null };
  }
  const u = new URL(def.url);
  return { transport: 'http', endpoint: `${u.origin}${u.pathname}` };
}

/**
 * sha256 (hex) of the canonical endpoint identity of a server definition.
 *
 * Keys are emitted in a fixed order, so the same definition always hashes the same; a changed
 * command, argument, cwd, origin or path always changes it.
 */
export function endpointHash(def: ServerDefinition): string {
  return createHash('sha256').update(JSON.stringify(endpointIdentity(def))).digest('hex');
}

/** `My GitHub Server!` → `my-github-server` (max 40 chars; `server` when nothing is left). */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/g, '');
  return slug || 'server';
}

/**
 * A new stable id: slug of the display name + 8 random hex chars.
 *
 * Chosen once at creation and never recomputed (renaming keeps the id), so permissions and
 * keychain entries stay attached to the same server.
 */
export function newEntityId(name: string, random: (bytes: number) => Buffer = randomBytes): string {
  return `${slugify(name)}-${random(4).toString('hex')}`;
}
