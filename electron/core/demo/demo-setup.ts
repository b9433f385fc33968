/**
 * Offers the built-in demo server on first run: when Warden starts with no servers configured
 * and has never offered it, the demo server is added once and a preference records that it was
 * offered, so removing it sticks (it is never re-added on a later start).
 */
import type { ServerDraft } from '../../../shared/domain/servers';
import type { ServerService } from '../settings/server-service';
import type { SettingsRepository } from '../settings/settings-repository';
import { openDemoTransport } from './demo-server';

/** The preference key recording that the demo server was offered (true once decided). */
export const DEMO_OFFERED_PREFERENCE = 'demoServerOffered';

/** The definition of the demo server as it is added (its id is chosen by the server service). */
export const DEMO_SERVER_DRAFT: ServerDraft = { name: 'Warden demo (built-in)', transport: 'builtin', builtin: 'demo' };

/**
 * Adds the demo server if this is a first run with no servers; records the decision either way.
 *
 * Why a preference and not "no servers": a person who removed the demo (or all servers) must not
 * see it come back. A first run that already has servers (e.g. an imported settings file) also
 * records the decision, so the demo never appears later unasked.
 */
export async function offerDemoServerOnFirstRun(deps: { settings: SettingsRepository; service: ServerService }): Promise<'added' | 'already-offered' | 'has-servers' | 'settings-problem'> {
  if (deps.settings.problem) return 'settings-problem';
  if (deps.settings.get().preferences[DEMO_OFFERED_PREFERENCE] === true) return 'already-offered';
  const hasServers = deps.service.definitions().length > 0;
  if (!hasServers) await deps.service.addServer({ definition: DEMO_SERVER_DRAFT });
  deps.settings.update((d) => {
    d.preferences[DEMO_OFFERED_PREFERENCE] = true;
  });
  return hasServers ? 'has-servers' : 'added';
}

/**
 * Opens the in-memory transport of a built-in server, for the connection layer.
 *
 * Why here: the connection layer knows only that a definition is `builtin`; which code serves
 * each built-in lives with that code.
 */
export async function openBuiltinTransport(builtin: 'demo') {
  switch (builtin) {
    case 'demo':
      return (await openDemoTransport()).transport;
  }
}
