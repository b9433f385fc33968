/**
 * A tool's structured result checked against the outputSchema of the listing Warden pinned.
 *
 * Why here and not in the SDK's `Client.callTool`: the SDK remembers output schemas from the
 * last `tools/list` page it saw, so a tool listed on an earlier page (or one whose schema changed
 * in a listing Warden gave up on) would go unchecked or be checked against the wrong schema. The
 * connection checks each answer against the very tool description the call was decided on, with
 * the linear-time regular-expression engine (validation/schemas.ts).
 */
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { LinearJsonSchemaValidator } from '../validation/schemas';
import { displayText } from '../text/sanitize';

/** Most of the validator's explanation kept in the error (UTF-8 bytes): names in it are the server's. */
const PROBLEM_BYTES = 1024;

/** The parts of a listed tool the check needs. */
export interface OutputContract {
  name: string;
  outputSchema?: Record<string, unknown>;
}

/** Compiles each listed tool's outputSchema once (per tool description object) and checks answers against it. */
export class OutputSchemas {
  private readonly validator = new LinearJsonSchemaValidator();
  private readonly compiled = new WeakMap<OutputContract, JsonSchemaValidator<unknown>>();

  /**
   * Why `result` breaks `tool`'s declared output, in plain words; null when it keeps it (or the
   * tool declares none). An answer marked `isError` may come without structured content (the
   * MCP spec allows it), but structured content it does carry is still checked.
   */
  problem(tool: OutputContract | undefined, result: { structuredContent?: unknown; isError?: unknown }): string | null {
    if (!tool?.outputSchema) return null;
    const name = displayText(tool.name, 256);
    const structured = result.structuredContent;
    if (structured === undefined || structured === null) {
      if (result.isError === true) return null;
      return `the server declared an output schema for ${name} but answered without structured content`;
    }
    let validate = this.compiled.get(tool);
    if (validate === undefined) {
      validate = this.validator.getValidator(tool.outputSchema as JsonSchemaType);
      this.compiled.set(tool, validate);
    }
    const checked = validate(structured);
    if (checked.valid) return null;
    return `the server's answer does not match the output schema it declared for ${name}: ${displayText(checked.errorMessage ?? 'invalid', PROBLEM_BYTES)}`;
  }
}
