/**
 * Contract entries for model providers: the providers a person configures, their API keys, the
 * models they offer and a connection test.
 *
 * An API key travels only renderer → main, once, in the `apiKey` field of `models:add-provider`
 * or `models:set-key`, and goes straight to the OS keychain. No response or event ever carries a
 * key: the renderer learns only `hasKey`.
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';
import { ApiKeyInput, ModelId, ProviderBaseUrl, ProviderKind, ProviderView } from '../domain/model-providers';
import { DisplayName, EntityId } from '../domain/servers';
import { ConnectFailure } from '../domain/connect-failure';

const Empty = z.object({}).strict();
/** A configured provider's id, or a built-in one (`demo`). */
const ProviderRef = z.object({ providerId: EntityId }).strict();

/** A model as the provider lists it (its label is the provider's text, sanitized by main). */
export const ModelInfoView = z.object({ id: z.string(), label: z.string() }).strict();
export type ModelInfoView = z.infer<typeof ModelInfoView>;

/** Why a request to the provider failed: the adapter's stable code and a sentence with the fix. */
export const ModelProblem = z
  .object({
    code: z.enum([
      'UNAUTHORIZED',
      'FORBIDDEN',
      'MODEL_NOT_FOUND',
      'RATE_LIMITED',
      'PROVIDER_ERROR',
      'BAD_REQUEST',
      'TIMEOUT',
      'STREAM_CUT',
      'NETWORK',
      'CANCELLED',
    ]),
    message: z.string(),
    status: z.number().int().nullable(),
    /** For NETWORK: which kind of failure (DNS, refused, TLS, dropped), as the core found it. */
    failure: ConnectFailure.optional(),
  })
  .strict();
export type ModelProblem = z.infer<typeof ModelProblem>;

/** Channels of the models domain. */
export const modelsChannels = defineChannels({
  /** Every provider a person can choose, built-in ones first; never a key. */
  'models:list-providers': {
    doc: 'Every model provider (the built-in demo and configured ones), with hasKey flags, never keys.',
    request: Empty,
    response: z
      .object({
        providers: z.array(ProviderView),
        /** Why models.json could not be loaded (names the file and field), or null. Changes are refused until it is fixed. */
        settingsProblem: z.string().nullable(),
        /** Why hasKey flags could not be read (keychain unavailable), or null. */
        keychainProblem: z.string().nullable(),
      })
      .strict(),
  },
  /** Adds a provider (id chosen by Warden); an optional key goes straight to the keychain. */
  'models:add-provider': {
    doc: 'Adds an Anthropic or OpenAI-compatible provider; the optional apiKey goes to the keychain, bound to the base URL’s host.',
    request: z
      .object({
        kind: ProviderKind,
        label: DisplayName,
        /** Defaults to the kind's official API. */
        baseUrl: ProviderBaseUrl.optional(),
        defaultModel: ModelId.nullable().optional(),
        apiKey: ApiKeyInput.optional(),
      })
      .strict(),
    response: z.object({ provider: ProviderView }).strict(),
  },
  /**
   * Changes a provider's label, base URL or default model. A base URL on another host removes the
   * stored key (it was entered for the old host and is never sent to a new one).
   */
  'models:update-provider': {
    doc: 'Changes label, base URL or default model; moving to another host removes the stored key (keyRemoved: true).',
    request: z
      .object({
        providerId: EntityId,
        label: DisplayName.optional(),
        baseUrl: ProviderBaseUrl.optional(),
        defaultModel: ModelId.nullable().optional(),
      })
      .strict(),
    response: z.object({ provider: ProviderView, keyRemoved: z.boolean() }).strict(),
  },
  /** Removes a provider and its key from the keychain. */
  'models:remove-provider': {
    doc: 'Removes a provider and deletes its key from the keychain.',
    request: ProviderRef,
    response: z.object({ providerId: EntityId, keyRemoved: z.boolean() }).strict(),
  },
  /** Stores a provider's API key in the keychain (write-only: never returned). */
  'models:set-key': {
    doc: 'Stores an API key in the OS keychain for the provider’s current host; the response only says it is set.',
    request: z.object({ providerId: EntityId, apiKey: ApiKeyInput }).strict(),
    response: z.object({ provider: ProviderView }).strict(),
  },
  /** Deletes a provider's API key from the keychain. */
  'models:clear-key': {
    doc: 'Deletes a provider’s API key from the OS keychain.',
    request: ProviderRef,
    response: z.object({ provider: ProviderView, keyRemoved: z.boolean() }).strict(),
  },
  /** The models the provider offers, where its API can list them. */
  'models:list-models': {
    doc: 'Lists the provider’s models (null when its API cannot list them); a failure is a problem value, not an error.',
    request: ProviderRef,
    response: z.object({ models: z.array(ModelInfoView).nullable(), problem: ModelProblem.nullable() }).strict(),
  },
  /** Checks that the provider answers with this key: lists its models, or sends a one-token request. */
  'models:test': {
    doc: 'Tests the connection: lists models (or, where the API cannot list them, asks the model for one token).',
    request: z.object({ providerId: EntityId, model: ModelId.optional() }).strict(),
    response: z
      .object({
        ok: z.boolean(),
        /** A sentence for the person: what was checked and what came back. */
        message: z.string(),
        problem: ModelProblem.nullable(),
        /** What the test did. */
        checked: z.enum(['list-models', 'one-token-request', 'nothing']),
        /** How many models the provider listed (null when it did not list them). */
        modelCount: z.number().int().nonnegative().nullable(),
        latencyMs: z.number().nonnegative(),
      })
      .strict(),
  },
});

/** Events of the models domain (no payload ever carries a key). */
export const modelsEvents = defineEvents({
  /** A provider was added, changed or removed, or its key was set or cleared. */
  'models:changed': {
    doc: 'Providers or their key flags changed; re-read models:list-providers.',
    payload: z.object({ providerId: z.string().nullable(), reason: z.string() }).strict(),
  },
});
