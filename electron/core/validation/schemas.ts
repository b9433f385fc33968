/**
 * JSON Schema validation of what servers send and what is sent to them, with every regular
 * expression (`pattern`, `patternProperties`) evaluated in linear time (see linear-regexp.ts).
 *
 * Three validators share this: the gate (a tool's inputSchema against the arguments), the MCP
 * client (a tool's outputSchema against its structured result; the SDK's default ajv backtracks)
 * and elicitation (a server's requested schema against a person's answer).
 */
import { Ajv, type Options } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { linearRegExpEngine, UnsafePatternError } from './linear-regexp';

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

/** An ajv instance (with ajv-formats) whose patterns run on the linear-time engine. */
export function createLinearAjv(options: Options = {}): Ajv {
  const ajv = new Ajv({ ...options, code: { ...options.code, regExp: linearRegExpEngine } });
  addFormats(ajv);
  return ajv;
}

/**
 * A plain sentence for a schema whose pattern cannot be evaluated safely, naming the argument the
 * pattern applies to, the pattern, and why: "arguments.name: the tool's inputSchema pattern "…"
 * uses a lookahead assertion ((?=a)), which Warden cannot evaluate in linear time".
 */
export function describeUnsafePattern(schema: unknown, error: UnsafePatternError, schemaName: string, root = 'arguments'): string {
  const where = locatePattern(schema, error.pattern, root) ?? root;
  return `${where}: the tool's ${schemaName} pattern ${JSON.stringify(error.pattern)} ${error.why}`;
}

/**
 * Where in the data a pattern applies: `arguments.name` for `properties.name.pattern`,
 * `arguments.tags` for a `patternProperties` key of `properties.tags`; null if not found.
 */
function locatePattern(schema: unknown, pattern: string, at: string, depth = 0): string | null {
  if (depth > 64 || schema === null || typeof schema !== 'object') return null;
  if (Array.isArray(schema)) {
    for (const s of schema) {
      const found = locatePattern(s, pattern, at, depth + 1);
      if (found) return found;
    }
    return null;
  }
  const s = schema as Record<string, unknown>;
  if (s.pattern === pattern) return at;
  const patternProperties = s.patternProperties;
  if (patternProperties && typeof patternProperties === 'object' && Object.prototype.hasOwnProperty.call(patternProperties, pattern)) return at;
  for (const [key, value] of Object.entries(s)) {
    if (key === 'properties' && value && typeof value === 'object') {
      for (const [name, sub] of Object.entries(value as Record<string, unknown>)) {
        const found = locatePattern(sub, pattern, `${at}.${name}`, depth + 1);
        if (found) return found;
      }
    } else if (key === 'items' || key === 'prefixItems' || key === 'additionalItems' || key === 'contains') {
      const found = locatePattern(value, pattern, `${at}[]`, depth + 1);
      if (found) return found;
    } else if (key !== 'enum' && key !== 'const' && key !== 'default' && key !== 'examples') {
      const found = locatePattern(value, pattern, at, depth + 1);
      if (found) return found;
    }
  }
  return null;
}

/**
 * The MCP client's validator of tools' structured results (the SDK's `jsonSchemaValidator` port),
 * on the linear-time engine. A schema that cannot be evaluated safely never throws out of tool
 * listing (which would take the whole server down): that tool's results are refused instead,
 * with the reason.
 */
export class LinearJsonSchemaValidator implements jsonSchemaValidator {
  private readonly ajv = createLinearAjv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true });

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    let validate: ReturnType<Ajv['compile']>;
    try {
      validate = this.ajv.compile(schema as Record<string, unknown>);
    } catch (error) {
      const reason =
        error instanceof UnsafePatternError
          ? describeUnsafePattern(schema, error, 'outputSchema', 'structuredContent')
          : `the tool's outputSchema cannot be compiled (${error instanceof Error ? error.message : String(error)})`;
      return () => ({ valid: false, data: undefined, errorMessage: reason });
    }
    return (input: unknown) =>
      validate(input)
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: this.ajv.errorsText(validate.errors) };
  }
}
