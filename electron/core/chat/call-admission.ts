/**
 * How one tool call of a model's reply is admitted to the gate: the id it is answered under, its
 * arguments parsed, the reason it is refused before anything is decided (a name Warden did not
 * offer, too many calls in one reply, a tool called too often), the identity it names, and the card
 * the chat shows for it. The chat loop (chat-service.ts) submits what this returns, every call of a
 * reply in one synchronous pass; a refused call is still submitted, so the refusal is recorded like
 * every decision and nothing is sent.
 */
import { randomUUID } from 'node:crypto';
import type { ChatToolCall } from '../../../shared/contract/chat';
import type { ModelToolCall } from '../models/provider';
import { whereWords } from '../preview/trusted-preview';
import { MODEL_TEXT } from './call-results';
import { oneLine } from './model-messages';
import type { ToolEntry } from './tool-names';

/**
 * The most calls of one reply the chat keeps when a reply is over the cap. Each kept call is
 * refused on record in the gate and answered; the rest are dropped unsent, as a stopped reply's
 * calls are, so a model that sends tens of thousands of calls cannot stall the main thread or fill
 * the ledger (every call in the gate is a synchronous decision and two journal records).
 */
export const MAX_CALLS_KEPT = 100;

/** The call ids both providers accept back in a tool result. */
const PROVIDER_CALL_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** The identity used for a name the model made up: no server can have it (ids are [a-z0-9-]). */
export const NOT_OFFERED_SERVER = '~model';

/** One key per tool of one account: the offered set and the rate limiter are keyed by it. */
export const toolKey = (serverId: string, accountId: string, toolName: string) => `${serverId}\u0000${accountId}\u0000${toolName}`;

/** Calls to one tool (server, account, tool) in any 60 seconds, across conversations. */
export class CallRateLimiter {
  private readonly recent = new Map<string, number[]>();

  /** True if a call now would be over `perMinute`; otherwise counts it. */
  limited(entry: ToolEntry, now: number, perMinute: number): boolean {
    const k = toolKey(entry.tool.serverId, entry.tool.accountId, entry.tool.name);
    const times = (this.recent.get(k) ?? []).filter((t) => now - t < 60_000);
    if (times.length >= perMinute) {
      this.recent.set(k, times);
      return true;
    }
    times.push(now);
    this.recent.set(k, times);
    return false;
  }
}

/** What every call of one reply is admitted against. */
export interface ReplyContext {
  /** The table the model was offered in this round: names resolve against exactly what it saw. */
  table: ReadonlyMap<string, ToolEntry>;
  /** The tools offered in this conversation (by `toolKey`). */
  offered: ReadonlySet<string>;
  /** Call ids already used in this conversation; each admitted call adds its own. */
  usedIds: Set<string>;
  /** How many calls the reply holds. */
  callCount: number;
  limits: { maxCallsPerReply: number; perToolPerMinute: number };
  rate: CallRateLimiter;
  now: number;
  redact: (text: string) => string;
}

/** One call, ready to submit. */
export interface AdmittedCall {
  /** The call under the id it is answered with. */
  call: ModelToolCall;
  /** Its card in the chat. */
  record: ChatToolCall;
  identity: { serverId: string; accountId: string; toolName: string };
  args: unknown;
  parseError: string | null;
  /** Why it is refused before the gate decides anything, if it is. */
  refused: string | undefined;
  /** Dropped by a cap: answered as not sent. */
  skipped: boolean;
  /** The reason the loop stops after this reply, when this call reached the per-tool rate cap. */
  rateCapReason: string | null;
}

/** Admits one call of a reply (see the file comment); counts it against the rate cap when it is offered and well formed. */
export function admitCall(raw: ModelToolCall, reply: ReplyContext): AdmittedCall {
  const { limits, now } = reply;
  const over = reply.callCount > limits.maxCallsPerReply;
  const id = PROVIDER_CALL_ID.test(raw.id) && !reply.usedIds.has(raw.id) ? raw.id : `call_${randomUUID().replace(/-/g, '')}`;
  reply.usedIds.add(id);
  const call: ModelToolCall = { ...raw, id };
  const entry: ToolEntry | undefined = reply.table.get(call.name);
  const isOffered = entry !== undefined && reply.offered.has(toolKey(entry.tool.serverId, entry.tool.accountId, entry.tool.name));
  let args: unknown = undefined;
  let parseError: string | null = null;
  try {
    args = call.argumentsJson.trim() === '' ? {} : JSON.parse(call.argumentsJson);
  } catch (error) {
    parseError = `the arguments are not valid JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  let refused: string | undefined;
  let skipped = false;
  let rateCapReason: string | null = null;
  if (over) {
    refused = `too many tool calls in one reply (${reply.callCount}; the limit is ${limits.maxCallsPerReply})`;
    skipped = true;
  } else if (!isOffered) {
    // The tool and its server are named wherever this reason is read (the card's head, the
    // Activity row, the rule's own reason), so it says only what the chat did.
    refused = entry ? 'Not offered to the model in this conversation' : `Not offered to the model: ${JSON.stringify(call.name.slice(0, 100))} is not a name Warden gave it`;
  } else if (parseError) {
    refused = undefined;
  } else if (reply.rate.limited(entry!, now, limits.perToolPerMinute)) {
    refused = `more than ${limits.perToolPerMinute} calls to ${entry!.tool.name} in one minute`;
    skipped = true;
    rateCapReason = `the model called ${entry!.tool.name} more than ${limits.perToolPerMinute} times in one minute`;
  }
  const tool = entry?.tool;
  const identity = isOffered && tool ? { serverId: tool.serverId, accountId: tool.accountId, toolName: tool.name } : { serverId: tool?.serverId ?? NOT_OFFERED_SERVER, accountId: tool?.accountId ?? NOT_OFFERED_SERVER, toolName: tool?.name ?? (call.name.slice(0, 200) || '(no name)') };
  const record: ChatToolCall = {
    callId: call.id,
    modelName: call.name.slice(0, 200),
    operationId: null,
    serverId: tool?.serverId ?? null,
    accountId: tool?.accountId ?? null,
    toolName: tool?.name ?? null,
    serverLabel: tool?.serverLabel ?? null,
    accountLabel: tool?.accountLabel ?? null,
    preview: tool ? whereWords({ toolName: tool.name, serverLabel: tool.serverLabel ?? tool.serverId, accountLabel: tool.accountLabel ?? tool.accountId }) : `${oneLine(call.name, 100)} (not a tool Warden offered)`,
    // The gate gets the arguments as written; the chat's copy (replayed to the model, shown,
    // saved) has Warden's secrets replaced, like the result.
    argumentsJson: reply.redact(call.argumentsJson).slice(0, 20_000),
    status: 'deciding',
    decision: null,
    why: 'Entering the gate',
    reason: '',
    startedAt: now,
    endedAt: null,
    resultText: '',
    flagged: false,
    flags: [],
    truncated: false,
    modelResult: MODEL_TEXT.cancelled,
    isError: true,
    askAgain: false,
    readsOnly: false,
  };
  return { call, record, identity, args, parseError, refused, skipped, rateCapReason };
}
