/**
 * Handler of `tools:run` (shared/contract/run.ts): a person's own tool call, proposed through the
 * gate with source `user`. Nothing here approves or sends: the gate decides as for any caller.
 */
import type { ChannelName, RequestOf, ResponseOf } from '../../../shared/ipc';
import type { GateRequest, OperationSnapshot } from '../gate/gate';
import { createOperationPresenter } from '../gate/result-display';

type RunChannel = 'tools:run' & ChannelName;

/** What the handler needs: the gate's entry point that resolves once a call is decided. */
export interface SubmittingGate {
  submit(req: GateRequest): Promise<OperationSnapshot>;
}

/**
 * Builds the `tools:run` handler over the gate.
 *
 * Why `submit` and not `request`: the renderer needs the operation id and state at once (to show
 * "waiting for your approval"), not after a person decides, which may take minutes.
 */
export function runHandlers(gate: () => SubmittingGate): { [C in RunChannel]: (request: RequestOf<C>) => Promise<ResponseOf<C>> } {
  // The answer is an operation like any other the renderer gets: server text sanitized, result capped.
  const present = createOperationPresenter();
  return {
    'tools:run': async ({ serverId, accountId, toolName, arguments: args, conversationId }) =>
      present(await gate().submit({ source: 'user', serverId, accountId, toolName, arguments: args, conversationId: conversationId ?? null })),
  };
}
