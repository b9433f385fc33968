/**
 * Contract entries for the active account of a server and for what removing an account deletes.
 *
 * Switching the active account is a visible action with a consequence: calls of the other account
 * that were waiting for approval can no longer run and are cancelled; the answer says how many, in
 * words. Removing an account deletes its keychain secrets and its rules; the renderer asks for
 * `accounts:removal-impact` first so the confirmation says exactly that.
 */
import { z } from 'zod';
import { defineChannels } from '../contract-kit';
import { EntityId } from '../domain/servers';

export const accountsTrustChannels = defineChannels({
  /** Makes one account the active account of its server everywhere (conversations that chose one keep theirs). */
  'accounts:set-active': {
    doc: 'Makes an account the active one of its server (its tools are the ones offered); pending approvals of the other accounts are cancelled, and the answer says how many.',
    request: z.object({ serverId: EntityId, accountId: EntityId }).strict(),
    response: z
      .object({
        serverId: EntityId,
        accountId: EntityId,
        previousAccountId: EntityId.nullable(),
        /** Pending approvals of other accounts of this server that can no longer run. */
        cancelled: z.number().int().nonnegative(),
        /** The consequence in one sentence ("Personal is now active; 2 pending approvals for Work were cancelled."). */
        message: z.string(),
      })
      .strict(),
  },
  /** What removing an account would delete: its keychain secrets, its rules, its conversation overrides. */
  'accounts:removal-impact': {
    doc: 'What removing an account deletes (its keychain secrets, its rules and conversation overrides) and what it cancels, for the confirmation.',
    request: z.object({ accountId: EntityId }).strict(),
    response: z
      .object({
        accountId: EntityId,
        serverLabel: z.string(),
        accountLabel: z.string(),
        /** Names of the secrets stored for this account in the keychain (values never leave main). */
        secrets: z.array(z.string()),
        rules: z.number().int().nonnegative(),
        conversationOverrides: z.number().int().nonnegative(),
        pendingApprovals: z.number().int().nonnegative(),
        /** Why it cannot be removed (the only account of its server), or null. */
        blocked: z.string().nullable(),
        /** What will be deleted, one sentence per kind of thing. */
        lines: z.array(z.string()),
      })
      .strict(),
  },
});
