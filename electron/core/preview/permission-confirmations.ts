/**
 * The words of every native confirmation of a permission change: what will stop (or start)
 * asking, in the person's names ("every call of write_file on Files (Work)"), what the tool says it
 * does (labelled as the server's claim, one line), and how to undo it. Never an id, never the rule
 * as JSON.
 *
 * Why one place: setting a mode, removing a rule, a bulk change and allowing a changed tool all
 * loosen the same policy; a person should read them the same way. Why beside the trusted
 * previews: like them these are words Warden writes itself for a native dialog, and both the gate
 * module (one change, a removal) and the permissions module above it (bulk, a new version) ask
 * with them, so they live below both.
 */
import type { PermissionChange } from '../../../shared/contract/permissions';
import type { ConversationOverride, UserRule } from '../../../shared/domain/policy';
import type { PermissionMode } from '../../../shared/domain/operations';
import type { ApprovalPreview } from '../ports';
import { claimsOf } from './trusted-preview';
import { constraintWordsOf } from './constraint-words';

/** Names and facts for the words; every lookup may miss (then ids are never shown: generic words are). */
export interface NameLookup {
  server(serverId: string): string | undefined;
  account(serverId: string, accountId: string): string | undefined;
  conversation(conversationId: string): string | undefined;
  /** The tool as listed now (first account that lists it when accountId is null). */
  tool(serverId: string, accountId: string | null, toolName: string): { description?: string; annotations?: Readonly<Record<string, unknown>> } | undefined;
  /** How many tools the server (one account, or all) lists now. */
  toolCount(serverId: string, accountId: string | null): number;
}

/** Longest server description quoted on its one line. */
export const MAX_CLAIM_CHARS = 240;

const MODE = { allow: 'Always Allow', ask: 'Ask', disabled: 'Disabled' } as const satisfies Record<PermissionMode, string>;

/** A server's text on one line: whitespace runs become one space, cut with the length said. */
export function oneLineClaim(text: string, max = MAX_CLAIM_CHARS): string {
  const flat = text.replace(/[\s\u2028\u2029]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}… (${flat.length - max} more characters not shown)` : flat;
}

interface Target {
  serverId: string | null;
  accountId: string | null;
  toolName: string | null;
  conversationId: string | null;
  constraints: string | null;
}

function targetOf(change: PermissionChange): Target {
  switch (change.scope) {
    case 'global':
      return { serverId: null, accountId: null, toolName: null, conversationId: null, constraints: null };
    case 'server':
      return { serverId: change.serverId, accountId: change.accountId, toolName: null, conversationId: null, constraints: null };
    case 'tool':
      return { serverId: change.serverId, accountId: change.accountId, toolName: change.toolName, conversationId: null, constraints: null };
    case 'tool-constraint':
      return { serverId: change.serverId, accountId: change.accountId, toolName: change.toolName, conversationId: null, constraints: change.constraints.map(constraintWordsOf).join(' and ') };
    case 'conversation':
      return { serverId: change.serverId, accountId: change.accountId, toolName: change.toolName, conversationId: change.conversationId, constraints: null };
  }
}

function ruleTarget(rule: UserRule | ConversationOverride): Target {
  if ('conversationId' in rule) return { serverId: rule.serverId, accountId: rule.accountId, toolName: rule.toolName, conversationId: rule.conversationId, constraints: null };
  const s = rule.scope;
  if (s.kind === 'global') return { serverId: null, accountId: null, toolName: null, conversationId: null, constraints: null };
  return {
    serverId: s.serverId,
    accountId: s.accountId,
    toolName: s.kind === 'server' ? null : s.toolName,
    conversationId: null,
    constraints: s.kind === 'tool-constraint' ? s.constraints.map(constraintWordsOf).join(' and ') : null,
  };
}

/** "Files (Work)", "Files (every account)", "a server that is no longer configured". */
function whereWords(t: Target, names: NameLookup): string {
  if (t.serverId === null) return 'every server';
  const server = names.server(t.serverId) ?? 'a server that is no longer configured';
  if (t.accountId === null) return `${server} (every account)`;
  return `${server} (${names.account(t.serverId, t.accountId) ?? 'an account that no longer exists'})`;
}

/** "every call of write_file on Files (Work) when path is under /docs", "every tool of Files (Work)". */
function callsWords(t: Target, names: NameLookup): string {
  const where = whereWords(t, names);
  const what = t.serverId === null ? 'every tool of every server' : t.toolName ? `every call of ${t.toolName} on ${where}` : `every tool of ${where}`;
  const when = t.constraints ? ` when ${t.constraints}` : '';
  const conv = t.conversationId ? ` in the conversation “${names.conversation(t.conversationId) || 'a conversation without a title, or one that no longer exists'}”` : '';
  return `${what}${when}${conv}`;
}

/** The tool's own words (description, annotations) as labelled one-line claims. */
function toolClaims(t: Target, names: NameLookup): string[] {
  if (t.serverId === null || t.toolName === null) return [];
  const tool = names.tool(t.serverId, t.accountId, t.toolName);
  if (!tool) return [`${t.toolName} is not listed right now, so what it says it does is not known.`];
  return [
    ...(tool.description ? [`What the tool says it does (the server’s claim, not checked by Warden): ${oneLineClaim(tool.description)}`] : ['The server gives no description of this tool.']),
    ...claimsOf(tool.annotations).map((c) => `Server says: ${c}`),
  ];
}

function preview(title: string, change: ApprovalPreview['change'] & object, t: Target, names: NameLookup): ApprovalPreview {
  return {
    operationId: 'permission-change',
    title,
    detail: change.effect,
    argumentsJson: '',
    argumentsText: '',
    serverLabel: t.serverId === null ? 'every server' : (names.server(t.serverId) ?? ''),
    accountLabel: t.serverId === null || t.accountId === null ? 'every account' : (names.account(t.serverId, t.accountId) ?? ''),
    toolName: t.toolName ?? '',
    change,
  };
}

/**
 * The confirmation of one mode change that may make Warden ask less (Always Allow, or lifting a
 * Disabled to Ask).
 */
export function changeConfirmation(change: PermissionChange, names: NameLookup): ApprovalPreview {
  const t = targetOf(change);
  const calls = callsWords(t, names);
  const facts: string[] = [];
  if (change.mode === 'allow' && t.toolName === null && t.serverId !== null) {
    const n = names.toolCount(t.serverId, t.accountId);
    facts.push(`This covers the ${n} tool${n === 1 ? '' : 's'} listed now; a tool added or changed later still asks.`);
  } else if (change.mode === 'allow') {
    facts.push('If the tool or the server’s program or address changes, Warden asks again.');
  }
  if (change.scope === 'conversation') facts.push('It ends with that conversation.');
  const effect =
    change.mode === 'allow'
      ? `Warden will stop asking before ${calls}: they run as soon as the model asks.`
      : change.mode === 'ask'
        ? `${calls.charAt(0).toUpperCase()}${calls.slice(1)} can be used again: Warden asks you before each call.`
        : `${calls.charAt(0).toUpperCase()}${calls.slice(1)} will be Disabled.`;
  const inConversation = t.conversationId ? ` in the conversation “${names.conversation(t.conversationId) || 'a conversation without a title, or one that no longer exists'}”` : '';
  const title =
    change.mode === 'allow'
      ? `Always allow ${t.toolName ?? 'all tools'} on ${whereWords(t, names)}${inConversation}?`
      : `Set ${t.toolName ?? 'all tools'} on ${whereWords(t, names)} to ${MODE[change.mode]}${inConversation}?`;
  return preview(
    title,
    {
      effect,
      facts,
      claims: toolClaims(t, names),
      undo: change.mode === 'allow' ? 'To undo: in Permissions, set it back to Ask (or press Undo right after this change).' : 'To undo: in Permissions, set it back to Disabled.',
      confirmLabel: change.mode === 'allow' ? 'Always Allow' : `Set to ${MODE[change.mode]}`,
    },
    t,
    names,
  );
}

/** The confirmation of removing a rule that restricts something (removing it makes Warden ask less). */
export function removalConfirmation(rule: UserRule | ConversationOverride, names: NameLookup): ApprovalPreview {
  const t = ruleTarget(rule);
  const mode = rule.mode === 'allow' || rule.mode === 'ask' || rule.mode === 'disabled' ? MODE[rule.mode] : 'Disabled (an invalid mode)';
  const calls = callsWords(t, names);
  return preview(
    `Remove your ${mode} rule for ${t.toolName ?? 'all tools'} on ${whereWords(t, names)}?`,
    {
      effect: `Your rule “${mode}” for ${calls} goes away; the next rule that covers them (or the default, Ask) decides instead.`,
      facts: [],
      claims: toolClaims(t, names),
      undo: `To undo: set ${mode} again in Permissions.`,
      confirmLabel: 'Remove the rule',
    },
    t,
    names,
  );
}

/** ONE confirmation for a bulk change: every change that may make Warden ask less, in words. */
export function bulkConfirmation(changes: readonly PermissionChange[], names: NameLookup): ApprovalPreview {
  if (changes.length === 1) return changeConfirmation(changes[0]!, names);
  const lines = changes.slice(0, 25).map((c) => `• ${callsWords(targetOf(c), names)}: ${MODE[c.mode]}`);
  if (changes.length > 25) lines.push(`• and ${changes.length - 25} more`);
  const allow = changes.some((c) => c.mode === 'allow');
  return preview(
    `Change ${changes.length} permissions so that Warden asks you less?`,
    {
      effect: allow ? 'Warden will stop asking before some of these calls; the others can be used again with Warden asking first.' : 'These tools can be used again: Warden asks you before each call.',
      facts: [...lines, ...(allow ? ['Always Allow covers only what is listed now: a tool that changes or is added later asks again.'] : [])],
      claims: [],
      undo: 'To undo: press Undo right after the change, or set them back in Permissions.',
      confirmLabel: `Change ${changes.length} permissions`,
    },
    { serverId: null, accountId: null, toolName: null, conversationId: null, constraints: null },
    names,
  );
}

/** The confirmation of allowing the new version of a changed tool, with what changed. */
export function newVersionConfirmation(input: { serverId: string; accountId: string; toolName: string; summary: readonly string[]; sinceAllowed: boolean }, names: NameLookup): ApprovalPreview {
  const t: Target = { serverId: input.serverId, accountId: input.accountId, toolName: input.toolName, conversationId: null, constraints: null };
  const where = `${input.toolName} on ${whereWords(t, names)}`;
  return preview(
    `Allow the new version of ${where}?`,
    {
      effect: `Warden will stop asking before every call of ${where}, as it is listed now.`,
      facts: [`It changed${input.sinceAllowed ? ' since you allowed it' : ' since it was last listed'}. What changed:`, ...input.summary.map((s) => `• ${s}`)],
      claims: toolClaims(t, names),
      undo: 'To undo: in Permissions, set it to Ask or Disabled.',
      confirmLabel: 'Allow the new version',
    },
    t,
    names,
  );
}

/** The confirmation of no longer keeping a server's tools inside its folders (a loosening). */
export function rootsWallOffConfirmation(serverId: string, names: NameLookup): ApprovalPreview {
  const t: Target = { serverId, accountId: null, toolName: null, conversationId: null, constraints: null };
  const server = names.server(serverId) ?? 'a server that is no longer configured';
  return preview(
    `Stop keeping ${server} inside its folders?`,
    {
      effect: `Calls of ${server}’s tools with a path outside the folders you gave it will no longer ask first: each is decided by its permission alone (an Always Allow runs it at once).`,
      facts: ['The server is still told which folders you chose; keeping to them is then up to the server.'],
      claims: [],
      undo: 'To undo: in Servers, turn “Keep this server inside its folders” on again.',
      confirmLabel: 'Stop enforcing',
    },
    t,
    names,
  );
}
