/**
 * Contract entry for a person running a tool by hand (Servers → tool → Run).
 *
 * This PROPOSES a call; it cannot approve one. The call enters the gate's single entry point with
 * source `user` and is decided exactly like a model's call: Always Allow runs it, Ask puts it in
 * the approval queue (approved only in main's native dialog), Disabled denies it.
 */
import { z } from 'zod';
import { defineChannels } from '../contract-kit';
import { EntityId } from '../domain/servers';
import { OperationSummary } from './operations';

export const runChannels = defineChannels({
  /** Proposes one tool call with source `user`; answers once the gate has decided (not when it finishes). */
  'tools:run': {
    doc: "Proposes a tool call with source 'user' through the gate; answers with the operation once decided (awaiting approval, executing or done).",
    request: z
      .object({
        serverId: EntityId,
        accountId: EntityId,
        toolName: z.string().min(1).max(200),
        arguments: z.record(z.string(), z.unknown()),
        conversationId: z.string().min(1).max(200).nullable().optional(),
      })
      .strict(),
    response: OperationSummary,
  },
});
