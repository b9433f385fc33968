/**
 * Contract entries for permission management: the effective matrix, setting
 * and revoking rules with a scope, and the tools offered to a model. Loosening changes (a new
 * Always Allow, lifting a disable) are confirmed by the person in a native dialog owned by main;
 * tightening never needs confirmation. Every change is journaled (old, new, scope, time, source).
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';
import { Decision, PermissionMode } from '../domain/operations';
import { ArgumentConstraint, PinStatus } from '../domain/policy';

const Id = z.string().min(1).max(200);

/** What a person can set: a mode at one scope. */
export const PermissionChange = z.discriminatedUnion('scope', [
  z.object({ scope: z.literal('global'), mode: PermissionMode }).strict(),
  z.object({ scope: z.literal('server'), serverId: Id, accountId: Id.nullable(), mode: PermissionMode }).strict(),
  z.object({ scope: z.literal('tool'), serverId: Id, accountId: Id.nullable(), toolName: Id, mode: PermissionMode }).strict(),
  z
    .object({ scope: z.literal('tool-constraint'), serverId: Id, accountId: Id.nullable(), toolName: Id, constraints: z.array(ArgumentConstraint).min(1).max(20), mode: PermissionMode })
    .strict(),
  z.object({ scope: z.literal('conversation'), conversationId: Id, serverId: Id, accountId: Id.nullable(), toolName: Id.nullable(), mode: PermissionMode }).strict(),
]);
export type PermissionChange = z.infer<typeof PermissionChange>;

/** One cell of the matrix: server × account × tool. */
export const MatrixRow = z.object({
  serverId: z.string(),
  accountId: z.string(),
  toolName: z.string(),
  serverLabel: z.string(),
  accountLabel: z.string(),
  /** Untrusted: written by the server. Show it labelled as the server's claim. */
  serverDescription: z.string().nullable(),
  serverAnnotations: z.record(z.string(), z.unknown()).nullable(),
  /** The person's tool-level mode for this identity, or null when none is set. */
  mode: PermissionMode.nullable(),
  ruleId: z.string().nullable(),
  effective: Decision,
  explanation: z.string(),
  layer: z.string(),
  pin: PinStatus,
  /** True when the organization layer decided (the person cannot change it here). */
  orgLocked: z.boolean(),
  contractHash: z.string(),
});
export type MatrixRow = z.infer<typeof MatrixRow>;

/** A tool the model may be offered (effective decision ≠ deny). */
export const OfferedTool = z.object({
  serverId: z.string(),
  accountId: z.string(),
  toolName: z.string(),
  description: z.string().nullable(),
  inputSchema: z.record(z.string(), z.unknown()),
  effective: z.enum(['allow', 'ask']),
});
export type OfferedTool = z.infer<typeof OfferedTool>;

export const permissionsChannels = defineChannels({
  /** The effective permission matrix. */
  'permissions:matrix': {
    doc: 'Effective permission per server × account × tool, with mode, explanation and pin status.',
    request: z.object({ conversationId: Id.nullable().default(null), search: z.string().max(200).optional() }).strict(),
    response: z.object({ rows: z.array(MatrixRow), configErrors: z.array(z.string()) }),
  },
  /** Sets a mode at a scope (loosening changes are confirmed in a native dialog first). */
  'permissions:set': {
    doc: 'Sets a permission mode at a scope; a loosening change needs the person to confirm it in a native dialog.',
    request: PermissionChange,
    response: z.object({ ruleId: z.string(), old: z.record(z.string(), z.unknown()).nullable(), new: z.record(z.string(), z.unknown()).nullable() }),
  },
  /** Removes a rule (revoking a disable is a loosening change and is confirmed too). */
  'permissions:revoke': {
    doc: 'Removes one rule by id.',
    request: z.object({ ruleId: Id }).strict(),
    response: z.object({ ruleId: z.string(), revoked: z.boolean() }),
  },
  /** The tools to offer a model in a conversation: effective decision ≠ deny. */
  'tools:offered': {
    doc: 'Tools a model may be offered in a conversation (effective decision is not deny).',
    request: z.object({ conversationId: Id.nullable().default(null), accounts: z.record(z.string(), Id).optional() }).strict(),
    response: z.object({ tools: z.array(OfferedTool) }),
  },
});

export const permissionsEvents = defineEvents({
  /** Pushed after any rule change. */
  'permissions:changed': { doc: 'A permission rule changed.', payload: z.object({ ruleId: z.string(), scope: z.string() }) },
});
