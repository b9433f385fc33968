/**
 * Offers the built-in demo server on first run: when Warden starts with no servers configured
 * and has never offered it, the demo server is added once and a preference records that it was
 * offered, so removing it sticks (it is never re-added on a later start).
 */
import type { ServerDraft } from '../../../shared/domain/servers';
import type { PermissionMode } from '../../../shared/domain/operations';
import type { ToolRegistry } from '../gate/ports';
import type { PolicyStore } from '../policy/store';
import type { ServerService } from '../settings/server-service';
import type { SettingsRepository } from '../settings/settings-repository';

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
 * The demo's starting rules, like the prompt-injection lab's: reading notes and the inbox run at
 * once, saving a note asks, deleting notes is Disabled (never offered to a model, refused if
 * named anyway). Everything else keeps the built-in default (Ask).
 */
export const DEMO_LAB_RULES: ReadonlyArray<{ toolName: string; mode: PermissionMode }> = [
  { toolName: 'notes_list', mode: 'allow' },
  { toolName: 'read_inbox', mode: 'allow' },
  { toolName: 'notes_add', mode: 'ask' },
  { toolName: 'notes_delete', mode: 'disabled' },
];

/** The demo server's id and its first account, if the demo is configured. */
export function findDemoServer(service: Pick<ServerService, 'definitions' | 'accountsOf'>): { serverId: string; accountId: string } | null {
  const def = service.definitions().find((d) => d.transport === 'builtin' && d.builtin === 'demo');
  const account = def ? service.accountsOf(def.id)[0] : undefined;
  return def && account ? { serverId: def.id, accountId: account.id } : null;
}

/**
 * Sets the lab's rules on a newly added demo server, journaled like any rule change (source
 * `system`) and recorded as the demo's, so no screen says the person set them. Always Allow is pinned to the tools as the demo lists them, so it connects first; if
 * it cannot, the would-be Always Allow rules are set to Ask instead (never an unpinned grant).
 *
 * Why on first run only: a person's later changes to these rules are theirs to keep.
 */
export async function applyDemoLabRules(deps: {
  service: Pick<ServerService, 'definitions' | 'accountsOf'>;
  connect: (serverId: string, accountId: string) => Promise<unknown>;
  registry: Pick<ToolRegistry, 'getTool'>;
  policy: Pick<PolicyStore, 'set'>;
}): Promise<boolean> {
  const demo = findDemoServer(deps.service);
  if (!demo) return false;
  await deps.connect(demo.serverId, demo.accountId).catch(() => undefined);
  for (const rule of DEMO_LAB_RULES) {
    const tool = deps.registry.getTool(demo.serverId, demo.accountId, rule.toolName);
    const mode = rule.mode === 'allow' && !tool ? 'ask' : rule.mode;
    const pin = mode === 'allow' && tool ? { contractHash: tool.contractHash, endpointHash: tool.endpointHash } : null;
    await deps.policy.set({ scope: 'tool', serverId: demo.serverId, accountId: demo.accountId, toolName: rule.toolName, mode }, pin, 'system', 'demo');
  }
  return true;
}
