/**
 * JSON Schema validation of what servers send and what is sent to them, with every regular
 * expression (`pattern`, `patternProperties`) evaluated in linear time (see linear-regexp.ts).
 *
 * Three validators share this: the gate (a tool's inputSchema against the arguments), the MCP
 * client (a tool's outputSchema against its structured result; the SDK's default ajv backtracks)
 * and elicitation (a server's requested schema against a person's answer).
 */
import { Ajv, type Options, type ValidateFunction } from 'ajv';
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

/**
 * Largest serialized JSON of one tool's input or output schema Warden accepts (bytes of JSON text).
 *
 * Why: compiling a schema runs on the main process, and its cost grows with its size (a 0.5 MB
 * schema takes about a second, 12 MB about twelve), so one hostile server could freeze the window
 * on every call. Real servers stay far below: the largest schema of the reference servers
 * (server-everything, server-filesystem) is under 1 KB, so 128 KiB leaves a hundredfold margin.
 */
export const MAX_TOOL_SCHEMA_BYTES = 128 * 1024;

/** A tool's input schema compiled (once per contract), or why the tool cannot be used. */
export type CompiledInputSchema = { ok: true; validate: ValidateFunction } | { ok: false; problem: string };

/** Compiled input schemas by contract hash, with the schema object they were compiled from. */
const compiledInputs = new Map<string, { schema: unknown; result: CompiledInputSchema }>();
/** Most contracts kept compiled; the oldest is dropped first (a server that re-lists endlessly cannot grow memory). */
const MAX_COMPILED_CONTRACTS = 2000;
let inputCompiles = 0;
// The schema is the server's: its patterns run on the linear-time engine, never V8's backtracking one.
let inputAjv: Ajv | undefined;

/**
 * Why a tool's schema is too large to be used (naming the field, its size and the limit), or null.
 * Measured as serialized JSON, the form the server sent.
 */
export function schemaSizeProblem(schema: unknown, field: 'inputSchema' | 'outputSchema'): string | null {
  if (schema === undefined) return null;
  const bytes = Buffer.byteLength(JSON.stringify(schema) ?? '', 'utf8');
  if (bytes <= MAX_TOOL_SCHEMA_BYTES) return null;
  const size = (n: number) => (n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MB` : `${Math.ceil(n / 1024)} KB`);
  return `its ${field} is ${size(bytes)}, over Warden's limit of ${size(MAX_TOOL_SCHEMA_BYTES)} for one tool's schema; ask the server's author for a smaller schema`;
}

/**
 * The compiled validator of a tool's input schema, compiled once per contract hash; a schema that
 * is too large or cannot be compiled is remembered as a failure too, so no call pays again.
 *
 * The connection layer calls this when a tool is listed, so the gate's call path only finds the
 * result. A contract seen again with another schema object (a re-list) is compared by its JSON
 * before the compiled result is reused, so a hash given twice to different schemas can never
 * validate one against the other.
 */
export function compileInputSchema(contractHash: string, schema: Record<string, unknown> | undefined): CompiledInputSchema {
  const hit = compiledInputs.get(contractHash);
  if (hit && (hit.schema === schema || JSON.stringify(hit.schema) === JSON.stringify(schema))) {
    hit.schema = schema;
    return hit.result;
  }
  const result = compileNow(schema);
  compiledInputs.delete(contractHash);
  compiledInputs.set(contractHash, { schema, result });
  if (compiledInputs.size > MAX_COMPILED_CONTRACTS) compiledInputs.delete(compiledInputs.keys().next().value!);
  return result;
}

/** How many input schemas have been compiled so far in this process (what a responsiveness check counts). */
export function inputSchemaCompiles(): number {
  return inputCompiles;
}

function compileNow(schema: Record<string, unknown> | undefined): CompiledInputSchema {
  const tooLarge = schemaSizeProblem(schema, 'inputSchema');
  if (tooLarge) return { ok: false, problem: tooLarge };
  inputAjv ??= createLinearAjv({ strict: false, allErrors: false, validateSchema: false });
  inputCompiles++;
  try {
    return { ok: true, validate: inputAjv.compile(schema ?? { type: 'object' }) };
  } catch (error) {
    if (error instanceof UnsafePatternError) return { ok: false, problem: `${describeUnsafePattern(schema, error, 'inputSchema')}; the call is refused` };
    return { ok: false, problem: `the tool's inputSchema is not a valid JSON Schema (${error instanceof Error ? error.message : String(error)})` };
  }
}
