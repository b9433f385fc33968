/**
 * Contract handlers for `auth:*` (shared/contract/auth.ts), as a factory the core wires to its
 * OAuthService.
 *
 * Typed from the auth contract itself, so this file compiles whether or not `authChannels` is
 * already spread into shared/ipc.ts; once it is, the returned object is exactly the
 * `Pick<Handlers, 'auth:login' | 'auth:logout' | 'auth:status'>` the core spreads in.
 */
import type { z } from 'zod';
import type { authChannels } from '../../../../shared/contract/auth';
import type { OAuthService } from './oauth-service';

type AuthChannels = typeof authChannels;

/** One handler per `auth:*` channel. */
export type AuthHandlers = {
  [C in keyof AuthChannels]: (request: z.infer<AuthChannels[C]['request']>) => Promise<z.infer<AuthChannels[C]['response']>>;
};

/** The `auth:login`, `auth:logout` and `auth:status` handlers over one OAuthService. */
export function createAuthHandlers(service: OAuthService): AuthHandlers {
  return {
    'auth:login': (target) => service.login(target),
    'auth:logout': (target) => service.logout(target),
    'auth:status': (target) => service.status(target),
  };
}
