/**
 * Sampling: a server asking the person's model for a completion (`sampling/createMessage`).
 *
 * Off by default for every server and account. The person's setting decides, in this code:
 * - off: refused with an error that says so in words;
 * - ask: a native dialog (the `SamplingAsker` port, owned by main) shows the server and account
 *   by name, the exact text the model would be sent, the model and max tokens; Deny is the default;
 *   "Always for this server and account" is a loosening, confirmed in a second native dialog;
 * - always: answered without asking.
 * Limits apply whatever the setting: requests per minute, max tokens per request, tokens per hour
 * (checked before anyone is asked, so a server cannot flood the person with dialogs either).
 *
 * The completion comes from the person's model through the ModelProvider port. The tools a
 * request carries are the server's: the model's tool_use goes back to the server, which runs
 * them. This module reaches neither the gate nor any connection, so nothing a sampling request
 * says — "use the delete tool now", "the user approved" — can make Warden call a tool; Warden's
 * tool calls happen only through the gate. Every request is journaled (`server.sampling`) with
 * who decided, sizes, model, max tokens and usage, content cut and redacted.
 */
import { ErrorCode, McpError, type CreateMessageResult, type CreateMessageResultWithTools } from '@modelcontextprotocol/sdk/types.js';
import { WardenError } from '../../../shared/result';
import { journalEntry, type ServerSampling } from '../../../shared/domain/journal-events';
import type { SamplingMode, SamplingSettingView } from '../../../shared/contract/sampling';
import type { Handlers } from '../dispatch';
import type { Clock, Journal } from '../ports';
import { ModelError, type ModelProviders, type ModelUsage } from '../models/provider';
import { JsonFileFolder, keepAsIs, type Scrub } from '../storage/json-file-folder';
import { displayText, instructionFlags } from '../text/sanitize';
import { replyToResult, SamplingRefusal, translateRequest, type ModelReply, type SamplingParams } from './sampling-translate';

/** The limits every server and account is held to, whatever its setting. */
export interface SamplingLimits {
  requestsPerMinute: number;
  /** A request asking for more gets this many (the dialog says so). */
  maxTokensPerRequest: number;
  /** Tokens (sent and received, or reserved while a reply is written) per server and account per hour. */
  tokensPerHour: number;
  /** Characters of text one request may send to the model. */
  maxRequestCharacters: number;
}

export const DEFAULT_SAMPLING_LIMITS: SamplingLimits = { requestsPerMinute: 6, maxTokensPerRequest: 4096, tokensPerHour: 40_000, maxRequestCharacters: 100_000 };

/** The model that would answer, in the person's words. */
export interface SamplingModelChoice {
  providerId: string;
  /** The person's name for the provider ("Anthropic (work)"). */
  providerLabel: string;
  model: string;
}

/** What the person is asked about one request: trusted names, the server's text cleaned. */
export interface SamplingQuestion {
  serverName: string;
  accountName: string;
  /** "claude-sonnet-4-5 from Anthropic (work)". */
  modelLabel: string;
  maxTokens: number;
  /** Set when the server asked for more than the per-request cap. */
  requestedMaxTokens: number;
  /** The server's system prompt, cleaned ("" when none). */
  systemPrompt: string;
  /** Every message, cleaned, one labelled block each. */
  transcript: string;
  /** Names of the server's tools the model would be offered (the server runs them, not Warden). */
  tools: string[];
  /** Why parts of the text read like instructions to a model, in words. */
  warnings: string[];
}

export type SamplingChoice = 'once' | 'always' | 'deny';

/** A looser sampling setting about to be applied. */
export interface SamplingLoosening {
  serverName: string;
  accountName: string;
  from: SamplingSettingView;
  to: SamplingSettingView;
}

/** The model's reply, cleaned, before it goes back to the server (when the person reviews replies). */
export interface SamplingReplyReview {
  serverName: string;
  accountName: string;
  modelLabel: string;
  text: string;
  /** Tool requests the reply makes of the server's own tools ("search with {…}"). */
  toolUses: string[];
}

/**
 * Asks the person (main: native dialogs). Every method fails closed: a dismissed or unshowable
 * dialog is 'deny' / false.
 */
export interface SamplingAsker {
  ask(question: SamplingQuestion, signal: AbortSignal): Promise<SamplingChoice>;
  confirmLoosening(change: SamplingLoosening): Promise<boolean>;
  /** True only when the person chose to send the reply to the server. */
  reviewReply(review: SamplingReplyReview, signal: AbortSignal): Promise<boolean>;
}

/** For hosts with no way to ask: every request is denied and nothing is loosened. */
export const denyingSamplingAsker: SamplingAsker = {
  ask: async () => 'deny',
  confirmLoosening: async () => false,
  reviewReply: async () => false,
};

export interface SamplingServiceOptions {
  /** Where settings are kept (one `<serverId>.json` per server); null: memory only. */
  dir: string | null;
  asker: SamplingAsker;
  providers: ModelProviders;
  /** The model a completion would come from (the person's), or null when none can be used. */
  modelChoice: () => Promise<SamplingModelChoice | null>;
  names: { server: (serverId: string) => string | undefined; account: (serverId: string, accountId: string) => string | undefined };
  journal: Journal;
  clock: Clock;
  limits?: Partial<SamplingLimits>;
  /** Replaces Warden's secrets in journaled text (the ledger's redactor). */
  redact?: (text: string) => string;
  /** The same redactor over every settings file written. */
  scrub?: Scrub;
}

const OFF: SamplingSettingView = { mode: 'off', reviewReplies: false };
const RANK: Record<SamplingMode, number> = { off: 0, ask: 1, always: 2 };
/** Bytes of the request and reply kept in the journal. */
const EXCERPT_BYTES = 512;
const MINUTE = 60_000;
const HOUR = 3_600_000;

/** A refusal sent back to the server: -1 is the spec's "user rejected sampling request". */
const REJECTED = -1;

/** Whether `to` lets a server do more than `from`. */
export function isLooser(from: SamplingSettingView, to: SamplingSettingView): boolean {
  return RANK[to.mode] > RANK[from.mode] || (from.reviewReplies && !to.reviewReplies && to.mode !== 'off');
}

export class SamplingService {
  /** serverId → accountId → setting (only settings other than off are kept). */
  private readonly settings = new Map<string, Map<string, SamplingSettingView>>();
  private readonly files: JsonFileFolder;
  readonly loaded: Promise<void>;
  readonly limits: SamplingLimits;
  /** `${serverId}\n${accountId}` → arrival times of requests in the last minute. */
  private readonly arrivals = new Map<string, number[]>();
  /** `${serverId}\n${accountId}` → tokens used (or reserved) in the last hour. */
  private readonly spent = new Map<string, Array<{ at: number; tokens: number }>>();

  constructor(private readonly options: SamplingServiceOptions) {
    this.limits = { ...DEFAULT_SAMPLING_LIMITS, ...options.limits };
    this.files = new JsonFileFolder(options.dir, (serverId) => {
      const accounts = this.settings.get(serverId);
      return accounts && accounts.size ? { accounts: Object.fromEntries(accounts) } : undefined;
    }, options.scrub ?? keepAsIs);
    const problems: string[] = [];
    this.loaded = this.files
      .readAll(/^([a-z0-9-]+)\.json$/, (serverId, value) => this.accept(serverId, value), problems)
      .then(() => {
        for (const p of problems) console.error(`sampling: ignored ${p}`);
      })
      .catch((error: unknown) => console.error('sampling: could not read the kept settings', error));
  }

  /** The setting of (server, account): off unless the person chose otherwise. */
  setting(serverId: string, accountId: string): SamplingSettingView {
    return { ...(this.settings.get(serverId)?.get(accountId) ?? OFF) };
  }

  /**
   * Changes the setting. A looser one is applied only after the person confirms it natively;
   * returns whether it was applied.
   */
  async set(serverId: string, accountId: string, to: SamplingSettingView, source: 'settings' | 'dialog' = 'settings'): Promise<boolean> {
    await this.loaded;
    const from = this.setting(serverId, accountId);
    if (from.mode === to.mode && from.reviewReplies === to.reviewReplies) return true;
    if (isLooser(from, to)) {
      const confirmed = await this.options.asker.confirmLoosening({ ...this.labels(serverId, accountId), from, to }).catch(() => false);
      if (!confirmed) return false;
    }
    this.put(serverId, accountId, to, source);
    return true;
  }

  /** Forgets a deleted server's settings. */
  async forgetServer(serverId: string): Promise<void> {
    this.settings.delete(serverId);
    await this.files.remove(serverId);
  }

  /** Forgets the settings of a server's accounts that no longer exist. */
  async forgetMissingAccounts(serverId: string, live: (accountId: string) => boolean): Promise<void> {
    await this.loaded;
    for (const accountId of [...(this.settings.get(serverId)?.keys() ?? [])]) if (!live(accountId)) this.put(serverId, accountId, OFF, 'removed');
  }

  async flush(): Promise<void> {
    await this.files.flush();
  }

  /** The model that would answer, in words, or null. */
  async modelLabel(): Promise<string | null> {
    const choice = await this.options.modelChoice().catch(() => null);
    return choice ? `${choice.model} from ${choice.providerLabel}` : null;
  }

  /**
   * Answers one sampling request of (server, account), or throws an McpError whose message says
   * in words why not. Journaled either way.
   */
  async answer(serverId: string, accountId: string, params: SamplingParams, signal: AbortSignal): Promise<CreateMessageResult | CreateMessageResultWithTools> {
    await this.loaded;
    const setting = this.setting(serverId, accountId);
    const names = this.labels(serverId, accountId);
    const requestedMaxTokens = Math.max(0, Math.floor(params.maxTokens));
    const base = {
      serverId,
      accountId,
      requestedMaxTokens,
      requestBytes: Buffer.byteLength(JSON.stringify(params)),
      toolsOffered: params.tools?.length ?? 0,
      requestExcerpt: this.excerpt(excerptOfRequest(params)),
    };
    const refuse = async (outcome: 'refused' | 'denied', decidedBy: ServerSampling['decidedBy'], reason: string, extra: Partial<ServerSampling> = {}): Promise<never> => {
      await this.journal({ ...base, outcome, decidedBy, reason, ...extra });
      throw new McpError(decidedBy === 'invalid' ? ErrorCode.InvalidParams : REJECTED, `Warden refused this sampling request: ${reason}`);
    };

    if (setting.mode === 'off') return refuse('refused', 'off', `sampling is off for ${names.serverName} (${names.accountName}); the person can turn it on in Warden's Servers view`);
    const key = `${serverId}\n${accountId}`;
    const now = this.options.clock.now();
    const recent = (this.arrivals.get(key) ?? []).filter((t) => t > now - MINUTE);
    if (recent.length >= this.limits.requestsPerMinute) {
      this.arrivals.set(key, recent);
      return refuse('refused', 'limit', `${names.serverName} already asked ${recent.length} times in the last minute (the limit is ${this.limits.requestsPerMinute} a minute); try again later`);
    }
    recent.push(now);
    this.arrivals.set(key, recent);

    let translated: ReturnType<typeof translateRequest>;
    try {
      translated = translateRequest(params);
    } catch (error) {
      if (error instanceof SamplingRefusal) return refuse('refused', 'invalid', error.message);
      throw error;
    }
    if (translated.characters > this.limits.maxRequestCharacters) {
      return refuse('refused', 'limit', `the request is ${translated.characters} characters long, more than the ${this.limits.maxRequestCharacters} one request may send to the model`);
    }
    const maxTokens = Math.min(requestedMaxTokens, this.limits.maxTokensPerRequest);
    if (maxTokens < 1) return refuse('refused', 'invalid', 'the request asks for no tokens at all (maxTokens must be at least 1)');
    // Reserve what the request may use (its text at about 4 characters a token, and its reply) so
    // requests in flight together cannot go over the hour's budget between them.
    const reserve = Math.ceil(translated.characters / 4) + maxTokens;
    const overBudget = () => {
      const used = this.spentInLastHour(key);
      return used + reserve > this.limits.tokensPerHour
        ? `this request could use up to ${reserve} tokens and ${names.serverName} has used ${used} of its ${this.limits.tokensPerHour} tokens in the last hour; try again later`
        : null;
    };
    // Checked before anyone is asked (no dialog for a request that cannot run) …
    const overBefore = overBudget();
    if (overBefore) return refuse('refused', 'limit', overBefore, { maxTokens });

    const choice = await this.options.modelChoice().catch(() => null);
    if (!choice) return refuse('refused', 'invalid', 'no model is set up in Warden to answer it', { maxTokens });
    const modelLabel = `${choice.model} from ${choice.providerLabel}`;
    const model = { providerId: choice.providerId, model: choice.model, maxTokens };

    let decidedBy: ServerSampling['decidedBy'] = 'always';
    if (setting.mode === 'ask') {
      decidedBy = 'person';
      const question: SamplingQuestion = {
        ...names,
        modelLabel,
        maxTokens,
        requestedMaxTokens,
        systemPrompt: translated.system,
        transcript: translated.transcript,
        tools: translated.tools.map((t) => t.name),
        warnings: instructionFlags(`${translated.system}\n${translated.transcript}`),
      };
      const choiceMade = await this.options.asker.ask(question, signal).catch(() => 'deny' as const);
      if (signal.aborted) return refuse('denied', 'person', 'the server withdrew the request before it was answered', model);
      if (choiceMade === 'always') {
        const applied = await this.set(serverId, accountId, { ...setting, mode: 'always' }, 'dialog');
        if (!applied) return refuse('denied', 'person', 'the person did not confirm allowing it always', model);
      } else if (choiceMade !== 'once') {
        return refuse('denied', 'person', 'the person denied it', model);
      }
    }

    // … and again when the tokens are reserved: others may have spent some while the person decided.
    const overAfter = overBudget();
    if (overAfter) return refuse('refused', 'limit', overAfter, model);
    const entry = { at: this.options.clock.now(), tokens: reserve };
    this.spent.get(key)!.push(entry);
    let reply: ModelReply;
    let usage: ModelUsage | null = null;
    try {
      const provider = await this.options.providers.get(choice.providerId);
      reply = { text: '', toolCalls: [], stopReason: 'end_turn' };
      for await (const event of provider.stream({ model: choice.model, system: translated.system, messages: translated.messages, tools: translated.tools, maxTokens, signal })) {
        if (event.type === 'text-delta') reply.text += event.text;
        else if (event.type === 'tool-call') reply.toolCalls.push(event.call);
        else if (event.type === 'finish') {
          reply.stopReason = event.stopReason;
          usage = event.usage;
        }
      }
    } catch (error) {
      const reason = error instanceof ModelError || error instanceof WardenError ? error.message : 'the model could not be reached';
      await this.journal({ ...base, outcome: 'failed', decidedBy, reason: `the model did not answer: ${reason}`, ...model });
      throw new McpError(ErrorCode.InternalError, `Warden could not get a completion: ${reason}`);
    }
    // What was actually used replaces the reservation (an estimate where the provider gave none).
    entry.tokens = (usage?.inputTokens ?? Math.ceil(translated.characters / 4)) + (usage?.outputTokens ?? maxTokens);
    const tokens = { inputTokens: usage?.inputTokens ?? null, outputTokens: usage?.outputTokens ?? null };

    let result: CreateMessageResult | CreateMessageResultWithTools;
    try {
      result = replyToResult(reply, choice.model, params);
    } catch (error) {
      if (error instanceof SamplingRefusal) return refuse('refused', 'invalid', error.message, { ...model, ...tokens });
      throw error;
    }
    const toolUses = reply.toolCalls.map((c) => `${displayText(c.name, 128)} with ${displayText(c.argumentsJson, 2048)}`);
    if (setting.reviewReplies) {
      const send = await this.options.asker.reviewReply({ ...names, modelLabel, text: displayText(reply.text, 64 * 1024), toolUses }, signal).catch(() => false);
      if (!send) return refuse('denied', 'person', 'the person did not send the reply', { ...model, ...tokens });
    }
    await this.journal({
      ...base,
      outcome: 'answered',
      decidedBy,
      reason: null,
      ...model,
      ...tokens,
      responseBytes: Buffer.byteLength(JSON.stringify(result)),
      toolUses: reply.toolCalls.length,
      responseExcerpt: this.excerpt(`${reply.text}${toolUses.map((u) => `\n[tool request to the server: ${u}]`).join('')}`),
    });
    return result;
  }

  /** The contract handlers (`sampling:get`, `sampling:set`). */
  handlers(accountExists: (serverId: string, accountId: string) => boolean): Pick<Handlers, 'sampling:get' | 'sampling:set'> {
    const check = (serverId: string, accountId: string) => {
      if (!accountExists(serverId, accountId)) throw new WardenError('NOT_FOUND', 'no such server or account');
    };
    const state = async (serverId: string, accountId: string) => ({
      setting: this.setting(serverId, accountId),
      limits: { requestsPerMinute: this.limits.requestsPerMinute, maxTokensPerRequest: this.limits.maxTokensPerRequest, tokensPerHour: this.limits.tokensPerHour },
      model: await this.modelLabel(),
    });
    return {
      'sampling:get': async ({ serverId, accountId }) => {
        check(serverId, accountId);
        await this.loaded;
        return state(serverId, accountId);
      },
      'sampling:set': async ({ serverId, accountId, mode, reviewReplies }) => {
        check(serverId, accountId);
        const applied = await this.set(serverId, accountId, { mode, reviewReplies });
        return { ...(await state(serverId, accountId)), applied };
      },
    };
  }

  /** Tokens (server, account) used or reserved in the last hour; forgets older spending. */
  private spentInLastHour(key: string): number {
    const since = this.options.clock.now() - HOUR;
    const recent = (this.spent.get(key) ?? []).filter((s) => s.at > since);
    this.spent.set(key, recent);
    return recent.reduce((n, s) => n + s.tokens, 0);
  }

  private labels(serverId: string, accountId: string): { serverName: string; accountName: string } {
    return { serverName: this.options.names.server(serverId) ?? 'a removed server', accountName: this.options.names.account(serverId, accountId) ?? 'a removed account' };
  }

  private excerpt(text: string): string {
    const cut = displayText(text, EXCERPT_BYTES);
    return this.options.redact ? this.options.redact(cut) : cut;
  }

  private async journal(p: Omit<ServerSampling, 'at' | 'providerId' | 'model' | 'maxTokens' | 'responseBytes' | 'inputTokens' | 'outputTokens' | 'toolUses' | 'responseExcerpt'> & Partial<ServerSampling>): Promise<void> {
    await this.options.journal
      .append([
        journalEntry('server.sampling', {
          providerId: null,
          model: null,
          maxTokens: null,
          responseBytes: null,
          inputTokens: null,
          outputTokens: null,
          toolUses: 0,
          responseExcerpt: null,
          ...p,
          reason: p.reason === null ? null : displayText(p.reason, 1024),
          at: this.options.clock.now(),
        }),
      ])
      .catch((error: unknown) => console.error('sampling: could not journal a request', error));
  }

  private put(serverId: string, accountId: string, to: SamplingSettingView, source: 'settings' | 'dialog' | 'removed'): void {
    const from = this.setting(serverId, accountId);
    let accounts = this.settings.get(serverId);
    if (!accounts) this.settings.set(serverId, (accounts = new Map()));
    if (to.mode === 'off' && !to.reviewReplies) accounts.delete(accountId);
    else accounts.set(accountId, { mode: to.mode, reviewReplies: to.reviewReplies });
    if (accounts.size === 0) this.settings.delete(serverId);
    void this.files.save(serverId).catch((error: unknown) => console.error(`sampling: could not save the setting of ${serverId}`, error));
    void this.options.journal
      .append([journalEntry('sampling.setting-changed', { serverId, accountId, from, to: { mode: to.mode, reviewReplies: to.reviewReplies }, source, at: this.options.clock.now() })])
      .catch((error: unknown) => console.error('sampling: could not journal a setting change', error));
  }

  private accept(serverId: string, value: unknown): void {
    const accounts = (value as { accounts?: unknown })?.accounts;
    if (!accounts || typeof accounts !== 'object') throw new Error('no "accounts" object');
    const map = new Map<string, SamplingSettingView>();
    for (const [accountId, s] of Object.entries(accounts as Record<string, unknown>)) {
      const mode = (s as { mode?: unknown })?.mode;
      if (mode !== 'off' && mode !== 'ask' && mode !== 'always') throw new Error(`account ${accountId}: no valid mode`);
      map.set(accountId, { mode, reviewReplies: (s as { reviewReplies?: unknown }).reviewReplies === true });
    }
    if (map.size) this.settings.set(serverId, map);
  }
}

/** The request's text in one line for the journal excerpt. */
function excerptOfRequest(params: SamplingParams): string {
  const texts: string[] = [];
  if (params.systemPrompt) texts.push(`[system] ${params.systemPrompt}`);
  for (const m of params.messages) {
    for (const b of Array.isArray(m.content) ? m.content : [m.content]) {
      if (b.type === 'text') texts.push(`[${m.role}] ${b.text}`);
      if (texts.join(' ').length > EXCERPT_BYTES * 2) break;
    }
  }
  return texts.join(' ');
}
