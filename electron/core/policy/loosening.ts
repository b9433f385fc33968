/**
 * What counts as loosening: the one rule that decides whether a permission change, or the removal
 * of a rule, may make Warden ask less — and so must be confirmed by the person in Warden's native
 * dialog before the policy store sees it. Every channel that changes rules asks this file.
 *
 * The rule is written so that it can only err towards asking. A change loosens when some call
 * (any server, account, tool, conversation and arguments) would be decided more permissively
 * after it than before (deny < ask < allow). Comparing decisions needs the tools, and Warden does
 * not know every tool (a disconnected server, a tool added later, arguments nobody has sent yet),
 * so the decision comparison is only the last test: before it, every change that could lift a
 * restriction by the shape of the rules alone counts as loosening. Only a Disabled change never
 * loosens: a Disabled rule can only deny.
 */
import type { PermissionChange } from '../../../shared/contract/permissions';
import type { ConversationOverride, GrantPin, PolicyState, UserRule } from '../../../shared/domain/policy';
import { effectiveMode } from './engine';
import { PolicyStore } from './store';

/**
 * Whether some call Warden knows of is decided more permissively under `after` than under
 * `before`. Given by the caller, who knows the tools (live and last listed) and conversations.
 */
export type DecisionsLoosen = (before: PolicyState, after: PolicyState) => boolean;

/**
 * Whether applying `change` (with the pin it would get) to `before` may make Warden ask less.
 * `before` is the effective state the gate decides with (the Settings default and active
 * accounts included), since a Disabled default is a restriction a rule can lift too.
 */
export function changeMayLoosen(change: PermissionChange, pin: GrantPin | null, before: PolicyState, decisionsLoosen: DecisionsLoosen): boolean {
  if (change.mode === 'disabled') return false;
  if (change.mode === 'allow') return true;
  // An Ask rule for every tool, for one conversation or for some arguments can sit above a
  // restriction the decision comparison cannot see (other conversations, arguments never sent).
  if (change.scope === 'global' || change.scope === 'conversation' || change.scope === 'tool-constraint') return true;
  const old = findRule(before, PolicyStore.ruleIdFor(change));
  if (old && effectiveMode(old.mode) === 'disabled') return true;
  if (restrictionNear(change, before)) return true;
  return decisionsLoosen(before, PolicyStore.apply(before, change, pin).next);
}

/**
 * Whether removing the rule `ruleId` from `before` may make Warden ask less: removing anything
 * but an Always Allow removes a restriction (even one no decision comparison can see), and
 * removing an Always Allow can still uncover a laxer rule below it.
 */
export function removalMayLoosen(ruleId: string, before: PolicyState, decisionsLoosen: DecisionsLoosen): boolean {
  const old = findRule(before, ruleId);
  if (!old) return false;
  if (effectiveMode(old.mode) !== 'allow') return true;
  const after: PolicyState = { ...before, user: before.user.filter((r) => r.id !== ruleId), conversation: before.conversation.filter((r) => r.id !== ruleId) };
  return decisionsLoosen(before, after);
}

/** The user rule or conversation override with this id. */
function findRule(state: PolicyState, ruleId: string): UserRule | ConversationOverride | undefined {
  return state.user.find((r) => r.id === ruleId) ?? state.conversation.find((r) => r.id === ruleId);
}

/**
 * True if a restriction could apply to what `change` covers: a Disabled default, or a Disabled
 * (or unreadable, read as Disabled) rule for every tool or for the same server.
 */
function restrictionNear(change: PermissionChange, state: PolicyState): boolean {
  const restrictive = (mode: unknown) => effectiveMode(mode) === 'disabled';
  if (state.defaultMode === 'disabled') return true;
  const serverId = 'serverId' in change ? change.serverId : null;
  const user = state.user.some((r) => restrictive(r.mode) && (serverId === null || r.scope.kind === 'global' || ('serverId' in r.scope && r.scope.serverId === serverId)));
  const conversation = state.conversation.some((r) => restrictive(r.mode) && (serverId === null || r.serverId === serverId));
  return user || conversation;
}
