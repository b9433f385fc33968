/**
 * Whether the person's rules let Warden read a server's resources and prompts at all: the one
 * question server data asks of the policy, kept apart so it is tested without a connection. The
 * chat asks it too before a server's instructions join the system prompt.
 */
import type { PolicyState } from '../../../shared/domain/policy';

/**
 * Why the person's rules keep Warden from reading this server's resources or prompts, or
 * undefined when they do not.
 *
 * The rules for the server as a whole decide (tool rules name tools, which a resource is not):
 * the organization forbidding the server (or everything), an override disabling the server in
 * this conversation, or the person's most specific server-wide rule being Disabled (this
 * account's rule over every account's, over the global one; the strictest at one level), or,
 * with no such rule, the Settings default being Disabled. `policy` is the effective policy the
 * gate decides with (the Settings default folded in). A Disabled server is not read.
 */
export function accessRefusal(policy: PolicyState, serverId: string, accountId: string, serverLabel: string, conversationId?: string): string | undefined {
  for (const org of policy.organization) {
    if (org.toolName !== null) continue;
    if ((org.serverId === null || org.serverId === serverId) && (org.accountId === null || org.accountId === accountId)) {
      if (org.mode !== 'ask' && org.mode !== 'allow') return `your organization's policy forbids ${serverLabel}; Warden does not read its resources or prompts`;
    }
  }
  // An override that disables the whole server in this conversation keeps its text out of it.
  if (conversationId !== undefined) {
    const overrides = policy.conversation.filter((o) => o.conversationId === conversationId && o.serverId === serverId && o.toolName === null && (o.accountId === null || o.accountId === accountId));
    if (overrides.some((o) => o.mode !== 'ask' && o.mode !== 'allow')) return `you set ${serverLabel} to Disabled in this conversation; Warden does not read its resources or prompts here`;
  }
  const levels: Array<(r: PolicyState['user'][number]) => boolean> = [
    (r) => r.scope.kind === 'server' && r.scope.serverId === serverId && r.scope.accountId === accountId,
    (r) => r.scope.kind === 'server' && r.scope.serverId === serverId && r.scope.accountId === null,
    (r) => r.scope.kind === 'global',
  ];
  for (const matches of levels) {
    const rules = policy.user.filter(matches);
    if (rules.length === 0) continue;
    // Anything but ask or allow (an invalid mode included) reads as Disabled, as the engine reads it.
    if (rules.some((r) => r.mode !== 'ask' && r.mode !== 'allow')) {
      return `you set ${serverLabel} to Disabled${rules[0]!.scope.kind === 'global' ? ' (your rule for every server)' : ''}; Warden does not read its resources or prompts`;
    }
    return undefined;
  }
  // No server-wide rule: the Settings default decides, as it does for the server's tools.
  if (policy.defaultMode === 'disabled') return `tools no rule covers are Disabled in your Settings, and no rule enables ${serverLabel}; Warden does not read its resources or prompts`;
  return undefined;
}
