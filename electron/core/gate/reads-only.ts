/**
 * Whether a call to a tool can be stopped mid-call with nothing left to check: the one place that
 * decides it.
 *
 * A call stopped after it left may have been carried out, so it normally ends `outcome_unknown`
 * and waits in Recovery for the person to find out what happened (call-outcome.ts). For a tool
 * that only reads there is nothing to find out: whatever the server did, nothing changed. But a
 * server's annotations are its own claims, and a server that lies about `readOnlyHint` must not
 * make a write it did vanish from Recovery. So only annotations Warden itself wrote count: those
 * of its built-in server (`annotationsTrusted`, set by the connection layer from the server's
 * definition, never from anything the server says).
 *
 * `readOnlyHint: true` is what counts; the MCP specification gives `idempotentHint` meaning only
 * for tools that are not read-only (a tool that changes nothing is safe to repeat), so it is not
 * required, but a tool that says it is not safe to repeat is not treated as one that only reads.
 */
import type { ToolDescriptor } from './ports';

/** The error code of a call stopped mid-call whose tool only reads (recorded `failed`: no result, nothing to check). */
export const STOPPED_READS_ONLY = 'STOPPED_READS_ONLY';

/** What such a stop means, in the words every surface shows after the reason it was stopped. */
export const STOPPED_READS_ONLY_WORDS = 'This tool only reads, so nothing needs checking.';

/** True when a call to `tool` stopped mid-call leaves nothing to check (see above). Unknown tool: false. */
export function readsOnly(tool: Pick<ToolDescriptor, 'annotations' | 'annotationsTrusted'> | undefined): boolean {
  return tool?.annotationsTrusted === true && tool.annotations?.readOnlyHint === true && tool.annotations.idempotentHint !== false;
}
