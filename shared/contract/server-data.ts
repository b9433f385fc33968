/**
 * Contract entries for what a server offers besides tools: resources (and their templates and
 * subscriptions), prompts, argument completions and the level of the server's log messages.
 *
 * Every string a server wrote reaches the window sanitized (no control, escape or bidi
 * characters) and capped. A resource's URI and a prompt's name are the server's identifiers:
 * they travel back unchanged in later requests, and `displayUri` / `title` are what a person reads.
 * Reading a resource or getting a prompt stages exactly what was shown under an `attachmentId`; a
 * chat message can attach it by that id (chat:send-message), so the window can never put text of
 * its own into the model's context as if a server had sent it.
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';
import { EntityId, LogLevel } from '../domain/servers';

/** The most characters of a URI or URI template Warden sends or shows. */
export const MAX_URI_CHARS = 2048;

/** A resource URI from the window: a scheme, no control, bidi or invisible characters, bounded. */
export const ResourceUri = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_URI_CHARS)
  .regex(/^[A-Za-z][A-Za-z0-9+.-]*:/, 'must start with a scheme such as file: or https:')
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  .regex(/^[^\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]*$/, 'must not contain control, bidi or invisible characters');

/** A pagination cursor exactly as the server gave it. */
const Cursor = z.string().min(1).max(1000);
const ServerKey = { serverId: EntityId, accountId: EntityId };
const ListRequest = z.object({ ...ServerKey, cursor: Cursor.optional() }).strict();

/** One resource a server lists. */
export const ResourceView = z
  .object({
    /** The server's identifier, sent back unchanged to read it. */
    uri: z.string(),
    /** The URI as a person reads it (sanitized). */
    displayUri: z.string(),
    name: z.string(),
    title: z.string().nullable(),
    description: z.string().nullable(),
    mimeType: z.string().nullable(),
    /** The size the server claims, in bytes (a claim, not a measurement). */
    size: z.number().nonnegative().nullable(),
  })
  .strict();
export type ResourceView = z.infer<typeof ResourceView>;

/** One resource template (RFC 6570 URI template) a server lists. */
export const ResourceTemplateView = z
  .object({
    uriTemplate: z.string(),
    displayTemplate: z.string(),
    name: z.string(),
    title: z.string().nullable(),
    description: z.string().nullable(),
    mimeType: z.string().nullable(),
    /** The template's variable names, in order, for the form. */
    variables: z.array(z.string()),
  })
  .strict();
export type ResourceTemplateView = z.infer<typeof ResourceTemplateView>;

/** One part of a read resource. */
export const ResourceContentView = z
  .object({
    displayUri: z.string(),
    mimeType: z.string().nullable(),
    /** Sanitized and capped text; null for binary content. */
    text: z.string().nullable(),
    /** Binary content is never shown or given to a model: only its size. */
    binaryBytes: z.number().int().nonnegative().nullable(),
  })
  .strict();
export type ResourceContentView = z.infer<typeof ResourceContentView>;

/** Why the content shown is not the whole of what the server sent. */
export const CutView = z.object({ keptBytes: z.number().int().nonnegative(), totalBytes: z.number().int().nonnegative() }).strict();

/** A resource as read: what the person sees, and the id a chat message attaches it by. */
export const ResourceReadView = z
  .object({
    attachmentId: z.string(),
    serverLabel: z.string(),
    accountLabel: z.string(),
    displayUri: z.string(),
    contents: z.array(ResourceContentView),
    truncated: CutView.nullable(),
    /** Heuristic prompt-injection flags on the text, in words. */
    flags: z.array(z.string()),
  })
  .strict();
export type ResourceReadView = z.infer<typeof ResourceReadView>;

/** One argument a prompt takes. */
export const PromptArgumentView = z
  .object({ name: z.string(), description: z.string().nullable(), required: z.boolean() })
  .strict();

/** One prompt a server lists. */
export const PromptView = z
  .object({
    name: z.string(),
    title: z.string().nullable(),
    description: z.string().nullable(),
    arguments: z.array(PromptArgumentView),
  })
  .strict();
export type PromptView = z.infer<typeof PromptView>;

/** One message of a prompt, with the role the server gave it (a label the server chose). */
export const PromptMessageView = z
  .object({
    /** The role the server labelled the message with. It never makes the text the person's own. */
    serverRole: z.enum(['user', 'assistant']),
    kind: z.enum(['text', 'image', 'audio', 'resource', 'resource_link']),
    /** Sanitized, capped text (or what the part is, for images, audio and binary resources). */
    text: z.string(),
  })
  .strict();

/** A prompt as the server filled it in: every message's full text, for the person to see first. */
export const PromptGotView = z
  .object({
    attachmentId: z.string(),
    serverLabel: z.string(),
    accountLabel: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    messages: z.array(PromptMessageView),
    truncated: CutView.nullable(),
    flags: z.array(z.string()),
  })
  .strict();
export type PromptGotView = z.infer<typeof PromptGotView>;

/** Log levels of MCP, least to most severe. */
export { LogLevel };

/** Argument values of a prompt or template from the window: bounded names and values. */
const ArgumentValues = z.record(z.string().min(1).max(200), z.string().max(10_000)).refine((r) => Object.keys(r).length <= 50, 'at most 50 arguments');

/** What a server offers besides tools, as the window can show it. */
export const ServerFeaturesView = z
  .object({
    resources: z.boolean(),
    subscribe: z.boolean(),
    prompts: z.boolean(),
    completions: z.boolean(),
    logging: z.boolean(),
    logLevel: LogLevel,
  })
  .strict();
export type ServerFeaturesView = z.infer<typeof ServerFeaturesView>;

export const serverDataChannels = defineChannels({
  'connections:features': {
    doc: 'Which of resources, subscriptions, prompts, completions and logging a connected (server, account) offers, and its log level.',
    request: z.object(ServerKey).strict(),
    response: ServerFeaturesView,
  },
  'resources:list': {
    doc: 'One page of the resources a connected (server, account) lists; pass nextCursor back for the next page.',
    request: ListRequest,
    response: z.object({ resources: z.array(ResourceView), nextCursor: z.string().nullable() }).strict(),
  },
  'resources:templates': {
    doc: 'One page of the resource templates a connected (server, account) lists.',
    request: ListRequest,
    response: z.object({ templates: z.array(ResourceTemplateView), nextCursor: z.string().nullable() }).strict(),
  },
  'resources:read': {
    doc: 'Reads one resource (journaled with its URI), capped and sanitized; stages it for a chat message to attach.',
    request: z.object({ ...ServerKey, uri: ResourceUri }).strict(),
    response: ResourceReadView,
  },
  'resources:subscribe': {
    doc: 'Asks the server to announce changes of one resource (resources:updated).',
    request: z.object({ ...ServerKey, uri: ResourceUri }).strict(),
    response: z.object({ subscribed: z.boolean() }).strict(),
  },
  'resources:unsubscribe': {
    doc: 'Stops the announcements of one resource.',
    request: z.object({ ...ServerKey, uri: ResourceUri }).strict(),
    response: z.object({ subscribed: z.boolean() }).strict(),
  },
  'prompts:list': {
    doc: 'One page of the prompts a connected (server, account) lists.',
    request: ListRequest,
    response: z.object({ prompts: z.array(PromptView), nextCursor: z.string().nullable() }).strict(),
  },
  'prompts:get': {
    doc: 'Has the server fill in one prompt (journaled); every message is shown, marked as the server\'s, and staged for a chat message to attach.',
    request: z.object({ ...ServerKey, name: z.string().min(1).max(200), arguments: ArgumentValues.optional() }).strict(),
    response: PromptGotView,
  },
  'completions:complete': {
    doc: 'Suggestions from the server for one argument of a prompt or resource template.',
    request: z
      .object({
        ...ServerKey,
        ref: z.discriminatedUnion('type', [
          z.object({ type: z.literal('prompt'), name: z.string().min(1).max(200) }).strict(),
          z.object({ type: z.literal('resource-template'), uriTemplate: z.string().min(1).max(MAX_URI_CHARS) }).strict(),
        ]),
        argument: z.object({ name: z.string().min(1).max(200), value: z.string().max(1000) }).strict(),
        /** The values already given for the other arguments. */
        context: ArgumentValues.optional(),
      })
      .strict(),
    response: z.object({ values: z.array(z.string()), hasMore: z.boolean() }).strict(),
  },
  'logging:set-level': {
    doc: 'Sets the least severe level of log messages a (server, account) sends (default info).',
    request: z.object({ ...ServerKey, level: LogLevel }).strict(),
    response: z.object({ level: LogLevel, applied: z.boolean() }).strict(),
  },
});

export const serverDataEvents = defineEvents({
  'resources:updated': {
    doc: 'A subscribed resource changed on its server.',
    payload: z.object({ serverId: z.string(), accountId: z.string(), uri: z.string(), displayUri: z.string() }).strict(),
  },
  'resources:list-changed': {
    doc: 'A server said its list of resources changed: a view showing it lists again.',
    payload: z.object({ serverId: z.string(), accountId: z.string() }).strict(),
  },
  'prompts:list-changed': {
    doc: 'A server said its list of prompts changed: a view showing it lists again.',
    payload: z.object({ serverId: z.string(), accountId: z.string() }).strict(),
  },
});
