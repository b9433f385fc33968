/**
 * The chat loop: turns a person's message into model rounds, and every tool call a model makes
 * into a gate operation.
 *
 * One round: offer the tools whose effective decision here is not deny (named through the lookup
 * table), stream the model's reply, then take ALL its tool calls through the gate in one
 * synchronous step, so every call is validated and decided before any of them runs. Calls that
 * need approval wait (the chat shows them; the person reviews them in main's native dialog);
 * allowed ones run in parallel. Each call gets exactly one result, from the gate's recorded state.
 * The model never decides a permission, never writes approval text, and nothing it says reaches
 * the policy store: it can only propose calls, and the gate decides each one.
 *
 * Why this file is longer than 450 lines: it is one state machine (turns, tracked calls and their
 * cards, recovery) whose invariants span its methods; the parts that need none of its state live
 * beside it (call-admission.ts: how one call of a reply is admitted; model-messages.ts,
 * attachments.ts, call-results.ts, tool-names.ts).
 */
import { randomUUID } from 'node:crypto';
import type { ChatMessage, ChatToolCall, Conversation, ConversationState } from '../../../shared/contract/chat';
import { TERMINAL_STATES } from '../../../shared/domain/operations';
import { WardenError } from '../../../shared/result';
import type { CoreEvents } from '../events';
import type { GateModule } from '../gate/gate-module';
import type { OperationSnapshot } from '../gate/gate';
import type { ToolRegistry } from '../gate/ports';
import type { Clock } from '../ports';
import { ModelError, type ModelProviders, type ModelToolCall, type ModelToolSpec } from '../models/provider';
import { isFinalStatus, MODEL_TEXT, outcomeOf } from './call-results';
import { chatAttachmentOf, type AttachmentSource } from './attachments';
import { describeModelError, modelProblemOf, oneLine, toModelMessages } from './model-messages';
import { ConversationStore, summaryOf } from './conversation-store';
import { whereWords } from '../preview/trusted-preview';
import { buildToolTable, type ToolEntry } from './tool-names';
import { admitCall, CallRateLimiter, MAX_CALLS_KEPT, toolKey } from './call-admission';
import { DEFAULT_MODEL_RESULT_CHARS, modelToolSpec, systemPromptWith } from './untrusted';
import type { Redactor } from '../redact/redactor';
import { callReason } from '../../../shared/call-words';

/** Caps on what one message can make the loop do; hitting one stops the loop with a visible reason. */
export interface ChatLimits {
  maxCallsPerReply: number;
  maxRoundsPerMessage: number;
  /** Calls to one tool (server, account, tool) in any 60 seconds. */
  perToolPerMinute: number;
  /** Characters of one tool result given to the model. */
  resultChars: number;
  maxTokens: number;
}

/**
 * How long a round's calls may run before their cards are written on their own (then shown as
 * running). Calls that finish sooner share the round's one write.
 */
export const CARDS_WRITTEN_WITHIN_MS = 20;

/**
 * The group-commit window of a round's write: rounds that follow each other faster than this
 * (a fast model, quick tools) share one write, and the write stays out of the way of the next
 * round's own durable step (the ledger's sync before a call is sent). A person cannot tell a
 * result shown this much later; a real model's reply takes far longer, so each round still gets
 * its write.
 */
export const ROUND_WRITE_WITHIN_MS = 25;

export const DEFAULT_CHAT_LIMITS: ChatLimits = { maxCallsPerReply: 10, maxRoundsPerMessage: 8, perToolPerMinute: 20, resultChars: DEFAULT_MODEL_RESULT_CHARS, maxTokens: 4096 };

export interface ChatServiceDeps {
  store: ConversationStore;
  providers: ModelProviders;
  gate: GateModule;
  registry: Pick<ToolRegistry, 'listTools'>;
  events: CoreEvents;
  clock: Clock;
  /** Connected servers' `instructions` (untrusted; wrapped before the model sees them). */
  instructions?: (conversationId: string) => Array<{ server: string; text: string }>;
  limits?: Partial<ChatLimits>;
  /** The provider new conversations use when none is named and none was used before. */
  defaultProviderId?: string;
  /**
   * Replaces every secret Warden holds (keychain values, OAuth tokens, API keys) in a text: the
   * app's one redactor, the ledger's. Absent (a core without a ledger has no redactor): kept as is.
   */
  redactor?: Pick<Redactor, 'scrubString' | 'scrubIfPresent'>;
  /**
   * A resource or prompt the person read in this window, by the id it was staged under
   * (mcp/server-data.ts); throws in words when it cannot be attached. Absent: nothing can be attached.
   */
  attachment?: (id: string) => AttachmentSource;
}

interface Turn {
  abort: AbortController;
  ops: Set<string>;
  stopped: boolean;
  /** Ended because Warden quit, not by the person's Stop: said so, never as "Stopped by you". */
  quitting: boolean;
  done: Promise<void>;
}

/** Why a call still running when Warden quits was stopped: what the ledger and its card say. */
export const QUIT_REASON = 'Warden quit while this call was running';

/**
 * How long quitting waits for the running calls it stopped to end (an aborted call ends at once
 * unless its connection is stuck), so the conversation is written with how they ended.
 */
const QUIT_WAIT_MS = 2000;

interface Tracked {
  conversation: Conversation;
  message: ChatMessage;
  call: ChatToolCall;
  skipped: boolean;
}

/** Conversations and their model loops. */
export class ChatService {
  readonly limits: ChatLimits;
  private readonly turns = new Map<string, Turn>();
  private readonly tracked = new Map<string, Tracked>();
  private readonly rate = new CallRateLimiter();
  private readonly pendingEmits = new Map<ChatMessage, string>();
  /**
   * The window is shown a reply's end and a call's card only as they are on disk
   * (docs/decisions/0012): each change to them is stamped with a change number, and each
   * conversation remembers the last change number a finished save covered. Until a save covers
   * a change, the window keeps seeing the reply as streaming and the card as it was last written
   * (or no card, if it was never written).
   */
  private changeSeq = 0;
  private readonly changedAt = new WeakMap<object, number>();
  private readonly durableUpTo = new Map<string, number>();
  /** Messages holding a change that is not on disk yet, per conversation: shown again once it is. */
  private readonly notYetDurable = new Map<string, Set<ChatMessage>>();
  /** Each card as the last finished save wrote it. */
  private readonly writtenCard = new WeakMap<ChatToolCall, ChatToolCall>();
  /**
   * The save a held message was last shown at: while it waits for the disk, what the window may
   * see of it changes only when a save finishes, so the gate's transitions in between are not
   * sent again (each event is checked against the contract and serialized for the window).
   */
  private readonly heldShownAt = new WeakMap<ChatMessage, number>();
  private readonly unsubscribe: () => void;
  /**
   * What the chat keeps of any text that came from a server or a model. Why: the chat's records
   * go to the model provider (a third party, and a model that obeys injected text can pass what
   * it read to another server's tool), to the renderer (which holds no secrets) and into the
   * conversation file (secrets live only in the keychain). A server that echoes the token it was
   * sent, or a secret it read, must reach none of them; the ledger scrubs the same values.
   */
  private readonly redact: (text: string) => string;
  /**
   * The same over a whole value: a tool's result is scrubbed as it arrived, item by item, so a
   * secret a server cut across two content items is found before the items are joined.
   */
  private readonly scrub: <T>(value: T) => T;

  constructor(private readonly deps: ChatServiceDeps) {
    this.limits = { ...DEFAULT_CHAT_LIMITS, ...deps.limits };
    this.redact = deps.redactor ? (text) => deps.redactor!.scrubString(text) : (text) => text;
    this.scrub = deps.redactor ? (value) => deps.redactor!.scrubIfPresent(value) : (value) => value;
    // Every transition of a chat call (approved in the dialog, running, done) updates its card.
    this.unsubscribe = deps.gate.gate.onChange((op) => {
      const t = this.tracked.get(op.operationId);
      if (!t) return;
      this.apply(t, op);
      this.emitMessage(t.conversation, t.message);
      this.refreshState(t.conversation);
      // A call the person approved starts long after its round's first write: its card is
      // written again now, so the window shows it running rather than still waiting for them.
      if (op.state === 'executing' && op.approvedByUser) this.saveRound(t.conversation);
    });
  }

  // ---- conversations -----------------------------------------------------------------------

  list(search?: string) {
    return this.deps.store.list(search);
  }

  get(conversationId: string): Conversation {
    const c = this.deps.store.get(conversationId);
    if (!c) throw new WardenError('NOT_FOUND', `conversationId: no conversation ${JSON.stringify(conversationId)}`);
    return c;
  }

  async create(input: { providerId?: string; model?: string | null }): Promise<Conversation> {
    const providerId = input.providerId ?? this.deps.store.list()[0]?.providerId ?? this.deps.defaultProviderId ?? 'demo';
    const choice = (await this.deps.providers.list()).find((p) => p.providerId === providerId);
    if (!choice) throw new WardenError('NOT_FOUND', `providerId: no model provider "${providerId}" is configured`);
    const now = this.deps.clock.now();
    const conversation: Conversation = {
      id: this.deps.store.newId(),
      title: 'New conversation',
      providerId,
      model: input.model ?? choice.defaultModel,
      createdAt: now,
      updatedAt: now,
      state: 'idle',
      messages: [],
    };
    await this.deps.store.put(conversation);
    this.emitChanged(conversation);
    return conversation;
  }

  async rename(conversationId: string, title: string) {
    const c = this.get(conversationId);
    c.title = oneLine(title, 200);
    c.updatedAt = this.deps.clock.now();
    await this.deps.store.save(c.id);
    this.emitChanged(c);
    return summaryOf(c);
  }

  async setModel(conversationId: string, providerId: string, model: string | null) {
    const c = this.get(conversationId);
    await this.deps.providers.get(providerId);
    c.providerId = providerId;
    c.model = model;
    c.updatedAt = this.deps.clock.now();
    await this.deps.store.save(c.id);
    this.emitChanged(c);
    return summaryOf(c);
  }

  /** Deletes a conversation after stopping it; the permission overrides made for it end with it. */
  async delete(conversationId: string): Promise<boolean> {
    if (!this.deps.store.get(conversationId)) return false;
    await this.stop(conversationId);
    await this.turns.get(conversationId)?.done;
    const policy = this.deps.gate.policy;
    for (const rule of policy.current().conversation.filter((r) => r.conversationId === conversationId)) await policy.revoke(rule.id, 'user');
    for (const [id, t] of this.tracked) if (t.conversation.id === conversationId) this.tracked.delete(id);
    const deleted = await this.deps.store.delete(conversationId);
    this.durableUpTo.delete(conversationId);
    this.notYetDurable.delete(conversationId);
    this.deps.events.emit('chat:changed', { conversationId, summary: null });
    return deleted;
  }

  /** Conversation files written since start (atomic writes, two fsyncs each): what a test counts per message. */
  conversationWrites(): number {
    return this.deps.store.writes;
  }

  /** Resolves once every conversation change made so far is on disk. */
  flushConversations(): Promise<void> {
    return this.deps.store.flush();
  }

  // ---- a message and its turn --------------------------------------------------------------

  /** Adds the person's message and starts the model's turn (which streams as events). */
  async send(conversationId: string, text: string, attachmentIds: readonly string[] = []): Promise<string> {
    const c = this.get(conversationId);
    if (this.turns.has(c.id)) throw new WardenError('CONFLICT', 'A reply is still in progress in this conversation; stop it or wait for it first');
    if (text.trim() === '' && attachmentIds.length === 0) throw new WardenError('INVALID_REQUEST', 'text: write a message or attach a resource or prompt');
    // Every attachment is found before anything changes: a message is sent whole or not at all.
    const attachments = attachmentIds.map((id, i) => {
      if (!this.deps.attachment) throw new WardenError('UNSUPPORTED', 'attachmentIds: this chat cannot attach resources or prompts');
      try {
        return chatAttachmentOf(this.deps.attachment(id), this.limits.resultChars);
      } catch (error) {
        if (error instanceof WardenError) throw new WardenError(error.code, `attachmentIds[${i}]: ${error.message}`);
        throw error;
      }
    });
    const message = { ...this.newMessage('user', text), attachments: attachments.map((a) => ({ ...a, text: this.redact(a.text), modelText: this.redact(a.modelText) })) };
    c.messages.push(message);
    if (c.title === 'New conversation') c.title = oneLine(text, 60) || oneLine(attachments[0]?.title ?? '', 60) || 'New conversation';
    c.updatedAt = message.createdAt;
    const turn: Turn = { abort: new AbortController(), ops: new Set(), stopped: false, quitting: false, done: Promise.resolve() };
    this.turns.set(c.id, turn);
    // The person's message is on disk before the window shows it and before the model is asked:
    // the one save of a message that is awaited (a crash after this loses nothing they wrote).
    try {
      await this.deps.store.save(c.id);
    } catch (error) {
      this.turns.delete(c.id);
      c.messages.splice(c.messages.indexOf(message), 1);
      throw new WardenError('INTERNAL', `Warden could not save your message, so it was not sent: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.emitMessage(c, message);
    turn.done = this.runTurn(c, turn).catch((error: unknown) => {
      this.notice(c, `Something went wrong in Warden: ${error instanceof Error ? error.message : String(error)}`, 'error');
    }).finally(() => {
      this.turns.delete(c.id);
      this.setState(c, 'idle');
      // The turn's last write: the final reply, the last outcomes and the idle state together,
      // at once (the person is reading the answer; no further round will share it).
      this.saveRound(c, 0);
    });
    return message.id;
  }

  /** Stops the reply: the stream ends and queued and running calls are cancelled. */
  async stop(conversationId: string): Promise<boolean> {
    this.get(conversationId);
    const turn = this.turns.get(conversationId);
    if (!turn || turn.stopped) return false;
    turn.stopped = true;
    turn.abort.abort(new ModelError('CANCELLED', 'Stopped by you'));
    await Promise.all(
      [...turn.ops].map(async (id) => {
        const op = this.deps.gate.gate.getLive(id);
        if (op && !TERMINAL_STATES.has(op.state)) await this.deps.gate.gate.cancel(id, 'Stopped by you in the chat').catch(() => undefined);
      }),
    );
    return true;
  }

  /** The calls of one reply that wait for approval, in one native dialog. */
  async review(conversationId: string, messageId: string) {
    const message = this.get(conversationId).messages.find((m) => m.id === messageId);
    if (!message) throw new WardenError('NOT_FOUND', `messageId: no message ${JSON.stringify(messageId)} in this conversation`);
    const ids = message.toolCalls.filter((c) => c.status === 'awaiting_approval' && c.operationId).map((c) => c.operationId!);
    if (ids.length === 0) throw new WardenError('CONFLICT', 'No call of this reply is waiting for approval');
    const { choice } = await this.deps.gate.reviewBatch(ids);
    return { choice, reviewed: ids.length };
  }

  /** Sends again the person's message that led to `messageId` (a new turn; every call decided anew). */
  async askAgain(conversationId: string, messageId: string): Promise<string> {
    const c = this.get(conversationId);
    const at = c.messages.findIndex((m) => m.id === messageId);
    if (at < 0) throw new WardenError('NOT_FOUND', `messageId: no message ${JSON.stringify(messageId)} in this conversation`);
    const user = c.messages.slice(0, at + 1).reverse().find((m) => m.role === 'user');
    if (!user) throw new WardenError('NOT_FOUND', 'There is no message of yours before this one to send again');
    return this.send(conversationId, user.text);
  }

  /** The tools of a conversation as its model sees them (and those it does not). */
  tools(conversationId: string) {
    this.get(conversationId);
    const rows = new Map(this.deps.gate.matrix(conversationId).rows.map((r) => [toolKey(r.serverId, r.accountId, r.toolName), r]));
    const offered = this.offeredKeys(conversationId);
    return buildToolTable(this.deps.registry.listTools()).entries.map((e) => {
      const row = rows.get(toolKey(e.tool.serverId, e.tool.accountId, e.tool.name));
      return {
        modelName: e.modelName,
        serverId: e.tool.serverId,
        accountId: e.tool.accountId,
        toolName: e.tool.name,
        serverLabel: e.tool.serverLabel ?? e.tool.serverId,
        accountLabel: e.tool.accountLabel ?? e.tool.accountId,
        effective: row?.effective ?? 'deny',
        offered: offered.has(toolKey(e.tool.serverId, e.tool.accountId, e.tool.name)),
        reason: row?.explanation ?? 'Not listed',
        layer: row?.layer ?? 'availability',
      };
    });
  }

  /**
   * After a restart: a reply that was in progress is closed, calls that waited for approval are
   * cancelled in the gate and shown as expired (ask again), and calls that were running show the
   * outcome recovery recorded. Call once the gate has restored the ledger's operations, with the
   * ids the ledger's recovery put back in the approval queue.
   */
  async recover(requeued: readonly string[] = []): Promise<void> {
    for (const c of this.deps.store.all()) {
      let touched = false;
      for (const message of c.messages) {
        if (message.streaming) {
          message.streaming = false;
          message.note = null;
          touched = true;
        }
        for (const call of message.toolCalls) {
          if (isFinalStatus(call.status)) continue;
          touched = true;
          const op = call.operationId ? await this.deps.gate.gate.get(call.operationId) : undefined;
          if (op?.state === 'awaiting_approval') await this.deps.gate.gate.cancel(op.operationId, 'The chat turn that asked for this ended when Warden stopped; ask again in the chat').catch(() => undefined);
          const now = op ? await this.deps.gate.gate.get(op.operationId) : undefined;
          // The file can be older than the ledger (a round's write comes after its calls ran):
          // a call the ledger shows was sent gets the outcome recorded there, whatever the card said.
          const sent = now !== undefined && TERMINAL_STATES.has(now.state) && now.history.some((h) => h.to === 'executing');
          if (sent) {
            // Sent before Warden stopped: recovery recorded its outcome (outcome_unknown unless it finished).
            this.apply({ conversation: c, message, call, skipped: false }, now);
          } else if (call.status !== 'running') {
            // Pending when the turn ended and never sent: whatever the gate did with it since, it never ran.
            Object.assign(call, { status: 'expired', why: 'Waiting for approval when Warden stopped: nothing ran. Ask again to decide it anew.', modelResult: MODEL_TEXT.expired, isError: true, askAgain: true });
          } else {
            Object.assign(call, { status: 'outcome_unknown', why: 'Warden stopped while this call was running: the server may or may not have acted', modelResult: MODEL_TEXT.outcomeUnknown, isError: true });
          }
        }
      }
      if (c.state !== 'idle' || touched) {
        c.state = 'idle';
        c.messages.push({ ...this.newMessage('notice', 'Warden stopped during this reply. Calls that were waiting for approval did not run; use "Ask again" to try them.'), tone: 'warning' });
        await this.deps.store.save(c.id);
      }
      // Everything recovery settled is on disk now (or was already): nothing of it is held back.
      this.durableUpTo.set(c.id, this.changeSeq);
      this.notYetDurable.delete(c.id);
    }
    // A model's call put back in the queue belongs to a turn that ended with the restart, whether
    // or not its conversation was saved with it (a crash can come between the gate's record and
    // the conversation's save): nobody could ever hand its result to the model, so it never runs.
    // Only those: a call made since this start belongs to a live turn.
    for (const id of requeued) {
      const op = this.deps.gate.gate.getLive(id);
      if (op?.state !== 'awaiting_approval' || op.origin.source !== 'model') continue;
      await this.deps.gate.gate.cancel(op.operationId, 'The chat turn that asked for this ended when Warden stopped; ask again in the chat').catch(() => undefined);
    }
  }

  /**
   * Ends every reply in progress because Warden is quitting: the stream stops, a call still
   * running is stopped in the gate with QUIT_REASON (the server hears the cancellation while its
   * connection is still open), and the conversation gets a notice saying Warden quit, never the
   * person's "Stopped by you". Resolves once those calls ended (or QUIT_WAIT_MS passed) and the
   * conversations' writes have started; the caller flushes the store. Calls waiting for approval
   * stay pending: the next start shows them as not run, with "Ask again".
   */
  async close(): Promise<void> {
    const gate = this.deps.gate.gate;
    const ending: Array<Promise<void>> = [];
    const quit: Conversation[] = [];
    for (const [conversationId, turn] of this.turns) {
      turn.stopped = true;
      turn.quitting = true;
      turn.abort.abort(new ModelError('CANCELLED', 'Warden is closing'));
      const c = this.deps.store.get(conversationId);
      if (!c) continue;
      quit.push(c);
      let running = 0;
      for (const id of turn.ops) {
        if (gate.getLive(id)?.state !== 'executing') continue;
        running++;
        ending.push(
          gate
            .cancel(id, QUIT_REASON)
            .then(() => gate.settled(id))
            .then((final) => {
              const t = this.tracked.get(id);
              if (t) this.apply(t, final);
            })
            .catch(() => undefined),
        );
      }
      const stopped = running === 0 ? '' : running === 1 ? ' The call that was still running was stopped; its card says what is known.' : ' The calls that were still running were stopped; their cards say what is known.';
      this.notice(c, `Warden quit during this reply, so the reply ended there.${stopped}`, 'warning');
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(ending), new Promise<void>((resolve) => (timer = setTimeout(resolve, QUIT_WAIT_MS)))]);
    clearTimeout(timer);
    this.unsubscribe();
    for (const c of quit) {
      // Nothing of this turn goes on after the quit: the file says so, so the next start does not
      // read it as a reply cut off by a crash.
      c.state = 'idle';
      this.saveRound(c, 0);
    }
  }

  // ---- the loop ----------------------------------------------------------------------------

  private async runTurn(c: Conversation, turn: Turn): Promise<void> {
    this.setState(c, 'responding');
    for (let round = 1; !turn.stopped; round++) {
      if (round > this.limits.maxRoundsPerMessage) {
        this.notice(c, `Stopped: the model used ${this.limits.maxRoundsPerMessage} rounds for this message, the most Warden allows for one message.`, 'warning');
        break;
      }
      const entries = buildToolTable(this.deps.registry.listTools()).entries;
      const offered = this.offeredKeys(c.id);
      const specs: ModelToolSpec[] = entries
        .filter((e) => offered.has(toolKey(e.tool.serverId, e.tool.accountId, e.tool.name)))
        .map((e) => modelToolSpec(e.tool, e.modelName));
      let provider;
      try {
        provider = await this.deps.providers.get(c.providerId);
      } catch (error) {
        this.notice(c, `The model provider "${c.providerId}" is not available: ${error instanceof Error ? error.message : String(error)}. Choose another model above.`, 'error');
        break;
      }
      if (!c.model) {
        this.notice(c, 'No model is chosen for this conversation. Choose one above, then send again.', 'error');
        break;
      }
      const message: ChatMessage = { ...this.newMessage('assistant', ''), round, streaming: true, providerId: c.providerId, model: c.model };
      const history = toModelMessages(c.messages);
      c.messages.push(message);
      this.emitMessage(c, message);
      const calls: ModelToolCall[] = [];
      let stopReason: string | null = null;
      try {
        for await (const event of provider.stream({ model: c.model, system: systemPromptWith(this.instructions(c.id)), messages: history, tools: specs, maxTokens: this.limits.maxTokens, signal: turn.abort.signal })) {
          if (turn.stopped) break;
          if (event.type === 'text-delta') {
            message.text += event.text;
            this.deps.events.emit('chat:delta', { conversationId: c.id, messageId: message.id, text: event.text });
          } else if (event.type === 'tool-call') {
            calls.push(event.call);
          } else if (event.type === 'retry') {
            message.note = `The provider refused for now (${oneLine(event.reason, 200)}); trying again in ${Math.ceil(event.delayMs / 1000)} s (attempt ${event.attempt}).`;
            this.emitMessage(c, message);
          } else {
            message.usage = event.usage;
            stopReason = event.stopReason;
          }
        }
      } catch (error) {
        message.streaming = false;
        message.note = null;
        this.markChanged(c, message, message);
        this.emitMessage(c, message);
        if (!turn.stopped) this.notice(c, describeModelError(error), 'error', modelProblemOf(error));
        break;
      }
      message.streaming = false;
      message.note = null;
      this.markChanged(c, message, message);
      // A stopped reply's tool calls are dropped unsent: none entered the gate.
      if (turn.stopped) {
        this.emitMessage(c, message);
        break;
      }
      if (calls.length === 0) {
        this.emitMessage(c, message);
        if (stopReason === 'max_tokens') this.notice(c, 'The reply was cut off: it reached the most tokens Warden asks for in one reply.', 'warning');
        break;
      }
      const capReason = await this.handleCalls(c, message, calls, round, turn, entries, offered);
      // The round's one write: its reply and every outcome, never awaited before the next model
      // request (the calls themselves are in the ledger, durable before each was sent); the
      // window is shown them as final once it is on disk.
      this.saveRound(c);
      if (capReason) {
        this.notice(c, `Stopped: ${capReason}.`, 'warning');
        break;
      }
    }
    if (turn.stopped && !turn.quitting) this.notice(c, 'Stopped by you. Calls that had not run were cancelled.', 'info');
  }

  /**
   * Every call of one reply enters the gate in ONE synchronous pass (no await inside it), so each
   * is validated and decided before any of them can run. Then waits for each to finish.
   * Returns the reason a cap stopped the loop, if one did.
   */
  private async handleCalls(c: Conversation, message: ChatMessage, calls: ModelToolCall[], round: number, turn: Turn, entries: readonly ToolEntry[], offered: Set<string>): Promise<string | null> {
    const gate = this.deps.gate.gate;
    // The table the model was offered in this round: names resolve against exactly what it saw.
    const table = new Map(entries.map((e) => [e.modelName, e]));
    const batchId = randomUUID();
    const now = this.deps.clock.now();
    const over = calls.length > this.limits.maxCallsPerReply;
    let capReason: string | null = over ? `the model asked for ${calls.length} tool calls in one reply, more than the ${this.limits.maxCallsPerReply} Warden allows` : null;
    const work: Array<{ t: Tracked; submitted: Promise<OperationSnapshot>; parseError: string | null }> = [];
    // Every call is answered under an id that is its own in this conversation and that providers
    // accept back: a repeated id would pair two results with one call (a refusal could read as
    // the other call's result), and an id the provider refuses would break every later request.
    const usedIds = new Set(c.messages.flatMap((m) => m.toolCalls.map((x) => x.callId)));
    const reply = { table, offered, usedIds, callCount: calls.length, limits: this.limits, rate: this.rate, now, redact: this.redact };
    for (const raw of over ? calls.slice(0, Math.max(MAX_CALLS_KEPT, this.limits.maxCallsPerReply)) : calls) {
      const { call, record, identity, args, parseError, refused, skipped, rateCapReason } = admitCall(raw, reply);
      capReason ??= rateCapReason;
      message.toolCalls.push(record);
      this.markChanged(c, message, record);
      const t: Tracked = { conversation: c, message, call: record, skipped };
      // The turn knows the operation before the gate records it: Stop pressed while the records
      // are still being written must reach this call too (cancel it, or abort it before sending).
      // Minted by the gate: a call it made the id for is decided at once, never after a history lookup.
      const operationId = gate.newOperationId();
      turn.ops.add(operationId);
      const submitted = gate.submit({
        source: 'model',
        operationId,
        conversationId: c.id,
        round,
        batchId,
        callId: call.id,
        ...identity,
        arguments: parseError ? call.argumentsJson : args,
        ...(refused !== undefined ? { refusedBecause: refused } : parseError ? { refusedBecause: `Invalid arguments: ${parseError}` } : {}),
      });
      work.push({ t, submitted, parseError: refused === undefined ? parseError : null });
    }
    this.emitMessage(c, message);

    const waits: Array<Promise<void>> = [];
    for (const w of work) {
      let op: OperationSnapshot;
      try {
        op = await w.submitted;
      } catch (error) {
        Object.assign(w.t.call, { status: 'cancelled', why: `Warden could not record this call: ${error instanceof Error ? error.message : String(error)}`, modelResult: MODEL_TEXT.cancelled, endedAt: this.deps.clock.now() });
        this.markChanged(c, message, w.t.call);
        continue;
      }
      w.t.call.operationId = op.operationId;
      if (w.parseError) {
        Object.assign(w.t.call, { status: 'invalid', why: `Invalid arguments: ${w.parseError}`, modelResult: `Error: invalid arguments: ${w.parseError}. Nothing ran.`, decision: null, endedAt: this.deps.clock.now() });
        this.markChanged(c, message, w.t.call);
        continue;
      }
      this.apply(w.t, op);
      if (TERMINAL_STATES.has(op.state)) continue;
      turn.ops.add(op.operationId);
      this.tracked.set(op.operationId, w.t);
      waits.push(
        gate.settled(op.operationId).then(
          (final) => {
            this.apply(w.t, final);
            this.tracked.delete(op.operationId);
            this.emitMessage(c, message);
            this.refreshState(c);
          },
          () => undefined,
        ),
      );
    }
    this.emitMessage(c, message);
    this.refreshState(c);
    // A call waiting for the person can wait for minutes: the reply and its cards are written now,
    // so the person sees them at once. Calls that only run are in the ledger (durable before each
    // was sent), and the round's write carries their outcomes; only calls still running after
    // CARDS_WRITTEN_WITHIN_MS get a write of their own, so the window shows them running.
    let early: ReturnType<typeof setTimeout> | undefined;
    if (message.toolCalls.some((x) => x.status === 'awaiting_approval')) this.saveRound(c, 0);
    else if (waits.length > 0) early = setTimeout(() => this.saveRound(c), CARDS_WRITTEN_WITHIN_MS);
    await Promise.all(waits);
    clearTimeout(early);
    this.setState(c, 'responding');
    return capReason;
  }

  /** Copies an operation's state onto its card. */
  private apply(t: Tracked, op: OperationSnapshot): void {
    const call = t.call;
    const outcome = outcomeOf(this.scrub(op), { cap: this.limits.resultChars, skipped: t.skipped });
    const labels = { toolName: op.identity.toolName, serverLabel: op.labels.server, accountLabel: op.labels.account };
    // The gate's trusted summary (from the tool's identity and the stored arguments), then where it runs.
    if (call.serverId !== null && op.state !== 'denied') call.preview = this.redact(`${op.labels.summary} — ${whereWords(labels)}`);
    call.status = outcome.status;
    call.why = this.redact(outcome.why);
    // The reason, kept apart from the outcome: the card says why it ran and, separately, how it ended.
    call.reason = this.redact(callReason(op));
    call.modelResult = this.redact(outcome.modelResult);
    call.isError = outcome.isError;
    call.resultText = this.redact(outcome.resultText);
    call.flagged = outcome.flagged;
    call.flags = outcome.flags.map(this.redact);
    call.truncated = outcome.truncated;
    call.decision = op.decision?.decision ?? (op.state === 'denied' ? 'deny' : null);
    call.readsOnly = op.readsOnly;
    const ran = op.history.find((h) => h.to === 'executing');
    if (ran) call.startedAt = ran.at;
    if (TERMINAL_STATES.has(op.state)) call.endedAt = op.history[op.history.length - 1]?.at ?? this.deps.clock.now();
    this.markChanged(t.conversation, t.message, call);
  }

  /**
   * The conversation's state while its turn runs: the one place it is decided, from the gate's
   * live state of the turn's calls (not from the cards, which the window is shown only once they
   * are on disk). Waiting only while an approval is actually pending; a call approved and sent
   * reads as running. Called on every transition of one of the turn's calls.
   */
  private refreshState(c: Conversation): void {
    const turn = this.turns.get(c.id);
    if (!turn) return;
    let waiting = false;
    let running = false;
    for (const id of turn.ops) {
      const state = this.deps.gate.gate.getLive(id)?.state;
      if (state === 'awaiting_approval') waiting = true;
      else if (state === 'proposed' || state === 'approved' || state === 'executing') running = true;
    }
    this.setState(c, waiting ? 'waiting_approval' : running ? 'running_tools' : 'responding');
  }

  /** Connected servers' instructions, with Warden's secrets replaced. */
  private instructions(conversationId: string): Array<{ server: string; text: string }> {
    return (this.deps.instructions?.(conversationId) ?? []).map((i) => ({ server: i.server, text: this.redact(i.text) }));
  }

  /** The tools the gate module offers here: effective decision is not deny (its one definition). */
  private offeredKeys(conversationId: string): Set<string> {
    return new Set(this.deps.gate.offeredTools(conversationId).map((t) => toolKey(t.serverId, t.accountId, t.toolName)));
  }

  // ---- messages and events -----------------------------------------------------------------

  private newMessage(role: ChatMessage['role'], text: string): ChatMessage {
    return { id: `m-${randomUUID()}`, role, text, createdAt: this.deps.clock.now(), round: null, toolCalls: [], usage: null, streaming: false, providerId: null, model: null, note: null, tone: 'info', problem: null, attachments: [] };
  }

  private notice(c: Conversation, text: string, tone: ChatMessage['tone'], problem: ChatMessage['problem'] = null): void {
    const message = { ...this.newMessage('notice', text), tone, problem };
    c.messages.push(message);
    this.emitMessage(c, message);
  }

  private setState(c: Conversation, state: ConversationState): void {
    if (c.state === state) return;
    c.state = state;
    c.updatedAt = this.deps.clock.now();
    this.emitChanged(c);
  }

  /**
   * Emits a changed message once per microtask however many times it changed (a call's
   * transitions arrive in bursts), so the renderer gets the latest state without a copy per step.
   */
  private emitMessage(c: Conversation, message: ChatMessage): void {
    const queued = this.pendingEmits.size > 0;
    this.pendingEmits.set(message, c.id);
    if (queued) return;
    queueMicrotask(() => {
      const batch = [...this.pendingEmits];
      this.pendingEmits.clear();
      for (const [m, conversationId] of batch) {
        const shown = this.shownOf(conversationId, m);
        if (shown !== undefined) this.deps.events.emit('chat:message', { conversationId, message: shown });
      }
    });
  }

  // ---- final only once durable -------------------------------------------------------------

  /** Stamps a change to `part` (a reply whose text ended, or a call's card) that the window sees once it is on disk. */
  private markChanged(c: Conversation, message: ChatMessage, part: ChatMessage | ChatToolCall): void {
    this.changedAt.set(part, ++this.changeSeq);
    let held = this.notYetDurable.get(c.id);
    if (!held) this.notYetDurable.set(c.id, (held = new Set()));
    held.add(message);
  }

  /**
   * Starts a write of the conversation (group-committed, not awaited) and, once it is on disk,
   * shows the window every change it covered. A write that fails leaves them shown as they were,
   * with a note saying the reply could not be saved.
   */
  private saveRound(c: Conversation, withinMs = ROUND_WRITE_WITHIN_MS): void {
    const covered = this.changeSeq;
    const durable = this.durableUpTo.get(c.id) ?? 0;
    // The cards as this write carries them (at least: it starts later, with any change since).
    const written: Array<[ChatToolCall, ChatToolCall]> = [];
    for (const m of this.notYetDurable.get(c.id) ?? []) {
      for (const x of m.toolCalls) if ((this.changedAt.get(x) ?? 0) > durable) written.push([x, { ...x }]);
    }
    const shown = () => {
      for (const [card, copy] of written) this.writtenCard.set(card, copy);
      if (covered > (this.durableUpTo.get(c.id) ?? 0)) this.durableUpTo.set(c.id, covered);
      const held = this.notYetDurable.get(c.id);
      if (!held) return;
      for (const m of held) {
        this.emitMessage(c, m);
        if (!this.pendingChange(c.id, m)) held.delete(m);
      }
      if (held.size === 0) this.notYetDurable.delete(c.id);
    };
    this.deps.store.save(c.id, withinMs).then(shown, (error: unknown) => {
      console.error(`chat: saving conversation ${c.id} failed`, error);
      for (const m of this.notYetDurable.get(c.id) ?? []) {
        m.note = `Warden could not save this reply to disk: ${error instanceof Error ? error.message : String(error)}`;
        this.heldShownAt.delete(m);
        this.emitMessage(c, m);
      }
    });
  }

  /** Whether `m` holds a change not yet covered by a finished save. */
  private pendingChange(conversationId: string, m: ChatMessage): boolean {
    const durable = this.durableUpTo.get(conversationId) ?? 0;
    return (this.changedAt.get(m) ?? 0) > durable || m.toolCalls.some((x) => (this.changedAt.get(x) ?? 0) > durable);
  }

  /**
   * The message as the window may see it: a reply whose end is not on disk yet is still
   * streaming, and each card is shown as the last finished save wrote it (not at all if none
   * did). A message with nothing waiting for the disk is the message itself; undefined when the
   * window already has this view of a held message.
   */
  private shownOf(conversationId: string, m: ChatMessage): ChatMessage | undefined {
    if (!this.notYetDurable.get(conversationId)?.has(m)) {
      this.heldShownAt.delete(m);
      return m;
    }
    const durable = this.durableUpTo.get(conversationId) ?? 0;
    // Shown once since the stream ended (or since the last save finished): nothing new to show.
    if (this.heldShownAt.get(m) === durable) return undefined;
    this.heldShownAt.set(m, durable);
    const cards: ChatToolCall[] = [];
    for (const x of m.toolCalls) {
      if ((this.changedAt.get(x) ?? 0) <= durable) cards.push(x);
      else {
        const written = this.writtenCard.get(x);
        if (written) cards.push(written);
      }
    }
    const textHeld = (this.changedAt.get(m) ?? 0) > durable;
    return { ...m, ...(textHeld ? { streaming: true } : {}), toolCalls: cards };
  }

  private emitChanged(c: Conversation): void {
    this.deps.events.emit('chat:changed', { conversationId: c.id, summary: summaryOf(c) });
  }
}
