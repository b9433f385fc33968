/**
 * The chat part of the core: the conversation store, the loop, the model providers it uses and
 * the `chat:*` contract handlers, assembled so app-core wires it in a few lines.
 */
import type { ChannelName, RequestOf, ResponseOf } from '../../../shared/ipc';
import { WardenError } from '../../../shared/result';
import type { CoreEvents } from '../events';
import type { GateModule } from '../gate/gate-module';
import type { ToolRegistry } from '../gate/ports';
import type { ConnectionManager } from '../mcp/connection-manager';
import { accessRefusal } from '../mcp/server-data-access';
import { DEMO_MODEL_ID, DEMO_PROVIDER_ID } from '../models/demo-model';
import type { ModelProvider, ModelProviders } from '../models/provider';
import { cleanModels } from '../models/provider-service';
import type { BrowserOpener, Clock } from '../ports';
import type { ServerService } from '../settings/server-service';
import { findDemoServer } from '../demo/demo-setup';
import { ChatService, type ChatLimits, type ChatServiceDeps } from './chat-service';
import { ConversationStore } from './conversation-store';
import type { Redactor } from '../redact/redactor';

type ChatChannel = Extract<ChannelName, `chat:${string}`>;
/** Handlers for the `chat:*` channels. */
export type ChatHandlers = { [C in ChatChannel]: (request: RequestOf<C>) => Promise<ResponseOf<C>> | ResponseOf<C> };

/** What a host may pass for chat. */
export interface ChatOptions {
  /** Folder for conversation files (the app: `<userData>/conversations`); null or absent = memory only. */
  dataDir?: string | null;
  /** Replaces the core's providers (tests with scripted models); given the built-in demo model. */
  providers?: (demo: ModelProvider) => ModelProviders;
  /** Pause between the demo model's streamed words (the app: a little, so streaming shows; tests: 0). */
  demoChunkDelayMs?: number;
  limits?: Partial<ChatLimits>;
  /** Asks the person before a chat link opens (main: a native dialog). Default: links are not opened. */
  confirmLink?: (url: string) => Promise<boolean>;
}

/** Builds the chat module; `ready` resolves once conversations are loaded and recovered. */
export function createChatModule(deps: {
  options?: ChatOptions;
  /** The built-in offline demo model. */
  demo: ModelProvider;
  /** The core's model providers (configured ones and the built-in demo). */
  providers: ModelProviders;
  gate: GateModule;
  /** The same registry the gate decides against, so the tools offered are the tools the gate knows. */
  registry: Pick<ToolRegistry, 'listTools'>;
  connections: ConnectionManager;
  servers: ServerService;
  events: CoreEvents;
  clock: Clock;
  browser: BrowserOpener;
  /** Resolves once the gate knows every recorded operation (recovery after a restart). */
  recovered: Promise<{ requeued: readonly string[] } | null>;
  /** The app's redactor (see ChatServiceDeps.redactor); also scrubs every conversation file written. */
  redactor?: Redactor;
  /** Staged resources and prompts a message can attach (see ChatServiceDeps.attachment). */
  attachment?: ChatServiceDeps['attachment'];
}) {
  const options = deps.options ?? {};
  const providers = options.providers ? options.providers(deps.demo) : deps.providers;
  const store = new ConversationStore(options.dataDir ?? null, deps.redactor ? (value) => deps.redactor!.scrubIfPresent(value) : undefined);
  const service = new ChatService({
    store,
    providers,
    gate: deps.gate,
    registry: deps.registry,
    events: deps.events,
    clock: deps.clock,
    limits: options.limits,
    defaultProviderId: DEMO_PROVIDER_ID,
    ...(deps.redactor ? { redactor: deps.redactor } : {}),
    ...(deps.attachment ? { attachment: deps.attachment } : {}),
    // A server's instructions are its text in the model's context: they follow the person's
    // server-wide rules like a resource read does, so a Disabled (or forbidden) server adds none.
    instructions: (conversationId) => {
      // The policy the gate decides with: the Settings default is part of it.
      const policy = deps.gate.effectivePolicy();
      return deps.connections
        .snapshot()
        .map((s) => ({ ...s, label: deps.servers.getServer(s.serverId)?.name ?? s.serverId }))
        .filter((s) => s.status.state === 'connected' && s.instructions && accessRefusal(policy, s.serverId, s.accountId, s.label, conversationId) === undefined)
        .map((s) => ({ server: s.label, text: s.instructions! }));
    },
  });
  const ready = (async () => {
    await store.load();
    for (const p of store.problems) console.error(`[warden] a conversation file could not be read and was left as it is: ${p}`);
    const report = await deps.recovered.catch(() => null);
    await service.recover(report?.requeued ?? []);
  })();
  ready.catch((error: unknown) => console.error('[warden] loading conversations failed', error));
  const whenReady = <T>(f: () => T | Promise<T>) => ready.then(f);

  const handlers: ChatHandlers = {
    'chat:list': ({ search }) => whenReady(() => ({ conversations: service.list(search) })),
    'chat:get': ({ conversationId }) => whenReady(() => service.get(conversationId)),
    'chat:create': (request) => whenReady(() => service.create(request)),
    'chat:send-message': ({ conversationId, text, attachmentIds }) => whenReady(async () => ({ messageId: await service.send(conversationId, text, attachmentIds) })),
    'chat:stop': ({ conversationId }) => whenReady(async () => ({ stopped: await service.stop(conversationId) })),
    'chat:rename': ({ conversationId, title }) => whenReady(() => service.rename(conversationId, title)),
    'chat:delete': ({ conversationId }) => whenReady(async () => ({ deleted: await service.delete(conversationId) })),
    'chat:set-model': ({ conversationId, providerId, model }) => whenReady(() => service.setModel(conversationId, providerId, model)),
    'chat:providers': async () => ({ providers: await providers.list() }),
    // A provider's listing is its own text: cleaned as the Models panel's is (valid ids once each,
    // labels without control or bidi characters) before the chat's model picker shows it.
    'chat:models': async ({ providerId }) => {
      const listed = await (await providers.get(providerId)).listModels(AbortSignal.timeout(10_000));
      return { models: listed === null ? null : cleanModels(listed) };
    },
    'chat:tools': ({ conversationId }) => whenReady(() => ({ tools: service.tools(conversationId) })),
    'chat:review': ({ conversationId, messageId }) => whenReady(() => service.review(conversationId, messageId)),
    'chat:ask-again': ({ conversationId, messageId }) => whenReady(async () => ({ messageId: await service.askAgain(conversationId, messageId) })),
    'chat:open-link': async ({ url }) => {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new WardenError('INVALID_REQUEST', 'url: not a valid address');
      }
      if (parsed.protocol !== 'https:') throw new WardenError('DENIED', `url: only https:// links are opened (this one is ${parsed.protocol})`);
      if (!options.confirmLink) throw new WardenError('UNSUPPORTED', 'This host cannot ask before opening links, so it opens none');
      if (!(await options.confirmLink(parsed.href))) return { opened: false };
      await deps.browser.open(parsed.href);
      return { opened: true };
    },
    'chat:start-demo': () =>
      whenReady(async () => {
        const found = findDemoServer(deps.servers);
        if (!found) throw new WardenError('NOT_FOUND', 'The built-in demo server is not set up (it was removed). Add it again in Servers, then try the demo.');
        const status = await deps.connections.connect(found.serverId, found.accountId);
        if (status.state !== 'connected') throw new WardenError('NOT_CONNECTED', 'The built-in demo server did not connect; see its log in Servers.');
        const conversation = await service.create({ providerId: DEMO_PROVIDER_ID, model: DEMO_MODEL_ID });
        await service.send(conversation.id, 'Summarise my inbox.');
        return service.get(conversation.id);
      }),
  };

  return {
    service,
    store,
    providers,
    handlers,
    ready,
    async close() {
      await service.close();
      await store.flush();
    },
  };
}
