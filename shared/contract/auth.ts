/**
 * Contract entries for OAuth sign-in of remote servers.
 *
 * The renderer can start a sign-in, sign out and ask whether an account is signed in. It never
 * receives a token, a client secret or a verifier: status says only whether tokens exist, which
 * authorization server issued them and when they expire.
 */
import { z } from 'zod';
import { defineChannels } from '../contract-kit';
import { EntityId } from '../domain/servers';

/** One (server, account) whose OAuth session is meant. */
export const AuthTarget = z.object({ serverId: EntityId, accountId: EntityId }).strict();
export type AuthTarget = z.infer<typeof AuthTarget>;

/** Whether an account of an OAuth server is signed in. No secret values. */
export const AuthStatus = z
  .object({
    serverId: z.string(),
    accountId: z.string(),
    signedIn: z.boolean(),
    /** The authorization server that issued the current tokens. */
    issuer: z.string().nullable(),
    /** ISO time the access token expires, when the server said. */
    expiresAt: z.string().nullable(),
    /** True when Warden can renew the access token without asking the person. */
    canRefresh: z.boolean(),
    /** True while a sign-in for this account waits for the browser. */
    loginInProgress: z.boolean(),
  })
  .strict();
export type AuthStatus = z.infer<typeof AuthStatus>;

export const authChannels = defineChannels({
  /** Signs an account in: opens the authorization page in the system browser and waits for the loopback redirect. */
  'auth:login': {
    doc: 'Starts OAuth sign-in for a server account in the system browser; resolves once tokens are stored in the keychain.',
    request: AuthTarget,
    response: AuthStatus,
  },
  /** Signs an account out: revokes the refresh and access tokens where supported, deletes tokens, client registration and verifier from the keychain. */
  'auth:logout': {
    doc: 'Deletes the OAuth tokens, client registration and verifier of a server account from the keychain.',
    request: AuthTarget,
    response: AuthStatus.extend({
      removedEntries: z.number().int().nonnegative(),
      /** True when the authorization server confirmed revoking the tokens (RFC 7009). */
      revoked: z.boolean(),
    }).strict(),
  },
  /** Whether an account is signed in (never the token itself). */
  'auth:status': {
    doc: 'Whether a server account is signed in, by which authorization server, and until when.',
    request: AuthTarget,
    response: AuthStatus,
  },
});
