/**
 * Elicitation: a server asking the person a question.
 *
 * It is shown as what it is — a question from a named server — through the `Elicitor` port, and
 * it is never tool approval: this module has no access to the gate, and nothing it returns is
 * ever read as consent to a tool call. Form answers are validated against the requested schema
 * (ajv, defaults applied) before anything is sent back. URL mode shows the target domain and
 * opens nothing without explicit consent, and only https URLs, through the BrowserOpener port.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, ErrorCode, McpError, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { BrowserOpener } from '../ports';
import { createLinearAjv } from '../validation/schemas';
import { displayText } from '../text/sanitize';
import { judgeForm } from './secret-fields';

/** Most of a server's question shown to the person (UTF-8 bytes), and of each field's label or help text. */
const MESSAGE_BYTES = 4 * 1024;
const FIELD_TEXT_BYTES = 512;

/** The form a server asks to be filled in (only top-level primitive properties, per the MCP spec). */
export interface RequestedSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
}

/** A form-mode question, labelled with the asking server (by Warden's id and label, not the server's own name). */
export interface FormElicitation {
  serverId: string;
  serverLabel: string;
  /** The account the asking connection runs as (absent where the host has no accounts). */
  accountId?: string;
  /** Untrusted: written by the server. Show it labelled as the server's words. */
  message: string;
  schema: RequestedSchema;
  /** Set when a previous answer did not match the schema: what was wrong, to show with the form again. */
  problem?: string;
  /** Set when the form might ask for a secret: why, in words, to show in the form (its answer is confirmed natively). */
  warning?: string;
}

/**
 * What the native step shows before the answer to a form that might ask for a secret is sent:
 * who asks, why Warden doubts it, and which fields would be sent — never the values typed.
 */
export interface AnswerConfirmation {
  serverId: string;
  serverLabel: string;
  accountId?: string;
  /** Warden's name for the account (filled in by the core). */
  accountLabel?: string;
  /** Untrusted: the server's message, sanitized. */
  message: string;
  warning: string;
  /** The names of the fields the answer fills in (the server's, sanitized). */
  fields: string[];
}

/** A URL-mode request: the server wants the person to visit a page (sign-in, payment, consent). */
export interface UrlElicitation {
  serverId: string;
  serverLabel: string;
  message: string;
  url: string;
  /** The host the URL leads to, as the browser will see it (punycode for IDNs, so look-alikes show). */
  domain: string;
  elicitationId: string;
}

/** The three answers MCP defines: accept (submitted / consented), decline (explicit no), cancel (dismissed). */
export type ElicitAction = 'accept' | 'decline' | 'cancel';

/** How a person answered a form. */
export type FormAnswer = { action: 'accept'; content: Record<string, unknown> } | { action: 'decline' } | { action: 'cancel' };

/**
 * Shows elicitations to the person (a dialog in main, a test double in tests).
 * `signal` aborts when the server cancels the request or disconnects: close the question then.
 */
export interface Elicitor {
  form(request: FormElicitation, signal: AbortSignal): Promise<FormAnswer>;
  /** Resolves 'accept' only if the person explicitly consented to open `url`. */
  url(request: UrlElicitation, signal: AbortSignal): Promise<ElicitAction>;
  /** Told when a form was refused before the person saw it (it asked for a secret), to warn them. */
  refused?(notice: RefusedForm): void;
  /**
   * The native step before the answer to a form that might ask for a secret is sent: resolves
   * true only if the person confirms sending it. Absent: such an answer is never sent.
   */
  confirmAnswer?(confirmation: AnswerConfirmation, signal: AbortSignal): Promise<boolean>;
}

/** A form refused unseen because a field asks for a secret. */
export interface RefusedForm {
  serverId: string;
  serverLabel: string;
  accountId?: string;
  /** Untrusted: the server's message, sanitized. */
  message: string;
  /** The field's name (the server's, sanitized) and why it counts as asking for a secret. */
  field: string;
  why: string;
}

/**
 * An Elicitor for hosts with no way to ask (headless, tests of other parts): every question is
 * cancelled and nothing is ever opened. Fail closed: silence is never consent.
 */
export const cancellingElicitor: Elicitor = {
  form: async () => ({ action: 'cancel' }),
  url: async () => 'cancel',
};

/** Client capabilities to declare so servers may elicit (form and URL mode). Pass to `new Client(info, { capabilities })`. */
export const ELICITATION_CAPABILITIES = { elicitation: { form: {}, url: {} } } as const;

/** Something that happened, for logs and the activity view. Never contains form content. */
export interface ElicitationEvent {
  serverId: string;
  mode: 'form' | 'url';
  outcome: ElicitAction | 'refused' | 'invalid-answer';
  detail?: string;
}

/** Which server is asking, and the ports to ask the person and open a browser. */
export interface ElicitationHandlerOptions {
  serverId: string;
  serverLabel: string;
  accountId?: string;
  elicitor: Elicitor;
  browser: BrowserOpener;
  /** How many times a person may fix an answer that does not match the schema before it counts as cancel. */
  maxAttempts?: number;
  onEvent?: (event: ElicitationEvent) => void;
}

/**
 * Builds the `elicitation/create` request handler for one server's SDK client.
 *
 * Why a builder: the handler must know which server is asking (Warden's stable id and label,
 * never the server's self-declared name), and the connection layer creates one client per
 * (server, account).
 */
export function createElicitationHandler(options: ElicitationHandlerOptions) {
  // The schema is the server's: its patterns run on the linear-time engine.
  const ajv = createLinearAjv({ strict: false, allErrors: true, useDefaults: true });
  const maxAttempts = options.maxAttempts ?? 3;
  const emit = (e: Omit<ElicitationEvent, 'serverId'>) => options.onEvent?.({ serverId: options.serverId, ...e });

  /** The native step for a doubtful form: 'accept' only on the person's explicit yes; no step at all never sends. */
  const confirmAnswer = async (confirmation: AnswerConfirmation, signal: AbortSignal): Promise<ElicitAction> => {
    if (!options.elicitor.confirmAnswer) return 'cancel';
    try {
      const yes = await options.elicitor.confirmAnswer(confirmation, signal);
      if (signal.aborted) return 'cancel';
      return yes ? 'accept' : 'decline';
    } catch {
      return 'cancel';
    }
  };

  return async function handleElicitation(request: ElicitRequest, extra: { signal: AbortSignal }): Promise<ElicitResult> {
    const params = request.params;
    if (params.mode === 'url') {
      const problem = urlProblem(params.url);
      if (problem) {
        emit({ mode: 'url', outcome: 'refused', detail: problem });
        throw new McpError(ErrorCode.InvalidParams, `Warden refused to open the URL: ${problem}`);
      }
      const url = new URL(params.url);
      let action: ElicitAction;
      try {
        action = await options.elicitor.url(
          { serverId: options.serverId, serverLabel: options.serverLabel, message: displayText(params.message, MESSAGE_BYTES), url: url.href, domain: url.hostname, elicitationId: params.elicitationId },
          extra.signal,
        );
      } catch {
        action = 'cancel';
      }
      if (action === 'accept' && !extra.signal.aborted) {
        await options.browser.open(url.href);
      } else if (action === 'accept') {
        action = 'cancel';
      }
      emit({ mode: 'url', outcome: action });
      return { action };
    }

    const schema = params.requestedSchema as RequestedSchema;
    let validate: ValidateFunction;
    try {
      // Only the declared fields may come back: anything else the UI might add is refused.
      validate = ajv.compile({ ...schema, additionalProperties: false });
    } catch (error) {
      emit({ mode: 'form', outcome: 'refused', detail: 'invalid requestedSchema' });
      throw new McpError(ErrorCode.InvalidParams, `Invalid requestedSchema: ${error instanceof Error ? error.message : String(error)}`);
    }
    // What the person is shown: the server's words sanitized; the schema validated against is the server's own.
    const message = displayText(params.message, MESSAGE_BYTES);
    const account = options.accountId !== undefined ? { accountId: options.accountId } : {};
    // Servers must not ask for secrets in a form: such a form never reaches the person, who is warned instead.
    const verdict = judgeForm(params.message, schema.properties ?? {});
    if (verdict.kind === 'refuse') {
      const field = displayText(verdict.field, FIELD_TEXT_BYTES);
      emit({ mode: 'form', outcome: 'refused', detail: `field ${field}: ${verdict.why}` });
      try {
        options.elicitor.refused?.({ serverId: options.serverId, serverLabel: options.serverLabel, ...account, message, field, why: verdict.why });
      } catch {
        // A failing warning never turns a refusal into a question.
      }
      throw new McpError(ErrorCode.InvalidParams, `Warden refused the form: field "${field}": ${verdict.why}; servers must not ask for passwords, tokens or keys in a form`);
    }
    const warning = verdict.kind === 'warn' ? displayText(verdict.warning, FIELD_TEXT_BYTES) : undefined;
    const shownSchema = shownFormSchema(schema);
    let problem: string | undefined;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      let answer: FormAnswer;
      try {
        answer = await options.elicitor.form(
          { serverId: options.serverId, serverLabel: options.serverLabel, ...account, message, schema: shownSchema, ...(problem ? { problem } : {}), ...(warning ? { warning } : {}) },
          extra.signal,
        );
      } catch {
        answer = { action: 'cancel' };
      }
      if (extra.signal.aborted) answer = { action: 'cancel' };
      if (answer.action !== 'accept') {
        emit({ mode: 'form', outcome: answer.action });
        return { action: answer.action };
      }
      const content = structuredClone(answer.content ?? {});
      if (validate(content)) {
        if (warning !== undefined) {
          const fields = Object.keys(content).map((f) => displayText(f, FIELD_TEXT_BYTES));
          const sent = await confirmAnswer({ serverId: options.serverId, serverLabel: options.serverLabel, ...account, message, warning, fields }, extra.signal);
          if (sent !== 'accept') {
            emit({ mode: 'form', outcome: sent, detail: 'not confirmed in the native step' });
            return { action: sent };
          }
        }
        emit({ mode: 'form', outcome: 'accept' });
        return { action: 'accept', content: content as ElicitResult['content'] };
      }
      problem = describe(validate.errors ?? []);
      emit({ mode: 'form', outcome: 'invalid-answer', detail: problem });
    }
    emit({ mode: 'form', outcome: 'cancel', detail: 'too many invalid answers' });
    return { action: 'cancel' };
  };
}

/**
 * Registers the elicitation handler on an SDK client (created with ELICITATION_CAPABILITIES).
 * Returns nothing that could approve a tool call: the handler only answers the server.
 */
export function registerElicitation(client: Client, options: ElicitationHandlerOptions): void {
  const handler = createElicitationHandler(options);
  client.setRequestHandler(ElicitRequestSchema, (request, extra) => handler(request, extra));
}

/**
 * The form schema as shown: each field's title, description, display names and the titles of
 * its choices sanitized; names, types, formats and allowed values kept exactly (they decide what
 * an answer may be, and the form shows their hidden characters as escapes).
 */
function shownFormSchema(schema: RequestedSchema): RequestedSchema {
  const properties: RequestedSchema['properties'] = {};
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const shown: Record<string, unknown> = { ...field };
    for (const key of ['title', 'description'] as const) if (typeof field[key] === 'string') shown[key] = displayText(field[key], FIELD_TEXT_BYTES);
    if (Array.isArray(field.enumNames)) shown.enumNames = field.enumNames.map((n: unknown) => (typeof n === 'string' ? displayText(n, FIELD_TEXT_BYTES) : n));
    // Titled choices ({const, title} in oneOf / anyOf, also under items for a multi-select): the titles are the server's labels.
    for (const key of ['oneOf', 'anyOf'] as const) if (Array.isArray(shown[key])) shown[key] = titledChoices(shown[key] as unknown[]);
    const items = shown.items as Record<string, unknown> | undefined;
    if (items && typeof items === 'object') shown.items = { ...items, ...Object.fromEntries((['oneOf', 'anyOf'] as const).filter((k) => Array.isArray(items[k])).map((k) => [k, titledChoices(items[k] as unknown[])])) };
    properties[name] = shown;
  }
  return { ...schema, properties };
}

/** Choices with their `title` labels sanitized; each value (`const`) kept exactly, as it decides the answer. */
function titledChoices(choices: readonly unknown[]): unknown[] {
  return choices.map((c) => (c && typeof c === 'object' && typeof (c as { title?: unknown }).title === 'string' ? { ...c, title: displayText((c as { title: string }).title, FIELD_TEXT_BYTES) } : c));
}

/** Why Warden will not open `raw` for a URL-mode elicitation, or null: https only, no credentials in the URL. */
export function urlProblem(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'not a valid URL';
  }
  if (u.protocol !== 'https:') return `only https URLs are opened (got ${u.protocol})`;
  if (u.username || u.password) return 'the URL contains a username or password';
  return null;
}

function describe(errors: ErrorObject[]): string {
  return errors
    .slice(0, 5)
    .map((e) => {
      const field = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : e.params && 'missingProperty' in e.params ? String(e.params.missingProperty) : e.params && 'additionalProperty' in e.params ? String(e.params.additionalProperty) : '(form)';
      return `${field}: ${e.message ?? 'invalid'}`;
    })
    .join('; ');
}
