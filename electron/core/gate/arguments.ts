/**
 * Argument preparation: the caller's arguments become one deep-copied, frozen object and its
 * canonical JSON (the fingerprint's input) in a single read, and are validated against the tool's
 * input schema before the policy ever sees them.
 */
import { canonicalCopy } from '../canonical/canonical-json';
import { compileInputSchema } from '../validation/schemas';
import type { ToolDescriptor } from './ports';

/** Largest canonical argument payload the gate accepts. */
export const MAX_ARGUMENTS_BYTES = 1024 * 1024;

/** The frozen copy and canonical form of a request's arguments, or why they cannot be sent. */
export interface PreparedArguments {
  args: Readonly<Record<string, unknown>>;
  canonicalArguments: string;
  /** Set when the input is not a JSON object within the size limit (the copy is then empty). */
  copyError: string | null;
}

/** Deep copy + freeze, and canonicalize; any non-JSON input fails validation. */
export function prepareArguments(raw: unknown): PreparedArguments {
  let args: Readonly<Record<string, unknown>> = Object.freeze({});
  let canonicalArguments = '{}';
  let copyError: string | null = null;
  try {
    if (raw === undefined || raw === null) {
      args = Object.freeze({});
    } else if (typeof raw !== 'object' || Array.isArray(raw)) {
      copyError = 'arguments: must be an object';
    } else {
      // One read of the caller's object gives both the fingerprint input and the stored copy.
      const made = canonicalCopy(raw as Record<string, unknown>);
      canonicalArguments = made.canonical;
      args = made.copy;
      if (canonicalArguments.length > MAX_ARGUMENTS_BYTES) copyError = `arguments: ${canonicalArguments.length} bytes exceeds the ${MAX_ARGUMENTS_BYTES}-byte limit`;
    }
  } catch (error) {
    copyError = error instanceof Error ? error.message : String(error);
  }
  return { args, canonicalArguments, copyError };
}

/**
 * Validates arguments against a tool's input schema. The schema was compiled when the tool was
 * listed (validation/schemas.ts, once per contract), so a call only looks the validator up; a tool
 * whose schema is too large or broken is refused with the reason its listing gave.
 */
export class ArgumentValidator {
  /** Null when the arguments are valid; otherwise the first problem, naming the field. */
  validate(tool: ToolDescriptor, args: Readonly<Record<string, unknown>>): string | null {
    if (tool.unusable !== undefined) return `${tool.name} cannot be used: ${tool.unusable}`;
    const compiled = compileInputSchema(tool.contractHash, tool.inputSchema);
    if (!compiled.ok) return compiled.problem;
    const validator = compiled.validate;
    if (validator(args)) return undeclaredField(tool.inputSchema, args);
    const e = validator.errors?.[0];
    if (!e) return 'arguments do not match the tool schema';
    const at = e.instancePath ? 'arguments' + e.instancePath.replace(/\//g, '.') : 'arguments';
    const missing = (e.params as { missingProperty?: string }).missingProperty;
    const extra = (e.params as { additionalProperty?: string }).additionalProperty;
    if (missing) return `${at}.${missing}: required`;
    if (extra) return `${at}.${extra}: not allowed by the tool schema`;
    return `${at}: ${e.message ?? 'invalid'}`;
  }
}

/**
 * The first top-level argument the tool's input schema does not declare, as an error naming it;
 * null when every field is declared or the schema explicitly allows more (`additionalProperties`
 * set to anything but false, or `patternProperties`).
 *
 * Why: JSON Schema accepts undeclared fields by default, so a validator alone would forward a
 * field nobody reviewed. A field the schema explicitly allows is shown and fingerprinted like any
 * other; one it never mentions is refused.
 */
function undeclaredField(schema: Record<string, unknown> | undefined, args: Readonly<Record<string, unknown>>): string | null {
  if (!schema || schema.additionalProperties !== undefined || schema.patternProperties !== undefined || schema.$ref !== undefined) return null;
  // Fields declared at the top or in a branch of allOf/anyOf/oneOf (ajv already checked which branch holds).
  const declared = new Set<string>();
  const collect = (s: unknown) => {
    const props = s && typeof s === 'object' ? (s as { properties?: unknown }).properties : undefined;
    if (props && typeof props === 'object') for (const k of Object.keys(props)) declared.add(k);
  };
  collect(schema);
  for (const branch of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(schema[branch])) for (const b of schema[branch] as unknown[]) collect(b);
  for (const key of Object.keys(args)) {
    if (!declared.has(key)) return `arguments.${key}: not declared by the tool's input schema (refused: an undeclared field would be sent without review)`;
  }
  return null;
}
