/**
 * Policy vocabulary: rules at each layer, argument constraints, the policy state
 * the pure `decide()` reads, and the decision it returns. Shared so the renderer can show rules
 * and the core can store, journal and evaluate them with one set of schemas.
 *
 * Rule `mode` values are deliberately typed `unknown` in stored state: settings files and managed
 * policy files can contain anything ("Deny", "ALLOW", "", null, 3). The engine reads every value
 * it does not recognise as `disabled` (or `forbid` for the organization) and reports it as a
 * configuration error: fail closed. The contract only ever *writes* valid modes.
 */
import { z } from 'zod';
import { DecisionRecord } from './journal-events';
import { PermissionMode } from './operations';

/** A JSON path into the arguments, dotted: `path`, `options.depth`, `files.0`. */
const Field = z.string().min(1).max(200);

/** One condition on a normalized argument. A rule with constraints applies only when all hold. */
export const ArgumentConstraint = z.discriminatedUnion('op', [
  /**
   * The argument is a path inside `value` after resolving it as the operating system will: from the
   * server's working folder, symlinks before `..`, separators, case.
   */
  z.object({ op: z.literal('pathUnder'), field: Field, value: z.string().min(1) }),
  /** The argument equals `value` (canonical JSON comparison). */
  z.object({ op: z.literal('equals'), field: Field, value: z.json() }),
  /** The argument equals one of `value`. */
  z.object({ op: z.literal('oneOf'), field: Field, value: z.array(z.json()).min(1) }),
  /**
   * The argument is a string matching the glob `value` (`*`, `**`, `?`, `[a-z]`, `{a,b}`, leading
   * `!`; see electron/core/policy/glob.ts), evaluated in time linear in the argument.
   */
  z.object({ op: z.literal('matches'), field: Field, value: z.string().min(1) }),
  /** The argument is a number ≥ `value`. */
  z.object({ op: z.literal('min'), field: Field, value: z.number() }),
  /** The argument is a number ≤ `value`. */
  z.object({ op: z.literal('max'), field: Field, value: z.number() }),
  /** The argument is a string (or array) no longer than `value`. */
  z.object({ op: z.literal('maxLength'), field: Field, value: z.number().int().nonnegative() }),
]);
export type ArgumentConstraint = z.infer<typeof ArgumentConstraint>;

/** The hashes an Always Allow grant was made under; a change drops the grant to ask. */
export const GrantPin = z.object({
  contractHash: z.string().nullable().default(null),
  endpointHash: z.string().nullable().default(null),
  /**
   * For a grant that covers many tools (server scope): tool name → contract hash of every tool
   * listed when it was granted. A tool added later, or changed since, is not covered (asks):
   * discovery never grants permission.
   */
  tools: z.record(z.string(), z.string()).nullable().optional(),
});
export type GrantPin = z.infer<typeof GrantPin>;

/** Where a user rule applies. More specific scopes win over less specific ones. */
export const UserRuleScope = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('global') }),
  /** accountId null = every account of the server. */
  z.object({ kind: z.literal('server'), serverId: z.string().min(1), accountId: z.string().min(1).nullable() }),
  z.object({ kind: z.literal('tool'), serverId: z.string().min(1), accountId: z.string().min(1).nullable(), toolName: z.string().min(1) }),
  z.object({
    kind: z.literal('tool-constraint'),
    serverId: z.string().min(1),
    accountId: z.string().min(1).nullable(),
    toolName: z.string().min(1),
    constraints: z.array(ArgumentConstraint).min(1).max(20),
  }),
]);
export type UserRuleScope = z.infer<typeof UserRuleScope>;

/**
 * Who put a user rule in place: the person in Warden's own screens, the demo server's starting
 * rules, or an import.
 *
 * Why it is kept with the rule: explanations say "you set" only for what the person chose; a rule
 * the demo seeded is the demo's until the person changes it. Absent on rules written before this
 * was recorded (and on hand-written settings files): read as the person's.
 */
export const RuleOrigin = z.enum(['person', 'demo', 'import']);
export type RuleOrigin = z.infer<typeof RuleOrigin>;

/** A person's rule. `mode` is raw: anything but allow/ask/disabled is read as disabled. */
export const UserRule = z.object({
  id: z.string().min(1),
  scope: UserRuleScope,
  mode: z.unknown(),
  pin: GrantPin.nullable().default(null),
  setBy: RuleOrigin.optional(),
  /** When it was set (ms since the epoch); absent on rules written before Warden kept it. */
  setAt: z.number().optional(),
});
export type UserRule = z.infer<typeof UserRule>;

/** A per-conversation override: disable a tool in this chat, or explicitly allow it. */
export const ConversationOverride = z.object({
  id: z.string().min(1),
  conversationId: z.string().min(1),
  serverId: z.string().min(1),
  accountId: z.string().min(1).nullable(),
  /** null = every tool of the server in this conversation. */
  toolName: z.string().min(1).nullable(),
  mode: z.unknown(),
  pin: GrantPin.nullable().default(null),
});
export type ConversationOverride = z.infer<typeof ConversationOverride>;

/** Organization modes (managed policy). Anything else is read as forbid. */
export const OrgMode = z.enum(['forbid', 'ask', 'allow']);
export type OrgMode = z.infer<typeof OrgMode>;

/** A managed-policy rule; null fields match everything. Read-only in the app. */
export const OrgRule = z.object({
  id: z.string().min(1),
  serverId: z.string().min(1).nullable().default(null),
  accountId: z.string().min(1).nullable().default(null),
  toolName: z.string().min(1).nullable().default(null),
  mode: z.unknown(),
});
export type OrgRule = z.infer<typeof OrgRule>;

/**
 * The account a person chose for a server, in one conversation or (conversationId null) everywhere
 * else. A server with no choice lets every account of it be used.
 */
export const ActiveAccount = z.object({
  serverId: z.string().min(1),
  conversationId: z.string().min(1).nullable(),
  accountId: z.string().min(1),
});
export type ActiveAccount = z.infer<typeof ActiveAccount>;

/** The folders one (server, account) was given as its roots: absolute paths as chosen. */
export const RootFoldersOf = z.object({
  serverId: z.string().min(1),
  accountId: z.string().min(1),
  folders: z.array(z.string().min(1)),
});
export type RootFoldersOf = z.infer<typeof RootFoldersOf>;

/** Everything `decide()` depends on. Treated as immutable: replace, never mutate. */
export const PolicyState = z.object({
  organization: z.array(OrgRule).default([]),
  conversation: z.array(ConversationOverride).default([]),
  user: z.array(UserRule).default([]),
  /** Set when the ledger found tampering: every tool is held at ask until acknowledged. */
  safeMode: z.boolean().default(false),
  /**
   * The person's default for a tool no rule covers (Settings): `ask`, or `disabled` so such tools
   * are not offered at all. Never `allow`: discovering a tool never grants it. Absent = ask.
   */
  defaultMode: z.enum(['ask', 'disabled']).optional(),
  /** The active account of each server a person chose one for (in memory: a choice, not a setting). */
  activeAccounts: z.array(ActiveAccount).optional(),
  /**
   * Servers whose folders (roots) are a wall: a call of theirs with a path argument outside the
   * folders the person gave that server and account asks first. The person's option, kept with
   * the rules; off for every server not listed.
   */
  enforcedRoots: z.array(z.string().min(1)).optional(),
  /** The folders each (server, account) was given (the roots service's, in memory). */
  rootFolders: z.array(RootFoldersOf).optional(),
});
export type PolicyState = z.infer<typeof PolicyState>;

/** The rule id a change of `defaultMode` is journaled under (it is the lowest layer, not a stored rule). */
export const DEFAULT_MODE_RULE_ID = 'default-tool-mode';

/** What is being decided: the permission identity plus normalized arguments. */
export interface PolicyRequest {
  serverId: string;
  accountId: string;
  toolName: string;
  conversationId: string | null;
  /** Normalized (validated, path-resolved) arguments. */
  arguments: Readonly<Record<string, unknown>>;
}

/** The tool as currently listed, or undefined when the server does not list it now. */
export interface PolicyToolInfo {
  contractHash: string;
  endpointHash: string;
  /** Untrusted; only ever read to make things stricter. */
  annotations?: Readonly<Record<string, unknown>>;
  /**
   * Set while the server's listing cannot be relied on (a re-list it announced is under way, or a
   * re-list failed or timed out): why, in words. Always Allow is then held at Ask.
   */
  unverifiedListing?: string;
}

/** Facts `decide()` needs besides rules. */
export interface PolicyContext {
  tool: PolicyToolInfo | undefined;
  /** Path semantics for constraints (the host OS's, or forced in tests). */
  paths: 'posix' | 'win32';
  /** Case-insensitive path comparison (Windows, default macOS volumes). Defaults per `paths`. */
  caseInsensitivePaths?: boolean;
  /**
   * Path fields whose place could not be known (a relative path with no known working folder, an
   * unreadable folder): dotted field → why. Such a field is decided by the strictest `pathUnder`
   * rule it could fall under; it never makes a call more allowed.
   */
  unresolvedPaths?: ReadonlyMap<string, string>;
  /** `pathUnder` folders as written → where they really lead (symlinks resolved). */
  pathRoots?: ReadonlyMap<string, string>;
  /**
   * Fields read as paths: the value as written and where the server will open it (null when that
   * cannot be known). A `matches` glob on such a field holds only if it holds for both readings;
   * if they differ, or the place is unknown, it may only make the decision stricter.
   */
  pathValues?: ReadonlyMap<string, { written: string; opened: string | null; why?: string; byRule?: true }>;
  /**
   * Every path argument of the call (any field with a path-like name, at any depth, each string
   * of a list too), as written and where the server will open it (null when that cannot be
   * known). Read only for a server whose folders are a wall (`enforcedRoots`).
   */
  argumentPaths?: ReadonlyArray<{ field: string; written: string; opened: string | null; why?: string }>;
  /** Display labels for explanations (`activeAccount`: the name of the server's active account). */
  labels?: { server?: string; account?: string; activeAccount?: string };
}

/** Whether the Always Allow grant behind a decision still matches what is connected. */
export const PinStatus = z.enum(['none', 'ok', 'contract-changed', 'endpoint-changed']);
export type PinStatus = z.infer<typeof PinStatus>;

/** The pure function's output: decision, human reason, layer, rule, pin status, config errors. */
export const PolicyDecision = DecisionRecord.extend({ pin: PinStatus });
export type PolicyDecision = z.infer<typeof PolicyDecision>;

/** Parses a raw user/conversation mode; unknown values are null (the caller reads them as disabled). */
export function parseMode(raw: unknown): PermissionMode | null {
  const parsed = PermissionMode.safeParse(raw);
  return parsed.success ? parsed.data : null;
}
