/**
 * Model providers a person configures (Anthropic, or any OpenAI-compatible server), as the
 * `models.json` settings file stores them and as the renderer sees them.
 *
 * API keys are never part of these shapes: a key lives only in the OS keychain, bound to the
 * origin (scheme, host, port) it was entered for, and the renderer learns only `hasKey`.
 *
 * Pure: no node:*, no electron.
 */
import { z } from 'zod';
import { makeHiddenVisible } from '../display';
import { DisplayName, EntityId, isLoopbackHost } from './servers';

/** The adapters a person can configure; the offline demo is built in and never configured. */
export const ProviderKind = z.enum(['anthropic', 'openai']);
export type ProviderKind = z.infer<typeof ProviderKind>;

/** Where each kind's official API lives; the starting base URL of a new provider. */
export const DEFAULT_BASE_URLS: Readonly<Record<ProviderKind, string>> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
};

/**
 * Why `raw` is not an acceptable provider base URL, or null if it is.
 *
 * https anywhere, plain http only on loopback: the API key travels in a header of every request,
 * and over plain http to another host anyone on the path could read it. No user:password (the URL
 * is stored in the settings file), no query or fragment (a key pasted as `?key=…` would be stored
 * in the settings file too, and the SDKs append their paths to the base URL).
 */
export function providerUrlProblem(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'expected an absolute URL such as https://api.openai.com/v1 or http://127.0.0.1:11434/v1';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return `scheme ${u.protocol} is not allowed (use https)`;
  if (u.protocol === 'http:' && !isLoopbackHost(u.hostname)) {
    return `plain http is only allowed on this machine (127.0.0.1, ::1, localhost), so a key is never sent unencrypted; use https for ${u.hostname}`;
  }
  if (u.username || u.password) return 'must not contain a username or password (the API key goes in the keychain)';
  if (u.search || raw.includes('?')) return 'must not contain a query (?…); an API key goes in the keychain, never in the URL';
  if (u.hash || raw.includes('#')) return 'must not contain a fragment (#…)';
  return null;
}

/** A base URL, trimmed and without trailing slashes (the SDKs append `/v1/messages`, `/chat/completions`). */
export const ProviderBaseUrl = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(2048, 'must be at most 2048 characters')
  .superRefine((raw, ctx) => {
    const problem = providerUrlProblem(raw);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .transform((raw) => raw.replace(/\/+$/, ''));

/**
 * The origin an API key is bound to: `https://api.anthropic.com`, `http://127.0.0.1:11434`.
 *
 * Why the origin and not the whole URL: a key belongs to a server; another path on the same
 * server is the same party, another host or port is not.
 */
export function keyOrigin(baseUrl: string): string {
  return new URL(baseUrl).origin;
}

/** True when the base URL is on this machine (a local server that usually needs no key). */
export function isLoopbackUrl(baseUrl: string): boolean {
  try {
    return isLoopbackHost(new URL(baseUrl).hostname);
  } catch {
    return false;
  }
}

/**
 * A model id as the provider names it: `claude-sonnet-4-5`, `gpt-4.1`, `llama3.1:8b`,
 * `openrouter/auto`. Printable, no whitespace. A provider's model list is untrusted, and the id is
 * shown in the chat header and dialogs, so characters that display as nothing or reorder what
 * follows (bidi overrides, zero-width marks) are refused rather than escaped: no real model id
 * needs one.
 */
export const ModelId = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  // eslint-disable-next-line no-control-regex
  .regex(/^[^\s\u0000-\u001f\u007f]+$/, 'must be a model id without spaces or control characters')
  .refine((id) => makeHiddenVisible(id) === id, 'must not contain invisible or direction-changing characters');

/**
 * An API key as a person pastes it: surrounding whitespace trimmed (a trailing newline from a
 * copy is the common mistake), then printable ASCII only, because it is sent as an HTTP header
 * value and a newline there would split the header. The message never repeats the value.
 */
export const ApiKeyInput = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(4096, 'must be at most 4096 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces, as API keys are');

/** One configured provider as stored in `models.json` (no key: that is in the keychain). */
export const ProviderConfig = z
  .object({
    id: EntityId,
    kind: ProviderKind,
    label: DisplayName,
    baseUrl: ProviderBaseUrl,
    /** The model new conversations with this provider start with; null until a person picks one. */
    defaultModel: ModelId.nullable(),
  })
  .strict();
export type ProviderConfig = z.infer<typeof ProviderConfig>;

/** A provider as the renderer sees it: configured ones and the built-in offline demo. */
export const ProviderView = z
  .object({
    providerId: z.string().min(1).max(80),
    kind: z.enum(['anthropic', 'openai', 'demo']),
    label: z.string(),
    /** Null for built-in providers (no network). */
    baseUrl: z.string().nullable(),
    defaultModel: z.string().nullable(),
    /** Built-in providers (the offline demo) cannot be edited or removed and need no key. */
    builtin: z.boolean(),
    /** True when a key for this provider's current host is in the keychain. */
    hasKey: z.boolean(),
    /** Whether requests need a key: true except for built-ins and servers on this machine. */
    keyRequired: z.boolean(),
  })
  .strict();
export type ProviderView = z.infer<typeof ProviderView>;
