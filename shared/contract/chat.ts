/**
 * Contract entries for chat: conversations, sending a message, stopping, the model picker, and
 * the streamed reply.
 *
 * Every tool call a model makes goes through the gate in the core; nothing here approves one.
 * `chat:review` only asks main to show its native dialog for the calls of one reply that wait for
 * approval, and a compromised renderer can at most deny through it. Text in these payloads that
 * came from a model or a server is untrusted: the renderer shows it as text, never as HTML.
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';
import { Decision } from '../domain/operations';
import { ModelProblem } from './models';

const Id = z.string().min(1).max(200);
const ConversationRequest = z.object({ conversationId: Id }).strict();

/** Where one tool call of a model reply stands, in words the chat shows on its card. */
export const ChatCallStatus = z.enum([
  /** Entering the gate. */
  'deciding',
  'awaiting_approval',
  'running',
  'succeeded',
  /** The tool ran and reported an error, or the server answered with one. */
  'failed',
  /** Denied by the rules, or never offered to the model (a Disabled tool, an invented name). */
  'not_permitted',
  /** Refused by the person in the approval dialog or the Approvals view. */
  'declined',
  /** The approval timed out (or the turn that asked for it ended with a restart): nothing ran. */
  'expired',
  /** Stopped or cancelled before it ran, or its approval no longer matched: nothing ran. */
  'cancelled',
  /** Sent, but no answer is known: the server may or may not have acted. */
  'outcome_unknown',
  /** Stopped while it ran, but the tool only reads: no result, and nothing changed that needs checking. */
  'stopped',
  /** The arguments were refused (malformed JSON, a field the schema does not declare, …). */
  'invalid',
  /** Not run because a cap was reached (calls per reply, calls per minute). */
  'skipped',
]);
export type ChatCallStatus = z.infer<typeof ChatCallStatus>;

/** One tool call the model made, as its card shows it. */
export const ChatToolCall = z.object({
  /** The provider's id of this call. */
  callId: z.string(),
  /** The name the model used (from Warden's lookup table, or one it made up). */
  modelName: z.string(),
  /** The gate's operation (every call has one: refusals are recorded too). */
  operationId: z.string().nullable(),
  serverId: z.string().nullable(),
  accountId: z.string().nullable(),
  toolName: z.string().nullable(),
  serverLabel: z.string().nullable(),
  accountLabel: z.string().nullable(),
  /** A short summary written by Warden from the tool identity and the validated arguments. */
  preview: z.string(),
  /** The arguments as the model wrote them (capped), shown on demand. */
  argumentsJson: z.string(),
  status: ChatCallStatus,
  /** The policy's decision (null before it was made, or for a call refused before the policy). */
  decision: Decision.nullable(),
  /** Why it is in its status, in one sentence (what happened to it: the card's outcome line). */
  why: z.string(),
  /**
   * Why it ran or did not, in one sentence, apart from how it ended: "You approved it in Warden’s
   * dialog.", "It ran without asking because you set Always Allow for …" ('' until the gate decided).
   */
  reason: z.string().default(''),
  startedAt: z.number().nullable(),
  endedAt: z.number().nullable(),
  /** The result as text, sanitized for display and capped (empty until there is one). */
  resultText: z.string(),
  /** True when the result looks like it gives instructions (a prompt-injection warning). */
  flagged: z.boolean(),
  /** Which heuristics matched, for the card's explanation. */
  flags: z.array(z.string()),
  /** True when the result was cut for the model. */
  truncated: z.boolean(),
  /** Exactly what the model was (or will be) told about this call. */
  modelResult: z.string(),
  isError: z.boolean(),
  /** True for a call that was pending when its turn ended (restart): "ask again" resends the request. */
  askAgain: z.boolean().default(false),
  /** True when the tool only reads, by annotations Warden trusts: stopping it mid-call leaves nothing to check. */
  readsOnly: z.boolean().default(false),
});
export type ChatToolCall = z.infer<typeof ChatToolCall>;

/** Token counts as the provider reported them. */
export const ChatUsage = z.object({ inputTokens: z.number().int().nonnegative().nullable(), outputTokens: z.number().int().nonnegative().nullable() });
export type ChatUsage = z.infer<typeof ChatUsage>;

/**
 * A resource or prompt the person attached to a message: the server's text, shown as the
 * server's, and exactly what the model was told of it (wrapped as untrusted server data).
 */
export const ChatAttachment = z.object({
  kind: z.enum(['resource', 'prompt']),
  /** The person's name for the server it came from. */
  serverLabel: z.string(),
  /** The resource's URI or the prompt's name (sanitized; the server's words). */
  title: z.string(),
  /** The server's text as shown: sanitized and capped. */
  text: z.string(),
  flags: z.array(z.string()),
  truncated: z.boolean(),
  modelText: z.string(),
});
export type ChatAttachment = z.infer<typeof ChatAttachment>;

/** One message of a conversation. `notice` messages are Warden's own (stop reasons, errors). */
export const ChatMessage = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant', 'notice']),
  /** Plain text (user), markdown written by a model (assistant: render safely), or Warden's words (notice). */
  text: z.string(),
  createdAt: z.number(),
  /** Model round within the user message (assistant messages only). */
  round: z.number().int().nullable(),
  toolCalls: z.array(ChatToolCall),
  usage: ChatUsage.nullable(),
  /** True while the model is still writing this message. */
  streaming: z.boolean(),
  /** Which provider and model wrote it (assistant messages). */
  providerId: z.string().nullable(),
  model: z.string().nullable(),
  /** A provider retry in progress ("rate limited; trying again in 3 s"), shown under the message. */
  note: z.string().nullable(),
  /** For a notice: whether it reports a problem. */
  tone: z.enum(['info', 'warning', 'error']).default('info'),
  /** For a notice about a failed model request: the provider's problem as data (the UI says it in words). */
  problem: ModelProblem.nullable().default(null),
  /** For the person's message: the resources and prompts attached to it (the servers' text, not the person's). */
  attachments: z.array(ChatAttachment).default([]),
});
export type ChatMessage = z.infer<typeof ChatMessage>;

/** What a conversation is doing right now. */
export const ConversationState = z.enum(['idle', 'responding', 'waiting_approval', 'running_tools']);
export type ConversationState = z.infer<typeof ConversationState>;

/** A conversation in the list. */
export const ConversationSummary = z.object({
  id: z.string(),
  title: z.string(),
  providerId: z.string(),
  model: z.string().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
  state: ConversationState,
});
export type ConversationSummary = z.infer<typeof ConversationSummary>;

/** A whole conversation. */
export const Conversation = ConversationSummary.extend({
  messages: z.array(ChatMessage),
});
export type Conversation = z.infer<typeof Conversation>;

/** A model provider in the picker. */
export const ProviderChoiceSchema = z.object({
  providerId: z.string(),
  kind: z.enum(['anthropic', 'openai', 'demo']),
  label: z.string(),
  defaultModel: z.string().nullable(),
});

/** A tool as a conversation sees it: its model-facing name and what the policy says here. */
export const ChatTool = z.object({
  modelName: z.string(),
  serverId: z.string(),
  accountId: z.string(),
  toolName: z.string(),
  serverLabel: z.string(),
  accountLabel: z.string(),
  effective: Decision,
  /** Offered to the model in this conversation (effective decision is not deny). */
  offered: z.boolean(),
  reason: z.string(),
  /** The layer that decided ("conversation" when this chat has its own override). */
  layer: z.string(),
});
export type ChatTool = z.infer<typeof ChatTool>;

export const chatChannels = defineChannels({
  'chat:list': {
    doc: 'Conversations, newest first, optionally only those whose title contains `search`.',
    request: z.object({ search: z.string().max(200).optional() }).strict(),
    response: z.object({ conversations: z.array(ConversationSummary) }),
  },
  'chat:get': { doc: 'One whole conversation.', request: ConversationRequest, response: Conversation },
  'chat:create': {
    doc: 'Starts an empty conversation with a provider and model (default: the last one used, or the offline demo).',
    request: z.object({ providerId: Id.optional(), model: z.string().min(1).max(200).nullable().optional() }).strict(),
    response: Conversation,
  },
  'chat:send-message': {
    doc: 'Sends a message; the reply streams as chat:delta and chat:message events.',
    request: z
      .object({
        conversationId: Id,
        text: z.string().max(20_000),
        /** Resources and prompts read in this window (resources:read, prompts:get), by the id they were staged under. */
        attachmentIds: z.array(z.string().min(1).max(100)).max(8).optional(),
      })
      .strict()
      .refine((r) => r.text.trim().length > 0 || (r.attachmentIds?.length ?? 0) > 0, { message: 'write a message or attach a resource or prompt', path: ['text'] }),
    response: z.object({ messageId: z.string() }),
  },
  'chat:stop': {
    doc: 'Stops the reply: ends the stream and cancels queued and running tool calls.',
    request: ConversationRequest,
    response: z.object({ stopped: z.boolean() }),
  },
  'chat:rename': {
    doc: 'Renames a conversation.',
    request: z.object({ conversationId: Id, title: z.string().trim().min(1).max(200) }).strict(),
    response: ConversationSummary,
  },
  'chat:delete': {
    doc: 'Deletes a conversation (stopping it first) and the permission overrides that belonged to it.',
    request: ConversationRequest,
    response: z.object({ deleted: z.boolean() }),
  },
  'chat:set-model': {
    doc: 'Chooses the provider and model for the next replies of a conversation (permissions never change with it).',
    request: z.object({ conversationId: Id, providerId: Id, model: z.string().min(1).max(200).nullable() }).strict(),
    response: ConversationSummary,
  },
  'chat:providers': {
    doc: 'Every model provider a person can choose.',
    request: z.object({}).strict(),
    response: z.object({ providers: z.array(ProviderChoiceSchema) }),
  },
  'chat:models': {
    doc: 'The models a provider lists (null when its API cannot list them).',
    request: z.object({ providerId: Id }).strict(),
    response: z.object({ models: z.array(z.object({ id: z.string(), label: z.string() })).nullable() }),
  },
  'chat:tools': {
    doc: 'The tools of a conversation: model-facing name, effective decision here, and whether it is offered.',
    request: ConversationRequest,
    response: z.object({ tools: z.array(ChatTool) }),
  },
  'chat:review': {
    doc: "Shows main's native dialog for the calls of one reply that wait for approval (Deny all, Review one by one, Approve all).",
    request: z.object({ conversationId: Id, messageId: Id }).strict(),
    response: z.object({ choice: z.enum(['deny-all', 'one-by-one', 'approve-all']), reviewed: z.number().int().nonnegative() }),
  },
  'chat:ask-again': {
    doc: 'Sends again the message whose tool calls expired, as a new turn (each call is decided again).',
    request: z.object({ conversationId: Id, messageId: Id }).strict(),
    response: z.object({ messageId: z.string() }),
  },
  'chat:open-link': {
    doc: 'Opens an https link from a chat in the system browser after the person confirms it in a native dialog.',
    request: z.object({ url: z.string().min(1).max(4000) }).strict(),
    response: z.object({ opened: z.boolean() }),
  },
  'chat:start-demo': {
    doc: 'Connects the built-in demo server and starts a conversation with the offline demo model asking it to summarise the inbox.',
    request: z.object({}).strict(),
    response: Conversation,
  },
});

export const chatEvents = defineEvents({
  'chat:delta': {
    doc: 'Streamed text of an assistant message.',
    payload: z.object({ conversationId: z.string(), messageId: z.string(), text: z.string() }),
  },
  'chat:message': {
    doc: 'A message was added or changed (tool-call statuses, the end of streaming).',
    payload: z.object({ conversationId: z.string(), message: ChatMessage }),
  },
  'chat:changed': {
    doc: 'A conversation was created, renamed, deleted or changed state.',
    payload: z.object({ conversationId: z.string(), summary: ConversationSummary.nullable() }),
  },
});
