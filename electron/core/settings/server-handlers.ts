/**
 * The servers:*, accounts:*, secrets:* contract handlers, and the events they push.
 * Thin: every rule lives in ServerService; this maps requests to calls.
 */
import type { Handlers } from '../dispatch';
import type { CoreEvents } from '../events';
import type { ServerService } from './server-service';

type ServersChannel =
  | 'servers:list'
  | 'servers:add'
  | 'servers:edit'
  | 'servers:remove'
  | 'accounts:list'
  | 'accounts:add'
  | 'accounts:rename'
  | 'accounts:remove'
  | 'secrets:set'
  | 'secrets:clear';

/**
 * Handlers for the server/account/secret channels, and forwarding of their changes to
 * the `servers:changed` event. Returns the handlers and an unsubscribe. (Which account of a
 * server is active is policy: `accounts:switch` lives with the permissions.)
 */
export function createServerHandlers(
  servers: ServerService,
  events: CoreEvents,
): { handlers: Pick<Handlers, ServersChannel>; dispose: () => void } {
  const offChange = servers.onChange((c) => events.emit('servers:changed', { serverId: c.serverId, reason: c.reason }));
  const handlers: Pick<Handlers, ServersChannel> = {
    'servers:list': () => servers.listServers(),
    'servers:add': (r) => servers.addServer(r),
    'servers:edit': (r) => servers.editServer(r),
    'servers:remove': (r) => servers.removeServer(r.serverId),
    'accounts:list': async (r) => ({ accounts: await servers.listAccounts(r.serverId) }),
    'accounts:add': (r) => servers.addAccount(r),
    'accounts:rename': (r) => servers.renameAccount(r.accountId, r.label),
    'accounts:remove': (r) => servers.removeAccount(r.accountId),
    'secrets:set': (r) => servers.setSecret(r),
    'secrets:clear': (r) => servers.clearSecret(r),
  };
  return {
    handlers,
    dispose: () => {
      offChange();
    },
  };
}
