/**
 * Identities of servers and accounts: the endpoint hash and id generation.
 *
 * The endpoint hash is a hash of what actually runs or is contacted. A changed endpoint is a
 * changed identity: Always Allow grants made under the old hash fall back to Ask. It is part of
 * the gate's approval fingerprint, so it must be pure and stable across runs and platforms.
 */
import { randomBytes } from 'node:crypto';
import { endpointHash as canonicalEndpointHash, type Endpoint } from '../canonical/hashes';
import type { ServerDefinition, ServerDraft } from '../../../shared/domain/servers';

/**
 * What a server definition runs or contacts, in the shape the canonical hasher takes.
 *
 * stdio: {command, args, cwd}; http: the URL (hashed as origin + path). Env vars, headers, names
 * and timeouts are not part of the endpoint: they do not change what runs or where.
 */
export function endpointOf(def: ServerDefinition): Endpoint {
  // A built-in server runs Warden's own code: its endpoint is its name, in a form no spawned
  // command can take (a relative command with a colon is never resolved on PATH by Warden).
  if (def.transport === 'builtin') return { kind: 'stdio', command: `warden-builtin:${def.builtin}`, args: [], cwd: null };
  return def.transport === 'stdio'
    ? { kind: 'stdio', command: def.command, args: [...def.args], cwd: def.cwd ?? null }
    : { kind: 'http', url: def.url };
}

/**
 * sha256 (hex) of a server definition's endpoint, via the one canonical hasher
 * (electron/core/canonical), so the gate's fingerprint and the settings agree on identity.
 */
export function endpointHash(def: ServerDefinition): string {
  return canonicalEndpointHash(endpointOf(def));
}

/**
 * True when saving `next` over `old` ends the OAuth sign-in of `old`: it used OAuth and either no
 * longer does or its endpoint (origin + path) changes.
 *
 * Why: tokens were issued for the old endpoint; presenting them to a new address would hand them
 * to whoever answers there (token passthrough), so they are revoked and deleted instead.
 */
export function endsOAuthSignIn(old: ServerDefinition, next: ServerDraft | ServerDefinition): boolean {
  if (old.transport !== 'http' || old.auth.kind !== 'oauth') return false;
  if (next.transport !== 'http' || next.auth.kind !== 'oauth') return true;
  return canonicalEndpointHash({ kind: 'http', url: old.url }) !== canonicalEndpointHash({ kind: 'http', url: next.url });
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
