/**
 * Model providers: a cache of what main owns, refreshed from `models:changed`.
 *
 * No API key is ever stored here. The key field of a form holds a key in its own component state
 * until it is sent (models:add-provider / models:set-key go straight to the keychain in main);
 * the store only learns the `hasKey` flag main reports back.
 */
import type { ModelInfoView, ModelProblem, modelsChannels } from '../../../shared/contract/models';
import type { ProviderKind, ProviderView } from '../../../shared/domain/model-providers';
import type { z } from 'zod';
import { toShownError, unwrap, type ShownError } from '../api';
import type { SliceCreator } from './types';

/** What a connection test answered. */
export type ProviderTestResult = z.infer<(typeof modelsChannels)['models:test']['response']>;

export interface ModelsSlice {
  providers: ProviderView[];
  /** Why models.json could not be loaded, or null. */
  modelsSettingsProblem: string | null;
  /** Why hasKey flags could not be read, or null. */
  modelsKeychainProblem: string | null;
  modelsError: ShownError | null;
  /** Re-reads models:list-providers. Never throws; failures land in `modelsError`. */
  refreshProviders(): Promise<void>;
  /** Subscribes to `models:changed`; returns the unsubscribe function. */
  watchModels(): () => void;
  /** Adds a provider; the key (if any) goes to the keychain in the same request and is not kept. Throws ContractError. */
  addProvider(request: { kind: ProviderKind; label: string; baseUrl?: string; apiKey?: string }): Promise<ProviderView>;
  /** Changes label, base URL or default model; `keyRemoved` when the host changed. Throws ContractError. */
  updateProvider(request: { providerId: string; label?: string; baseUrl?: string; defaultModel?: string | null }): Promise<{ provider: ProviderView; keyRemoved: boolean }>;
  removeProvider(providerId: string): Promise<void>;
  /** Stores a key in the keychain (the value is not kept). */
  setProviderKey(providerId: string, apiKey: string): Promise<void>;
  clearProviderKey(providerId: string): Promise<void>;
  listProviderModels(providerId: string): Promise<{ models: ModelInfoView[] | null; problem: ModelProblem | null }>;
  testProvider(providerId: string, model?: string): Promise<ProviderTestResult>;
}

/** Creates the models slice; actions re-read from main after every change (main is the owner). */
export const createModelsSlice: SliceCreator<ModelsSlice> = ({ api }) => (set, get) => ({
  providers: [],
  modelsSettingsProblem: null,
  modelsKeychainProblem: null,
  modelsError: null,
  async refreshProviders() {
    try {
      const list = await unwrap(api().models.listProviders({}));
      set({ providers: list.providers, modelsSettingsProblem: list.settingsProblem, modelsKeychainProblem: list.keychainProblem, modelsError: null });
    } catch (error) {
      set({ modelsError: toShownError(error) });
    }
  },
  watchModels() {
    try {
      return api().models.onChanged(() => void get().refreshProviders());
    } catch (error) {
      set({ modelsError: toShownError(error) });
      return () => {};
    }
  },
  async addProvider(request) {
    const { provider } = await unwrap(api().models.addProvider(request));
    await get().refreshProviders();
    return provider;
  },
  async updateProvider(request) {
    const result = await unwrap(api().models.updateProvider(request));
    await get().refreshProviders();
    return result;
  },
  async removeProvider(providerId) {
    await unwrap(api().models.removeProvider({ providerId }));
    await get().refreshProviders();
  },
  async setProviderKey(providerId, apiKey) {
    await unwrap(api().models.setKey({ providerId, apiKey }));
    await get().refreshProviders();
  },
  async clearProviderKey(providerId) {
    await unwrap(api().models.clearKey({ providerId }));
    await get().refreshProviders();
  },
  listProviderModels: (providerId) => unwrap(api().models.listModels({ providerId })),
  testProvider: (providerId, model) => unwrap(api().models.test({ providerId, ...(model ? { model } : {}) })),
});
