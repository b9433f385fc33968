/**
 * Configured model providers: settings, keys, the adapters built from them, and `ModelProviders`
 * for the chat loop.
 *
 * Built-in providers (the offline demo) are passed in by the host and listed first; they cannot be
 * edited, removed or given a key. Configured providers are Anthropic or OpenAI-compatible servers
 * whose settings live in `models.json` and whose keys live only in the keychain, bound to the
 * origin they were entered for (provider-keys.ts).
 *
 * A base URL moved to another origin removes the stored key instead of carrying it along: the key
 * was issued by the old host, and sending it to a new one is exactly the token passthrough a
 * careful client refuses. The person enters the key for the new host (Models says so), and a
 * compromised renderer that edits the URL can at worst make a key unusable, never read or
 * forward it. Nothing needs a confirmation dialog for that, because nothing is loosened.
 *
 * Why this file is longer than 450 lines: one class owns a provider's settings, its key and the
 * adapter built from both, so a change to any of them (a moved base URL drops its key; an adapter
 * built before a change is never used after it) is made in one place, in order.
 */
import {
  DEFAULT_BASE_URLS,
  isLoopbackUrl,
  keyOrigin,
  ModelId,
  type ProviderConfig,
  type ProviderKind,
  type ProviderView,
} from '../../../shared/domain/model-providers';
import type { ModelInfoView, ModelProblem } from '../../../shared/contract/models';
import { WardenError } from '../../../shared/result';
import type { Clock, Journal } from '../ports';
import { systemClock } from '../ports';
import { sanitizeForDisplay } from '../text/sanitize';
import { newEntityId } from '../settings/identity';
import type { AdapterOptions } from './adapter-common';
import { AnthropicProvider } from './anthropic-provider';
import { OpenAIProvider } from './openai-provider';
import { ModelError, type ModelProvider, type ModelProviders, type ProviderChoice } from './provider';
import { providerKeyName, type ProviderKeys } from './provider-keys';
import { redactingProvider } from './redacting-provider';
import type { Redactor } from '../redact/redactor';
import type { ProviderSettings } from './provider-settings';

/** A provider that ships with Warden (the offline demo): always listed, never configured. */
export interface BuiltinModelProvider {
  readonly choice: ProviderChoice;
  readonly provider: ModelProvider;
}

/** Timeouts and retry bounds for the network adapters (tests shorten them); never the URL or key. */
export type AdapterTuning = Omit<AdapterOptions, 'baseUrl' | 'apiKey'>;

/** What changed, for the `models:changed` event. */
export interface ProviderChange {
  providerId: string | null;
  reason: 'added' | 'updated' | 'removed' | 'key-set' | 'key-cleared';
}

/**
 * What a person is asked before conversations may go to a base URL: adding a provider, or moving
 * one to another address. `previousBaseUrl` is null when adding.
 */
export interface ProviderEndpointQuestion {
  action: 'add' | 'move';
  kind: ProviderKind;
  label: string;
  baseUrl: string;
  previousBaseUrl: string | null;
}

/** Asks the person (main: a native dialog); resolves true only if they chose to continue. */
export type ProviderEndpointConfirmer = (question: ProviderEndpointQuestion) => Promise<boolean>;

export interface ModelProviderServiceOptions {
  settings: ProviderSettings;
  /**
   * Asked before a base URL is saved (a new provider, or a provider moved to another address):
   * conversations (messages, tool results, server instructions) are sent there, and the renderer,
   * which has no network of its own, must not be able to choose that place alone. Absent (tests,
   * the browser test host): saved as requested, as server definitions are.
   */
  confirmEndpoint?: ProviderEndpointConfirmer;
  keys: ProviderKeys;
  builtins?: readonly BuiltinModelProvider[];
  adapter?: AdapterTuning;
  /** Provider changes are recorded here (`model.provider-changed`; never a key). */
  journal?: Journal;
  clock?: Clock;
  /** Id generator (slug + random suffix by default). */
  newId?: (label: string) => string;
  /**
   * The app's redactor: every provider handed out sends and receives through it
   * (redacting-provider.ts). Absent (a core without a ledger holds no registered secrets): as is.
   */
  redactor?: Redactor;
}

/** How long a connection test may take in all, retries included. */
const TEST_DEADLINE_MS = 30_000;

/** Provider settings and keys, and the chat loop's way to a provider. */
export class ModelProviderService implements ModelProviders {
  private readonly builtins: readonly BuiltinModelProvider[];
  private readonly cache = new Map<string, { signature: string; provider: ModelProvider }>();
  /** Bumped on every change, so an adapter built from a key read before the change is not cached. */
  private generation = 0;
  private readonly listeners = new Set<(change: ProviderChange) => void>();
  private readonly clock: Clock;

  constructor(private readonly options: ModelProviderServiceOptions) {
    this.builtins = options.builtins ?? [];
    this.clock = options.clock ?? systemClock;
  }

  /** Subscribes to changes (the `models:changed` event); returns an unsubscribe function. */
  onChange(listener: (change: ProviderChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---- ModelProviders (the chat loop) --------------------------------------------------------

  /**
   * The provider configured under `providerId`, with its key for its current origin.
   * Rejects NOT_FOUND naming the id, or KEYCHAIN_UNAVAILABLE when the key cannot be read.
   */
  async get(providerId: string): Promise<ModelProvider> {
    const builtin = this.builtin(providerId);
    if (builtin) return this.redacting(builtin.provider);
    const config = this.require(providerId);
    const signature = `${config.kind}\n${config.baseUrl}`;
    const cached = this.cache.get(providerId);
    if (cached && cached.signature === signature) return cached.provider;
    const generation = this.generation;
    const apiKey = await this.options.keys.get(providerId, keyOrigin(config.baseUrl));
    const provider = this.redacting(this.build(config.kind, config.baseUrl, apiKey));
    if (generation === this.generation) this.cache.set(providerId, { signature, provider });
    return provider;
  }

  /** Every provider a person can choose: built-in ones first, then configured ones in the order they were added. */
  async list(): Promise<ProviderChoice[]> {
    return [
      ...this.builtins.map((b) => ({ ...b.choice })),
      ...this.configured().map((p) => ({ providerId: p.id, kind: p.kind, label: p.label, defaultModel: p.defaultModel })),
    ];
  }

  // ---- settings (the Models panel) -------------------------------------------------------------

  /** Every provider as the renderer may see it: hasKey flags, never a key. */
  async views(): Promise<{ providers: ProviderView[]; keychainProblem: string | null; settingsProblem: string | null }> {
    let present = new Set<string>();
    let keychainProblem: string | null = null;
    if (this.configured().length > 0) {
      try {
        present = await this.options.keys.present();
      } catch (error) {
        keychainProblem = error instanceof Error ? error.message : String(error);
      }
    }
    return {
      providers: [...this.builtins.map((b) => builtinView(b)), ...this.configured().map((p) => configuredView(p, present))],
      keychainProblem,
      settingsProblem: this.options.settings.problem,
    };
  }

  /**
   * Adds a provider. Its key (if given) is stored first, so a keychain that refuses it leaves
   * nothing behind; a settings file that cannot be written takes the key back out.
   */
  async add(input: { kind: ProviderKind; label: string; baseUrl?: string; defaultModel?: string | null; apiKey?: string }): Promise<ProviderView> {
    const baseUrl = input.baseUrl ?? DEFAULT_BASE_URLS[input.kind];
    const id = (this.options.newId ?? ((label: string) => newEntityId(label)))(input.label);
    if (this.builtin(id) || this.options.settings.get(id)) throw new WardenError('CONFLICT', `providerId: "${id}" is already taken; try again`);
    if (this.options.settings.problem) throw new WardenError('CONFLICT', `${this.options.settings.problem}. Changes are refused until it is fixed.`);
    // Asked before anything is stored: a refusal leaves no key and no settings behind.
    await this.confirmEndpoint({ action: 'add', kind: input.kind, label: input.label, baseUrl, previousBaseUrl: null });
    const origin = keyOrigin(baseUrl);
    if (input.apiKey !== undefined) await this.options.keys.set(id, origin, input.apiKey);
    try {
      this.options.settings.update((draft) => {
        draft.push({ id, kind: input.kind, label: input.label, baseUrl, defaultModel: input.defaultModel ?? null });
      });
    } catch (error) {
      if (input.apiKey !== undefined) await this.options.keys.removeAll(id).catch(() => undefined);
      throw error;
    }
    this.changed({ providerId: id, reason: 'added' });
    await this.record(id, 'added', { keyStored: input.apiKey !== undefined });
    return this.view(id);
  }

  /**
   * Changes label, base URL or default model. A base URL on another origin removes the key that
   * was stored for the old one (see the file comment); `keyRemoved` says so.
   */
  async update(input: { providerId: string; label?: string; baseUrl?: string; defaultModel?: string | null }): Promise<{ provider: ProviderView; keyRemoved: boolean }> {
    const before = this.requireConfigurable(input.providerId);
    const baseUrl = input.baseUrl ?? before.baseUrl;
    const oldOrigin = keyOrigin(before.baseUrl);
    const newOrigin = keyOrigin(baseUrl);
    const moved = oldOrigin !== newOrigin;
    if (baseUrl !== before.baseUrl) {
      await this.confirmEndpoint({ action: 'move', kind: before.kind, label: input.label ?? before.label, baseUrl, previousBaseUrl: before.baseUrl });
    }
    // Only names are listed (no value is read) to learn whether a key is about to stop applying.
    const hadKey = moved ? (await this.presentOrEmpty()).has(providerKeyName(before.id, oldOrigin)) : false;
    this.options.settings.update((draft) => {
      const p = draft.find((d) => d.id === before.id)!;
      if (input.label !== undefined) p.label = input.label;
      p.baseUrl = baseUrl;
      if (input.defaultModel !== undefined) p.defaultModel = input.defaultModel;
    });
    let keyRemoved = false;
    if (moved) {
      // The settings now point elsewhere; the old key is unusable from here on (lookups are by the
      // new origin) even if deleting it fails, so a keychain error only leaves an unused entry.
      keyRemoved = hadKey;
      await this.options.keys.removeExcept(before.id, newOrigin).catch(() => undefined);
    }
    this.changed({ providerId: before.id, reason: 'updated' });
    await this.record(before.id, 'updated', { movedFrom: moved ? oldOrigin : null, keyRemoved });
    return { provider: await this.view(before.id), keyRemoved };
  }

  /** Removes a provider and its keys. The keys go first: a keychain that is unavailable leaves everything as it was. */
  async remove(providerId: string): Promise<{ providerId: string; keyRemoved: boolean }> {
    const config = this.requireConfigurable(providerId);
    const removed = await this.options.keys.removeAll(providerId);
    this.options.settings.update((draft) => {
      draft.splice(
        draft.findIndex((d) => d.id === providerId),
        1,
      );
    });
    this.changed({ providerId, reason: 'removed' });
    await this.record(providerId, 'removed', { keyRemoved: removed > 0 }, config);
    return { providerId, keyRemoved: removed > 0 };
  }

  /** Stores the key for the provider's current origin (write-only: nothing returns it). */
  async setKey(providerId: string, apiKey: string): Promise<ProviderView> {
    const config = this.requireConfigurable(providerId);
    await this.options.keys.set(providerId, keyOrigin(config.baseUrl), apiKey);
    this.changed({ providerId, reason: 'key-set' });
    await this.record(providerId, 'key-set', {});
    return this.view(providerId);
  }

  /** Deletes the provider's keys. */
  async clearKey(providerId: string): Promise<{ provider: ProviderView; keyRemoved: boolean }> {
    this.requireConfigurable(providerId);
    const removed = await this.options.keys.removeAll(providerId);
    this.changed({ providerId, reason: 'key-cleared' });
    await this.record(providerId, 'key-cleared', { keyRemoved: removed > 0 });
    return { provider: await this.view(providerId), keyRemoved: removed > 0 };
  }

  /** The provider's models; a provider failure is returned as a problem value the panel shows. */
  async listModels(providerId: string): Promise<{ models: ModelInfoView[] | null; problem: ModelProblem | null }> {
    const provider = await this.get(providerId);
    try {
      const listed = await provider.listModels(AbortSignal.timeout(TEST_DEADLINE_MS));
      return { models: listed === null ? null : cleanModels(listed), problem: null };
    } catch (error) {
      return { models: null, problem: toProblem(error) };
    }
  }

  /**
   * Tests the connection: lists the models (which proves the key and the base URL) and checks the
   * chosen model is among them; where the API cannot list models, asks the model for one token.
   */
  async test(providerId: string, model?: string): Promise<{
    ok: boolean;
    message: string;
    problem: ModelProblem | null;
    checked: 'list-models' | 'one-token-request' | 'nothing';
    modelCount: number | null;
    latencyMs: number;
  }> {
    const started = performance.now();
    const provider = await this.get(providerId);
    const config = this.options.settings.get(providerId);
    const where = config ? new URL(config.baseUrl).host : (this.builtin(providerId)?.choice.label ?? providerId);
    const chosen = model ?? config?.defaultModel ?? this.builtin(providerId)?.choice.defaultModel ?? null;
    const signal = AbortSignal.timeout(TEST_DEADLINE_MS);
    const latency = () => Math.round(performance.now() - started);
    let checked: 'list-models' | 'one-token-request' | 'nothing' = 'list-models';
    try {
      const listed = await provider.listModels(signal);
      if (listed !== null) {
        const models = cleanModels(listed);
        if (chosen !== null && !models.some((m) => m.id === chosen)) {
          return {
            ok: false,
            message: `Connected to ${where} (${models.length} models listed), but it does not offer "${chosen}". Pick a model from its list.`,
            problem: { code: 'MODEL_NOT_FOUND', message: `${where} does not list "${chosen}".`, status: null },
            checked,
            modelCount: models.length,
            latencyMs: latency(),
          };
        }
        return {
          ok: true,
          message: `Connected to ${where}: ${models.length} model${models.length === 1 ? '' : 's'} listed${chosen ? `, including "${chosen}"` : ''}.`,
          problem: null,
          checked,
          modelCount: models.length,
          latencyMs: latency(),
        };
      }
      if (chosen === null) {
        return {
          ok: false,
          message: `${where} cannot list its models. Enter a model id as the default model, then test again.`,
          problem: null,
          checked: 'nothing',
          modelCount: null,
          latencyMs: latency(),
        };
      }
      checked = 'one-token-request';
      for await (const event of provider.stream({
        model: chosen,
        system: '',
        messages: [{ role: 'user', text: 'Reply with the word OK.' }],
        tools: [],
        maxTokens: 1,
        signal,
      })) {
        if (event.type === 'finish') break;
      }
      return { ok: true, message: `Connected to ${where}: "${chosen}" answered.`, problem: null, checked, modelCount: null, latencyMs: latency() };
    } catch (error) {
      let problem = toProblem(error);
      if (problem.code === 'CANCELLED' && signal.aborted) {
        problem = { code: 'TIMEOUT', message: `No complete answer from ${where} within ${TEST_DEADLINE_MS / 1000} s.`, status: null };
      }
      return { ok: false, message: problem.message, problem, checked, modelCount: null, latencyMs: latency() };
    }
  }

  // ---- internals -----------------------------------------------------------------------------

  /** Throws DENIED unless the person confirmed conversations going to this base URL (no confirmer: allowed). */
  private async confirmEndpoint(question: ProviderEndpointQuestion): Promise<void> {
    const confirm = this.options.confirmEndpoint;
    if (!confirm) return;
    const yes = await confirm(question).catch(() => false);
    if (yes !== true) {
      throw new WardenError('NOT_CONFIRMED', `Conversations were not confirmed to go to ${question.baseUrl} in the dialog; nothing was saved`);
    }
  }

  /** Configured providers, minus any a hand-edited file gave a built-in's id (the built-in wins). */
  private configured(): readonly ProviderConfig[] {
    return this.options.settings.list().filter((p) => !this.builtin(p.id));
  }

  private builtin(providerId: string): BuiltinModelProvider | undefined {
    return this.builtins.find((b) => b.choice.providerId === providerId);
  }

  private require(providerId: string): ProviderConfig {
    const config = this.builtin(providerId) ? undefined : this.options.settings.get(providerId);
    if (!config) {
      const why = this.options.settings.problem ? ` (the providers file could not be loaded: ${this.options.settings.problem})` : '';
      throw new WardenError('NOT_FOUND', `providerId: no model provider "${providerId}"${why}`);
    }
    return config;
  }

  private requireConfigurable(providerId: string): ProviderConfig {
    const builtin = this.builtin(providerId);
    if (builtin) throw new WardenError('CONFLICT', `providerId: "${builtin.choice.label}" is built into Warden and cannot be changed, removed or given a key`);
    return this.require(providerId);
  }

  private async presentOrEmpty(): Promise<Set<string>> {
    try {
      return await this.options.keys.present();
    } catch {
      return new Set();
    }
  }

  private async view(providerId: string): Promise<ProviderView> {
    const config = this.require(providerId);
    return configuredView(config, await this.presentOrEmpty());
  }

  /** The one way out to a provider: through the redactor, both ways. */
  private redacting(provider: ModelProvider): ModelProvider {
    return this.options.redactor ? redactingProvider(provider, this.options.redactor) : provider;
  }

  private build(kind: ProviderKind, baseUrl: string, apiKey: string | null): ModelProvider {
    const options: AdapterOptions = { ...this.options.adapter, baseUrl, apiKey };
    return kind === 'anthropic' ? new AnthropicProvider(options) : new OpenAIProvider(options);
  }

  private changed(change: ProviderChange): void {
    this.generation += 1;
    if (change.providerId) this.cache.delete(change.providerId);
    for (const l of this.listeners) l(change);
  }

  /** Appends `model.provider-changed` (who, what, where; never a key). A journal failure does not undo the change. */
  private async record(providerId: string, change: ProviderChange['reason'], extra: Record<string, unknown>, config = this.options.settings.get(providerId)): Promise<void> {
    if (!this.options.journal || !config) return;
    const payload = { providerId, kind: config.kind, label: config.label, baseUrl: config.baseUrl, change, at: this.clock.now(), ...extra };
    await this.options.journal.append([{ type: 'model.provider-changed', payload }]).catch((error: unknown) => {
      console.error('[warden] recording a model provider change failed', error);
    });
  }
}

function builtinView(b: BuiltinModelProvider): ProviderView {
  return {
    providerId: b.choice.providerId,
    kind: b.choice.kind,
    label: b.choice.label,
    baseUrl: null,
    defaultModel: b.choice.defaultModel,
    builtin: true,
    hasKey: false,
    keyRequired: false,
  };
}

function configuredView(p: ProviderConfig, present: Set<string>): ProviderView {
  return {
    providerId: p.id,
    kind: p.kind,
    label: p.label,
    baseUrl: p.baseUrl,
    defaultModel: p.defaultModel,
    builtin: false,
    hasKey: present.has(providerKeyName(p.id, keyOrigin(p.baseUrl))),
    keyRequired: p.kind === 'anthropic' || !isLoopbackUrl(p.baseUrl),
  };
}

/**
 * A provider's model list as the renderer may see it: ids that are usable model ids (others are
 * dropped), labels sanitized (they are the provider's text), duplicates removed.
 */
export function cleanModels(models: ReadonlyArray<{ id: string; label: string }>): ModelInfoView[] {
  const seen = new Set<string>();
  const out: ModelInfoView[] = [];
  for (const m of models) {
    const id = ModelId.safeParse(m.id);
    if (!id.success || seen.has(id.data)) continue;
    seen.add(id.data);
    out.push({ id: id.data, label: sanitizeForDisplay(m.label).slice(0, 200) || id.data });
  }
  return out;
}

/** A ModelError as a problem value; a WardenError (e.g. KEYCHAIN_UNAVAILABLE) is rethrown as the contract error it is. */
function toProblem(error: unknown): ModelProblem {
  if (error instanceof ModelError) return { code: error.code, message: error.message, status: error.status, ...(error.failure ? { failure: error.failure } : {}) };
  if (error instanceof WardenError) throw error;
  return { code: 'PROVIDER_ERROR', message: error instanceof Error ? error.message : String(error), status: null };
}
