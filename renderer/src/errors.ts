/**
 * Every error a person can meet, as a plain sentence that says what happened and how to fix it.
 *
 * This is the ONE place the renderer turns error codes into words: contract error codes
 * (shared/result.ts), the codes an operation records (the gate's and the ledger's), model
 * providers' problem codes and the kinds of connection failure the core tells apart. Views show
 * errors through `explainError` / `ErrorNote` and connection states through `explainConnection`;
 * none keeps its own wording. Each table is typed as a `Record` over its code union, so a new code
 * without a sentence does not compile, and test/unit/renderer/errors.test.ts checks every code at
 * run time too.
 *
 * Pure (no React, no DOM), so unit tests can import it.
 */
import type { ConnectionStatusView } from '../../shared/contract/connections';
import type { ModelProblem } from '../../shared/contract/models';
import type { ConnectFailure, ConnectFailureKind, TlsProblem } from '../../shared/domain/connect-failure';
import type { ErrorCode, FieldIssue } from '../../shared/result';

/** Which vocabulary an error's code belongs to (codes like TIMEOUT exist in more than one). */
export type ErrorSource = 'contract' | 'operation' | 'model';

/** An error as the UI holds it: its stable code, the core's message and, for input errors, the fields. */
export interface ShownError {
  code: string;
  message: string;
  /** The request's fields that were wrong (INVALID_REQUEST), as data. */
  fields?: readonly FieldIssue[];
  /** Default: a contract error. */
  source?: ErrorSource;
  /** For a network failure (a model provider that could not be reached): which kind, as the core found it. */
  failure?: ConnectFailure;
}

/** An error in words: the sentence with the fix, and the core's own message as the detail (or null). */
export interface Explanation {
  sentence: string;
  detail: string | null;
}

/** Sentences for the contract's error codes (shared/result.ts `ErrorCode`). */
export const CONTRACT_ERROR_SENTENCES: Record<ErrorCode, string> = {
  FORBIDDEN_SENDER: "This window isn't allowed to talk to Warden's core. Restart Warden; if it keeps happening, reinstall it.",
  UNKNOWN_CHANNEL: "This window asked Warden's core for something it doesn't offer: the window and the core are different versions. Restart Warden.",
  INVALID_REQUEST: "Some of what you entered isn't valid. Fix the fields marked in the form and try again.",
  INVALID_RESPONSE: "Warden's core answered with something this window can't read. Restart Warden; if it keeps happening, report it.",
  NOT_FOUND: "That no longer exists: it may have been removed, perhaps in another window. Refresh the view and try again.",
  CONFLICT: "That can't be done right now: something changed in the meantime or it's already done. Check the current state and try again.",
  DENIED: "Warden's rules don't allow this. See Permissions (and your organization's policy, if it has one).",
  NOT_CONFIRMED: "You cancelled in Warden's dialog, so nothing changed.",
  VALIDATION_FAILED: "The values given don't fit what's required. Fix the fields marked in the form and try again.",
  KEYCHAIN_UNAVAILABLE:
    "Warden can't reach your system keychain, and it never stores secrets anywhere else. Unlock or start the keychain (on Linux, GNOME Keyring or KWallet), then try again.",
  NOT_CONNECTED: "The server isn't connected. Connect it in Servers, then try again.",
  TIMEOUT: "No answer came in time. Check that the server is running and reachable, then try again.",
  CANCELLED: 'Stopped before it finished.',
  UNSUPPORTED: "This isn't available in this version of Warden or on this computer.",
  AUTH_REQUIRED: 'You need to sign in to this server first: use Sign in… on its account in Servers.',
  AUTH_FAILED: "Signing in didn't work. Try Sign in… again; if it keeps failing, check the server's sign-in settings with whoever runs it.",
  INTERNAL: 'Something went wrong inside Warden. Try again; if it keeps happening, restart Warden and report what you did.',
};

/** The codes an operation's `error` records (the gate's and the ledger's transitions). */
export const OPERATION_ERROR_CODES = ['VALIDATION_FAILED', 'OUTCOME_UNKNOWN', 'JOURNAL_FAILED', 'CANCELLED', 'NOT_SENT', 'TOOL_CALL_FAILED', 'STOPPED_READS_ONLY'] as const;
export type OperationErrorCode = (typeof OPERATION_ERROR_CODES)[number];

/** Sentences for what happened to a tool call. */
export const OPERATION_ERROR_SENTENCES: Record<OperationErrorCode, string> = {
  VALIDATION_FAILED: "The arguments don't fit what the tool accepts, so nothing was sent. Fix them and run it again.",
  OUTCOME_UNKNOWN:
    "No answer came back, so Warden can't tell whether the server did it. Check on the server's side before trying again; Recovery lets you record what happened or retry.",
  JOURNAL_FAILED: "Warden couldn't write this call to its activity log, so it didn't send it. Check that the disk has free space, then run it again.",
  CANCELLED: 'Stopped before it was sent: nothing happened.',
  NOT_SENT: 'This call was never sent to the server, so nothing happened. Check that the server is connected, then run it again.',
  TOOL_CALL_FAILED: "The server answered with an error (its words are below). The call reached it, so check what it says before running it again.",
  STOPPED_READS_ONLY: 'Stopped while it ran. This tool only reads, so nothing changed and nothing needs checking.',
};

/** A model provider's problem codes (shared/contract/models.ts `ModelProblem`). */
export type ModelProblemCode = ModelProblem['code'];

/** Sentences for a model provider's problems. */
export const MODEL_PROBLEM_SENTENCES: Record<ModelProblemCode, string> = {
  UNAUTHORIZED: 'The provider refused the API key. Enter a valid key for this provider in Models.',
  FORBIDDEN: "The provider says this key may not use this model or endpoint. Check the key's permissions with the provider, or pick another model.",
  MODEL_NOT_FOUND: "The provider has no model by that name. Pick one from the provider's list in Models, or check the base URL (OpenAI-compatible servers usually end in /v1).",
  RATE_LIMITED: 'The provider is limiting how fast you can send requests. Wait a minute and try again, or check your plan with the provider.',
  PROVIDER_ERROR: "The provider failed on its side. Try again in a moment; if it keeps happening, check the provider's status page.",
  BAD_REQUEST: "The provider refused the request as it was sent (its words are below). Change what it complains about, such as the model or the maximum length, and try again.",
  TIMEOUT: "The provider didn't answer in time. Check that it's running and not overloaded, then try again.",
  STREAM_CUT: 'The connection to the provider broke before the reply was complete. Try again.',
  NETWORK: "Warden couldn't reach the provider. Check the base URL in Models and your network connection, and that a local server is running.",
  CANCELLED: 'Stopped before the reply was complete.',
};

/** Words for the kinds of TLS problem. */
const TLS_WORDS: Record<TlsProblem, string> = {
  'self-signed': 'its certificate is self-signed, so Warden cannot tell it is the real server',
  expired: 'its certificate has expired',
  'not-yet-valid': "its certificate isn't valid yet (check this computer's clock)",
  'wrong-host': 'its certificate is for a different name',
  untrusted: "its certificate isn't signed by an authority this computer trusts",
  other: 'the secure (TLS) connection could not be set up',
};

/** HTTP statuses in words, with the fix. */
function httpWords(host: string, status: number): string {
  if (status === 401) return `${host} refused Warden's credentials (HTTP 401, unauthorized). Check the token or header in the server's settings, or sign in again.`;
  if (status === 403) return `${host} says this account isn't allowed to use it (HTTP 403, forbidden). Check the account's access with whoever runs the server.`;
  if (status === 404) return `${host} has nothing at this address (HTTP 404, not found). Check the URL's path; MCP endpoints often end in /mcp or /sse.`;
  if (status === 405) return `${host} doesn't accept MCP requests at this address (HTTP 405). Check the URL's path.`;
  if (status === 429) return `${host} is limiting requests (HTTP 429, too many requests). Wait a minute, then connect again.`;
  if (status >= 500) return `${host} failed on its side (HTTP ${status}, server error). Try again later, or tell whoever runs the server.`;
  if (status >= 300 && status < 400) return `${host} redirected Warden elsewhere (HTTP ${status}), which it doesn't follow for MCP. Use the address it redirects to.`;
  return `${host} answered HTTP ${status}, which isn't a working MCP endpoint. Check the URL.`;
}

const exitWords = (code: number | null, signal: string | null): string =>
  signal ? `it was stopped by ${signal}` : code === null ? 'it exited' : `it exited with code ${code}`;

/** Sentences for each kind of connection failure, filled in with what the core found. */
export const CONNECT_FAILURE_SENTENCES: { [K in ConnectFailureKind]: (f: Extract<ConnectFailure, { kind: K }>) => string } = {
  'command-not-found': (f) => `Warden could not start \`${f.command}\`: no such program. Check the command in the server's settings.`,
  'working-folder-missing': (f) => `Warden couldn't start \`${f.command}\`: its working folder ${f.cwd} doesn't exist. Create it or change the server's working directory.`,
  'permission-denied': (f) =>
    `Warden couldn't start \`${f.command}\`: this computer doesn't allow running it (permission denied). Make the file executable (chmod +x) or point the command at the program itself.`,
  'process-exited': (f) =>
    `${f.atStart ? `\`${f.command}\` started but stopped right away` : `The server's process stopped`}: ${exitWords(f.exitCode, f.signal)}.${
      f.lastStderr ? ` Its last message was “${f.lastStderr}”.` : ''
    } ${f.atStart ? "Check the server's arguments and environment variables, then connect again." : 'Connect again; the log shows what it said before it stopped.'}`,
  dns: (f) => `Warden couldn't find ${f.host}: the name doesn't resolve. Check the address for typos, and your network connection.`,
  refused: (f) =>
    `Nothing is answering at ${f.host}${f.port !== null ? `:${f.port}` : ''}: the connection was refused. Start the server, or check the address and port.`,
  network: (f) => `The network connection to ${f.host} failed (${f.code}). Check your network connection, then connect again.`,
  tls: (f) => `Warden didn't connect to ${f.host}: ${TLS_WORDS[f.problem]}. Use the server's proper https address, or ask whoever runs it to fix its certificate.`,
  'http-status': (f) => httpWords(f.host, f.status),
  timeout: (f) => `The server didn't answer within ${Math.round(f.ms / 1000)} seconds. Check that it's running and not stuck, then connect again.`,
  'missing-secret': (f) => `The secret ${f.name.replace(/^(env|header):/, '')} isn't in the keychain for this account. Set it under the account below, then connect again.`,
  'not-mcp': (f) =>
    `Something answered, but not as an MCP server: it said “${f.detail}”. Check that the command or URL starts an MCP server (a local server must write only MCP messages to its output).`,
  other: (f) => `Warden couldn't connect: ${f.detail}.`,
};

/** A connection failure in words, with the fix. */
export function explainConnectFailure(failure: ConnectFailure): string {
  const sentence = CONNECT_FAILURE_SENTENCES[failure.kind] as (f: ConnectFailure) => string;
  return sentence(failure);
}

/**
 * A connection's state in words: "Connected", "Connecting…", or for an error the failure's
 * sentence (the reason text when the core sent no failure kind) and the retry countdown.
 */
export function explainConnection(status: ConnectionStatusView | undefined): string {
  const s = status ?? { state: 'disconnected' as const };
  switch (s.state) {
    case 'connected':
      return 'Connected';
    case 'connecting':
      return `Connecting…${s.attempt > 1 ? ` (attempt ${s.attempt})` : ''}`;
    case 'disconnected':
      return 'Disconnected';
    case 'auth_required':
      return `Sign-in required: ${s.reason}`;
    case 'error': {
      const why = s.failure ? explainConnectFailure(s.failure) : `Couldn't connect: ${s.reason}.`;
      return s.retryInMs !== undefined ? `${why} Retrying in ${Math.max(1, Math.round(s.retryInMs / 1000))} s.` : why;
    }
  }
}

const has = <K extends string>(table: Record<K, unknown>, code: string): code is K => Object.prototype.hasOwnProperty.call(table, code);

/**
 * The sentence for an error and the core's message as its detail.
 *
 * The detail is dropped when the sentence already covers it (input errors whose fields are shown
 * one by one, a plain Stop). An unknown code still gets a sentence: a bug must never show a bare code.
 */
export function explainError(error: ShownError): Explanation {
  const source = error.source ?? 'contract';
  let sentence: string;
  if (source === 'model' && has(MODEL_PROBLEM_SENTENCES, error.code)) sentence = MODEL_PROBLEM_SENTENCES[error.code];
  else if (source === 'operation' && has(OPERATION_ERROR_SENTENCES, error.code)) sentence = OPERATION_ERROR_SENTENCES[error.code];
  else if (has(CONTRACT_ERROR_SENTENCES, error.code)) sentence = CONTRACT_ERROR_SENTENCES[error.code];
  else if (has(OPERATION_ERROR_SENTENCES, error.code)) sentence = OPERATION_ERROR_SENTENCES[error.code];
  else sentence = CONTRACT_ERROR_SENTENCES.INTERNAL;
  // Which kind of network failure says more than "could not reach": the name, the port, the certificate.
  if (error.failure) sentence = explainConnectFailure(error.failure);
  const covered = (error.fields?.length ?? 0) > 0 || error.code === 'CANCELLED' || error.message.trim() === '';
  return { sentence, detail: covered ? null : error.message };
}

/**
 * How a form names its fields: the words for a field's path (`['definition', 'url']` → "URL"),
 * or null when the path is not one of its fields.
 */
export type FieldNamer = (path: readonly (string | number)[]) => string | null;

/** A request's field problem in words: "URL: plain http is only allowed on loopback". */
export function fieldSentence(issue: FieldIssue, name: FieldNamer): string {
  const label = name(issue.path) ?? (issue.path.length ? issue.path.join(' › ') : 'The request');
  return `${label}: ${plainIssue(issue.message)}`;
}

/** A field problem as a sentence of its own: capital first letter, final full stop. */
export function asSentence(text: string): string {
  const t = text.trim();
  if (!t) return t;
  const first = t[0]!.toUpperCase() + t.slice(1);
  return /[.!?)”]$/.test(first) ? first : `${first}.`;
}

/**
 * zod's stock messages in plain words ("Invalid input: expected string, received undefined" →
 * "is required"); the schemas' own messages are already written for people and pass through.
 */
export function plainIssue(message: string): string {
  if (/received undefined/.test(message)) return 'this is required';
  const type = /^Invalid input: expected (\w+), received (\w+)/.exec(message);
  if (type) return `expected ${type[1] === 'number' ? 'a number' : type[1] === 'boolean' ? 'yes or no' : type[1] === 'array' ? 'a list' : type[1] === 'object' ? 'a group of values' : 'text'}`;
  const small = /^Too small: expected string to have >=(\d+) characters?/.exec(message);
  if (small) return small[1] === '1' ? 'this is required' : `enter at least ${small[1]} characters`;
  const big = /^Too big: expected string to have <=(\d+) characters?/.exec(message);
  if (big) return `use at most ${big[1]} characters`;
  return message;
}

/**
 * The gate's refusal of a tool's arguments (`arguments.assignee.login: must NOT have fewer than 2
 * characters`) as the field it is about (a JSON pointer, `/assignee/login`) and what to do, in
 * words; null when the message is not of that shape.
 *
 * Why here: the Run form checks what it can before sending, but the gate validates against the
 * tool's whole schema; what it refuses must still land next to its field, not as a raw path.
 */
export function argumentsProblem(message: string): { path: string; words: string } | null {
  const m = /^arguments((?:\.[^:\s]+)*): (.+)$/s.exec(message.trim());
  if (!m) return null;
  const path = (m[1] ?? '')
    .split('.')
    .slice(1)
    .map((step) => `/${step.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    .join('');
  return { path, words: schemaWords(m[2]!.trim()) };
}

/** A JSON Schema validator's message (Ajv's wording) as an instruction a person can follow. */
function schemaWords(message: string): string {
  let m: RegExpExecArray | null;
  if (message === 'required') return 'This is required.';
  if (message === 'not allowed by the tool schema') return "The tool doesn't accept this field: remove it.";
  if ((m = /^must be <= (\S+)$/.exec(message))) return `Enter ${m[1]} or less.`;
  if ((m = /^must be >= (\S+)$/.exec(message))) return `Enter ${m[1]} or more.`;
  if ((m = /^must be < (\S+)$/.exec(message))) return `Enter less than ${m[1]}.`;
  if ((m = /^must be > (\S+)$/.exec(message))) return `Enter more than ${m[1]}.`;
  if ((m = /^must be multiple of (\S+)$/.exec(message))) return `Enter a multiple of ${m[1]}.`;
  if ((m = /^must NOT have fewer than (\d+) characters?$/.exec(message))) return `Enter at least ${m[1]} characters.`;
  if ((m = /^must NOT have more than (\d+) characters?$/.exec(message))) return `Use at most ${m[1]} characters.`;
  if ((m = /^must NOT have fewer than (\d+) items?$/.exec(message))) return `Add at least ${m[1]} ${m[1] === '1' ? 'item' : 'items'}.`;
  if ((m = /^must NOT have more than (\d+) items?$/.exec(message))) return `Use at most ${m[1]} ${m[1] === '1' ? 'item' : 'items'}.`;
  if (message === 'must be equal to one of the allowed values') return 'Choose one of the allowed values.';
  if (message === 'must be equal to constant') return 'This must be the one value the tool allows.';
  if (/^must match pattern /.test(message)) return "This isn't in the form the tool expects: see the field's description.";
  if ((m = /^must match format "(.+)"$/.exec(message))) return `Enter a valid ${m[1]}.`;
  if (/^must NOT have duplicate items/.test(message)) return 'Each item must be different.';
  if ((m = /^must be (string|number|integer|boolean|array|object|null)(,.*)?$/.exec(message))) {
    const kinds: Record<string, string> = { string: 'text', number: 'a number', integer: 'a whole number', boolean: 'yes or no', array: 'a list', object: 'a group of values', null: 'nothing (null)' };
    return `Expected ${kinds[m[1]!]}.`;
  }
  return asSentence(message);
}
