/**
 * Shared setup for the chat tests: a real core (the real gate, policy store, connection layer and
 * in-process demo server) with a keychain over a Map, the demo server's own record of what it
 * received, and a stand-in for main's native dialogs that records what it was shown.
 */
import { openDemoTransport, type DemoState } from '../../../electron/core/demo/demo-server';
import { createCore, type CoreDeps, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import type { ApprovalPreview, BatchChoice } from '../../../electron/core/ports';
import type { ListableSecretStore } from '../../../electron/core/secrets/keytar-secret-store';
import type { Conversation } from '../../../shared/contract/chat';
import type { ChannelName } from '../../../shared/ipc';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

/** A keychain over a Map (the real keychain is tested elsewhere; chat never touches secrets). */
export class MapKeychain implements ListableSecretStore {
  readonly values = new Map<string, string>();
  async get(key: string) {
    return this.values.get(key) ?? null;
  }
  async set(key: string, value: string) {
    this.values.set(key, value);
  }
  async delete(key: string) {
    return this.values.delete(key);
  }
  async keys(prefix: string) {
    return [...this.values.keys()].filter((k) => k.startsWith(prefix));
  }
}

/** What the native-dialog stand-in answers and what it was shown. */
export class DialogStandIn {
  single: 'approve' | 'deny' = 'deny';
  batch: BatchChoice = 'deny-all';
  readonly shown: ApprovalPreview[] = [];
  readonly batches: ApprovalPreview[][] = [];
  readonly prompter = {
    prompt: async (preview: ApprovalPreview) => {
      this.shown.push(preview);
      return this.single;
    },
    promptBatch: async (previews: readonly ApprovalPreview[]) => {
      this.batches.push([...previews]);
      return this.batch;
    },
  };
}

export interface ChatCore {
  core: WardenCore;
  dialogs: DialogStandIn;
  /** Every demo server instance the core opened (one per connection), with its own call record. */
  demos: DemoState[];
  /** The demo server's (serverId, accountId). */
  demo: { serverId: string; accountId: string };
}

/** A core with the demo server added on first run (and the lab's rules), conversations in memory unless `chat.dataDir`. */
export async function startChatCore(deps: Partial<CoreDeps> = {}): Promise<ChatCore> {
  const dialogs = new DialogStandIn();
  const demos: DemoState[] = [];
  const core = createCore({
    confirmServerChange: confirmEveryServerChange,
    version: 'test',
    offerDemoServer: true,
    servers: { secrets: new MapKeychain() },
    ...deps,
    gate: { prompter: dialogs.prompter, ...deps.gate },
    connections: {
      reconnect: { maxAttempts: 0 },
      builtinTransport: async () => {
        const opened = await openDemoTransport();
        demos.push(opened.state);
        return opened.transport;
      },
      ...deps.connections,
    },
  });
  await core.demoOffered;
  const def = core.servers.definitions().find((d) => d.transport === 'builtin')!;
  const accountId = (await core.handlers['accounts:list']({ serverId: def.id })).accounts[0]!.id;
  return { core, dialogs, demos, demo: { serverId: def.id, accountId } };
}

/** One contract call through dispatch (request and response parsed by the contract). */
export async function call<T = Record<string, unknown>>(core: WardenCore, channel: ChannelName, request: unknown): Promise<T> {
  const r = await dispatch(core.handlers, channel, request, () => {});
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}

/** Waits until `check` holds (polling, bounded). */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Waits until the conversation's turn is over and returns it. */
export async function settled(core: WardenCore, conversationId: string): Promise<Conversation> {
  await until(() => core.chat.get(conversationId).state === 'idle', `conversation ${conversationId} to be idle`);
  return call<Conversation>(core, 'chat:get', { conversationId });
}

/** Waits until some call of the conversation waits for approval. */
export async function waitingApproval(core: WardenCore, conversationId: string): Promise<Conversation> {
  await until(() => core.chat.get(conversationId).state === 'waiting_approval', 'a call to wait for approval');
  return call<Conversation>(core, 'chat:get', { conversationId });
}

/** Every tool call of a conversation, in order. */
export const callsOf = (c: Conversation) => c.messages.flatMap((m) => m.toolCalls);
