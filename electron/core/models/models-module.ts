/**
 * Assembles the model providers part of the core (settings file, keychain entries, adapters,
 * `models:*` handlers and the `models:changed` event), so app-core wires it with a few lines.
 */
import type { modelsChannels } from '../../../shared/contract/models';
import type { Handlers } from '../dispatch';
import type { CoreEvents } from '../events';
import type { Clock, Journal } from '../ports';
import type { Redactor } from '../redact/redactor';
import type { ListableSecretStore } from '../secrets/keytar-secret-store';
import { memorySettingsStore } from '../settings/memory-settings-store';
import type { SettingsStore } from '../settings/settings-store';
import { ProviderKeys } from './provider-keys';
import { ModelProviderService, type AdapterTuning, type BuiltinModelProvider, type ProviderEndpointConfirmer } from './provider-service';
import { ProviderSettings } from './provider-settings';

/** What a host may pass in; everything has a safe default. */
export interface ModelsModuleOptions {
  /** Where configured providers live (`models.json` in the app). Default: in memory. */
  settingsStore?: SettingsStore;
  /** Providers that ship with Warden (the offline demo), listed first and never editable. */
  builtins?: readonly BuiltinModelProvider[];
  /** Adapter timeouts and retry bounds (tests shorten them). */
  adapter?: AdapterTuning;
  /** Native confirmation before conversations may go to a base URL (see ModelProviderServiceOptions). */
  confirmEndpoint?: ProviderEndpointConfirmer;
}

type ModelsChannel = keyof typeof modelsChannels;

/** Builds the provider service over the shared keychain and its contract handlers. */
export function createModelsModule(
  options: ModelsModuleOptions & {
    /** The one keychain store the core uses (shared with server secrets). */
    secrets: ListableSecretStore;
    /** Told every key read or written (the ledger's redactor), whichever store is passed. */
    onSecretValue?: (value: string) => void;
    /** The app's redactor, between every provider and the rest of Warden (redacting-provider.ts). */
    redactor?: Redactor;
    journal: Journal;
    clock: Clock;
    events: CoreEvents;
  },
): { service: ModelProviderService; handlers: Pick<Handlers, ModelsChannel>; dispose: () => void } {
  const service = new ModelProviderService({
    settings: ProviderSettings.open(options.settingsStore ?? memorySettingsStore()),
    keys: new ProviderKeys(options.secrets, options.onSecretValue),
    builtins: options.builtins,
    adapter: options.adapter,
    confirmEndpoint: options.confirmEndpoint,
    journal: options.journal,
    clock: options.clock,
    ...(options.redactor ? { redactor: options.redactor } : {}),
  });
  const dispose = service.onChange((c) => options.events.emit('models:changed', { providerId: c.providerId, reason: c.reason }));
  const handlers: Pick<Handlers, ModelsChannel> = {
    'models:list-providers': () => service.views(),
    'models:add-provider': async (r) => ({ provider: await service.add(r) }),
    'models:update-provider': (r) => service.update(r),
    'models:remove-provider': (r) => service.remove(r.providerId),
    'models:set-key': async (r) => ({ provider: await service.setKey(r.providerId, r.apiKey) }),
    'models:clear-key': (r) => service.clearKey(r.providerId),
    'models:list-models': (r) => service.listModels(r.providerId),
    'models:test': (r) => service.test(r.providerId, r.model),
  };
  return { service, handlers, dispose };
}
