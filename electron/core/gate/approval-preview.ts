/**
 * The approval preview: the text of the dialog a person approves from, written by this code from
 * the tool identity and the validated, stored arguments, never by the model or the server.
 */
import { argumentLines, argumentText } from '../../../shared/argument-words';
import { whyWardenAsks } from '../../../shared/call-words';
import type { CallSource } from '../../../shared/domain/operations';
import type { ApprovalPreview } from '../ports';
import { claimsOf } from '../preview/trusted-preview';
import type { Operation } from './operation';
import type { ToolDescriptor } from './ports';

/** Who asked for a call, in words, for the approval dialog. */
const REQUESTED_BY: Record<CallSource, string> = {
  model: 'the model, in a conversation',
  user: 'you, from Warden (Run)',
  gateway: 'a program connected to Warden’s gateway',
};

/** The preview of a pending operation; `tool` is its listing now (for location and claims), if listed. */
export function approvalPreview(op: Operation, tool: ToolDescriptor | undefined): ApprovalPreview {
  const args = JSON.stringify(JSON.parse(op.canonicalArguments), null, 2);
  return {
    operationId: op.id,
    title: op.labels.summary,
    // One sentence: the policy's reason starts with the outcome ("Asks: …"), said once here, in front.
    detail: whyWardenAsks(op.decision?.reason),
    ...(tool?.serverLocation ? { serverLocation: tool.serverLocation } : {}),
    requestedBy: REQUESTED_BY[op.origin.source],
    // The server's claims, as words; shown last, labelled as the server's.
    claims: claimsOf(tool?.annotations),
    argumentsJson: args,
    // Nothing cut: the dialog shows every value or refuses to approve (dialogs.ts).
    argumentsText: argumentText(argumentLines(op.args, tool?.inputSchema, { maxValue: Infinity })),
    serverLabel: op.labels.server,
    accountLabel: op.labels.account,
    toolName: op.identity.toolName,
    // Kept apart from the trusted text: the dialog shows it last, on one line, as the server's claim.
    toolDescription: op.labels.toolDescription,
  };
}
