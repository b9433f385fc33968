/**
 * Contract entries for permission management: the effective matrix, setting
 * and revoking rules with a scope, and the tools offered to a model. Loosening changes (a new
 * Always Allow, lifting a disable) are confirmed by the person in a native dialog owned by main;
 * tightening never needs confirmation. Every change is journaled (old, new, scope, time, source).
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';
import { Decision, PermissionMode } from '../domain/operations';
import { ArgumentConstraint, PinStatus, RuleOrigin } from '../domain/policy';

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

/**
 * One cell of the matrix: server × account × tool. The optional fields are filled by the full
 * matrix (`permissions:matrix`); the chat loop's own use of the rows leaves them out.
 */
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
  /** Who set the tool's own mode (null when it has none): only `person` is "you set". */
  setBy: RuleOrigin.nullable().optional(),
  /**
   * The mode the tool follows when it has none of its own: its account's, its server's, your
   * default for every server, or the default in Settings (Ask unless Disabled was chosen).
   */
  inheritedMode: PermissionMode.optional(),
  effective: Decision,
  explanation: z.string(),
  layer: z.string(),
  pin: PinStatus,
  /** True when the organization layer decided (the person cannot change it here). */
  orgLocked: z.boolean(),
  contractHash: z.string(),
  /** Where the tool is known from: listed by the connected account now, or its last listing (not connected). */
  source: z.enum(['live', 'last-listing']).optional(),
  /** When the listing it comes from was made (ms since the epoch). */
  listedAt: z.number().nullable().optional(),
  /**
   * Whether the tool changed: since you allowed it (its Always Allow now asks), or since an
   * earlier listing (not yet reviewed). See `permissions:change-detail`.
   */
  changed: z.enum(['none', 'since-allowed', 'since-listed']).optional(),
  /** The server's claims from its annotations, in words ("destructive", "read-only"); untrusted. */
  claims: z.array(z.string()).optional(),
  /** What the organization's policy does to this tool, if anything (read-only here). */
  orgLock: z.enum(['forbid', 'ask']).nullable().optional(),
  /** The argument-constraint rules of this tool on this account (or every account). */
  constraintRules: z.array(z.object({ ruleId: z.string(), mode: PermissionMode.nullable(), words: z.string(), anyAccount: z.boolean() })).optional(),
  /**
   * Set when the server is kept inside its folders and this tool takes a path: what that means for
   * its calls, in words ("Calls with a path outside Work's folders (2) ask first").
   */
  rootsWall: z.string().nullable().optional(),
  /** Conversation overrides that apply to this tool, with the conversation's title. */
  conversationOverrides: z.array(z.object({ ruleId: z.string(), conversationId: z.string(), conversationTitle: z.string(), mode: PermissionMode.nullable() })).optional(),
});
export type MatrixRow = z.infer<typeof MatrixRow>;

/** One account of a server in the matrix: configured, whether connected or not. */
export const MatrixAccount = z.object({
  accountId: z.string(),
  label: z.string(),
  /** The account whose tools are offered (the server's active account). */
  active: z.boolean(),
  connection: z.enum(['connected', 'connecting', 'disconnected', 'error', 'auth_required']),
  /** Where this account's tools come from: live, its last listing, or none yet (never connected). */
  toolsFrom: z.enum(['live', 'last-listing', 'none']),
  listedAt: z.number().nullable(),
  toolCount: z.number().int().nonnegative(),
  /** The person's mode for every tool of this account (a server rule for this account), or null. */
  mode: PermissionMode.nullable(),
  ruleId: z.string().nullable(),
  /** What its tools follow when this account has no mode of its own (its server's, or the defaults). */
  inheritedMode: PermissionMode.optional(),
  /** What tools without their own mode get, in words ("Ask: you set Ask for all tools of Files"). */
  explanation: z.string(),
  /** The folders this account gave the server (its roots). */
  rootFolders: z.array(z.string()).optional(),
});
export type MatrixAccount = z.infer<typeof MatrixAccount>;

/** One configured server in the matrix, with all its accounts. */
export const MatrixServer = z.object({
  serverId: z.string(),
  label: z.string(),
  /** "Local program", "Remote: mcp.example.com", "Built into Warden". */
  location: z.string(),
  /** The person's mode for every tool of every account of this server, or null. */
  mode: PermissionMode.nullable(),
  ruleId: z.string().nullable(),
  /** What its tools follow when this server has no mode of its own (your default for every server, or Settings'). */
  inheritedMode: PermissionMode.optional(),
  explanation: z.string(),
  /** What the organization's policy does to the whole server, if anything. */
  orgLock: z.enum(['forbid', 'ask']).nullable(),
  /** Whether its tools are kept inside the folders of each account (a path outside them asks). */
  rootsEnforced: z.boolean().optional(),
  accounts: z.array(MatrixAccount),
});
export type MatrixServer = z.infer<typeof MatrixServer>;

/** A sample call's verdict: what the gate would do with these arguments under these rules. */
export const CheckVerdict = z.object({
  outcome: z.enum(['allow', 'ask', 'deny', 'invalid']),
  reason: z.string(),
  /** The trusted preview of the sample call. */
  summary: z.string(),
});
export type CheckVerdict = z.infer<typeof CheckVerdict>;

/** One run of a readable diff. */
export const DiffPartView = z.object({ kind: z.enum(['same', 'added', 'removed']), text: z.string() });

/** How a changed tool's contract differs from the version the person knew. */
export const ToolChangeDetail = z.object({
  serverId: z.string(),
  accountId: z.string(),
  toolName: z.string(),
  serverLabel: z.string(),
  accountLabel: z.string(),
  kind: z.enum(['since-allowed', 'since-listed']),
  /** When the version now listed was first seen, and when the one compared with was. */
  afterSeenAt: z.number(),
  beforeSeenAt: z.number().nullable(),
  /** False when the version the person allowed is no longer kept (only "now" can be shown). */
  beforeKnown: z.boolean(),
  /** Per changed field: old text, new text (sanitized server text) and the diff between them. */
  fields: z.array(
    z.object({
      field: z.enum(['title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'instructions']),
      before: z.string().nullable(),
      after: z.string().nullable(),
      parts: z.array(DiffPartView),
    }),
  ),
  /** The change in plain words, one line per field (what the native confirmation shows). */
  summary: z.array(z.string()),
  /** The tool's effective decision now, and why. */
  effective: Decision,
  explanation: z.string(),
});
export type ToolChangeDetail = z.infer<typeof ToolChangeDetail>;

const ToolKey = { serverId: Id, accountId: Id, toolName: Id };

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
    doc: 'Effective permission per server × account × tool (every configured account, connected or not), grouped by server and account, with modes, explanations, changes and locks.',
    request: z
      .object({
        conversationId: Id.nullable().default(null),
        search: z.string().max(200).optional(),
        /** Only the first rows (and their servers), for a first screen before the whole matrix. */
        limit: z.number().int().positive().max(100_000).optional(),
      })
      .strict(),
    /** `total`: how many rows the whole matrix has (more than `rows` when `limit` cut it). */
    response: z.object({ rows: z.array(MatrixRow), servers: z.array(MatrixServer).optional(), configErrors: z.array(z.string()), total: z.number().int().nonnegative().optional() }),
  },
  /** What the gate would do with a sample call, optionally under a rule not saved yet. */
  'permissions:check': {
    doc: 'Would this call be allowed? The real gate validates and decides sample arguments (optionally with a draft constraint rule), without making a call.',
    request: z
      .object({
        ...ToolKey,
        conversationId: Id.nullable().default(null),
        arguments: z.record(z.string(), z.unknown()),
        draft: z.object({ constraints: z.array(ArgumentConstraint).min(1).max(20), mode: PermissionMode, anyAccount: z.boolean().default(false) }).strict().optional(),
      })
      .strict(),
    response: CheckVerdict,
  },
  /** The input schema of one tool (live or from its last listing), for the rule editor and sample arguments. */
  'permissions:tool-schema': {
    doc: "One tool's input schema (from the connected account, or its last listing).",
    request: z.object(ToolKey).strict(),
    response: z.object({ inputSchema: z.record(z.string(), z.unknown()), source: z.enum(['live', 'last-listing']) }),
  },
  /** Sets many modes at once; any that may loosen are confirmed together in ONE native dialog. */
  'permissions:set-many': {
    doc: 'Sets modes for many tools or groups at once; a change that may make Warden ask less is confirmed (all together) in a native dialog.',
    request: z.object({ changes: z.array(PermissionChange).min(1).max(2000) }).strict(),
    /** Per change, in order: the rule it wrote and the mode that rule had before (null: none), for Undo. */
    response: z.object({ changed: z.number().int().nonnegative(), results: z.array(z.object({ ruleId: z.string(), oldMode: PermissionMode.nullable() })) }),
  },
  /** Before and after of a changed tool (rug pull): description, schemas, annotations, instructions. */
  'permissions:change-detail': {
    doc: 'How a changed tool differs from the version you allowed (or last reviewed): a readable diff of its description, schemas, annotations and the server instructions.',
    request: z.object(ToolKey).strict(),
    response: ToolChangeDetail,
  },
  /** What to do about a changed tool: keep asking, allow the new version (confirmed natively with the diff), or disable it. */
  'permissions:resolve-change': {
    doc: 'Keep asking (default), allow the new version (a native confirmation shows the change first) or disable a changed tool.',
    request: z.object({ ...ToolKey, action: z.enum(['keep-asking', 'allow-new', 'disable']) }).strict(),
    response: z.object({ action: z.enum(['keep-asking', 'allow-new', 'disable']), effective: Decision, explanation: z.string() }),
  },
  /** Shows main's native folder chooser for a path rule; answers the folder the person picked, or null. */
  'permissions:choose-folder': {
    doc: "Shows the system's folder chooser (owned by main) for a path rule; null when cancelled.",
    request: z.object({ title: z.string().max(200).optional() }).strict(),
    response: z.object({ path: z.string().nullable() }),
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
