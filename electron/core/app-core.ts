/**
 * The core: everything the main process owns, assembled from ports. Runs in plain Node (no
 * `electron` import), so main and the browser test host serve the very same object.
 *
 * Why this file is longer than 450 lines: it is the one assembly. Half of it is `CoreDeps`, every
 * port a host may pass with its safe default in words; the rest is the wiring, in the order the
 * parts depend on each other, which reads top to bottom only while it stays in one place. Every
 * rule lives in the modules it wires.
 */
import type { CoreStatus } from '../../shared/contract/core';
import type { ChannelName } from '../../shared/ipc';
import { assembleHandlers, type Handlers } from './dispatch';
import { CoreEvents } from './events';
import { systemClock, type BrowserOpener, type Clock, type FileDialogs, type Journal, type JournalRecord } from './ports';
import { OAuthService, createAuthHandlers, type OriginConfirmer, type ResolveHost } from './mcp/oauth';
import type { ServerChangeConfirmer } from './settings/server-confirmation';
import { cancellingElicitor, type AnswerConfirmation, type Elicitor } from './elicitation/elicitation';
import { elicitationHandlers, FormQuestions } from './elicitation/form-questions';
import { RootsService, rootsHandlers } from './mcp/roots';
import { MemoryJournal } from './memory-journal';
import { WardenError } from '../../shared/result';
import { activityCallHandlers } from './ledger/activity-calls';
import { activityHandlers } from './ledger/activity-handlers';
import { MemoryHistory, type HistoryReads } from './ledger/history';
import type { LedgerService } from './ledger/service';
import type { OperationRecoveryReport } from '../../shared/contract/activity';
import { createServersModule, type ServersModuleOptions } from './settings/servers-module';
import { createImportModule, type ImportModuleOptions } from './import/import-module';
import type { ServerService } from './settings/server-service';
import { createGateModule, denyingPrompter, type GateModule, type GateModuleOptions } from './gate/gate-module';
import { confirmLeavingSafeMode } from './safe-mode-confirmation';
import { createConnectionLayer, type ConnectionLayerOptions } from './mcp/connection-layer';
import { DEFAULT_RELIST_AFTER_MS, type ConnectionManager } from './mcp/connection-manager';
import { runHandlers } from './run/run-handlers';
import { createFileObserver } from './observe/file-observer';
import { firstObserver } from './observe/observers';
import { DemoNotesObserver } from './demo/demo-observer';
import { applyDemoLabRules, offerDemoServerOnFirstRun } from './demo/demo-setup';
import { createModelsModule, type ModelsModuleOptions } from './models/models-module';
import type { ModelProviderService, ProviderEndpointConfirmer } from './models/provider-service';
import { createThemeModule, type Appearance } from './appearance/theme';
import { createChatModule, type ChatOptions } from './chat/chat-module';
import { DEMO_PROVIDER_CHOICE, DemoModel } from './models/demo-model';
import type { ChatService } from './chat/chat-service';
import { createPermissionsModule, type PermissionsModule } from './permissions/permissions-module';
import type { AuthStatus } from '../../shared/contract/auth';
import { createPreferencesModule, preferenceReaders } from './preferences/preferences-module';
import { verifyLedgerInWorker } from './ledger/verify-in-worker';
import type { VerifyOptions } from './ledger/verify';
import type { LedgerVerifyResult } from '../../shared/domain/ledger';
import type { Redactor } from './redact/redactor';
import { keepAsIs, type Scrub } from './storage/json-file-folder';
import { ServerAutostart, type AutostartPolicy } from './mcp/autostart';
import { serverCatalogOf, serverSwitchesOf } from './server-ports';
import { ServerData, serverDataHandlers } from './mcp/server-data';
import { denyingSamplingAsker, SamplingService, type SamplingAsker, type SamplingLimits, type SamplingModelChoice } from './sampling/sampling-service';

/** What the core needs from its host. */
export interface CoreDeps {
  version: string;
  platform?: string;
  clock?: Clock;
  /** A journal other than the ledger (tests): it must keep its records readable (`read()`). */
  journal?: Journal & { read(): readonly JournalRecord[] };
  /** The durable ledger service (its ledger is then the journal); absent = in-memory journal. */
  ledger?: LedgerService;
  /** Settings store, keychain and import locations for servers/accounts (defaults: memory, keytar). */
  servers?: ServersModuleOptions & Pick<ImportModuleOptions, 'importLocation'>;
  /** Gate wiring: the connection layer's registry/executor, the native approval prompter, stored rules (defaults: nothing listed, deny-all prompter). */
  gate?: Omit<GateModuleOptions, 'journal' | 'history' | 'clock' | 'events' | 'isSafeMode'>;
  /**
   * Opens URLs in the system browser (main: `openExternalSafely`); used for OAuth sign-in and
   * URL-mode elicitation. Default: refuses, so a headless core never opens anything.
   */
  browser?: BrowserOpener;
  /**
   * Native confirmation before a server definition is saved (add, edit, import), a local server's
   * env secret gets a new value, or an account bringing env secrets is added. Main passes its
   * dialog. Default: refused with a plain error, so a core without one never saves a server
   * unconfirmed (tests and the browser test host pass a stand-in for the person).
   */
  confirmServerChange?: ServerChangeConfirmer;
  /**
   * Native confirmation before an OAuth sign-in contacts a site other than the server's own (its
   * authorization server). Default: refused, so a host without dialogs never uses one.
   */
  confirmAuthorizationServer?: OriginConfirmer;
  /**
   * Native confirmation before a model provider's base URL is saved (adding one, or moving it):
   * conversations go there. Main passes its dialog; without one (tests, the browser test host)
   * providers are saved as requested.
   */
  confirmProviderEndpoint?: ProviderEndpointConfirmer;
  /** The DNS port OAuth's address checks use (default: the operating system's resolver). */
  resolveHost?: ResolveHost;
  /**
   * Native file choosers owned by main (Electron's `dialog`): import reads only a file the person
   * chose there and exports write only where they chose. Default: refuses, so a headless core
   * never opens or writes a file.
   */
  fileDialogs?: FileDialogs;
  /**
   * Asks the person a server's URL-mode elicitation (main: a native dialog). Default: every such
   * request is cancelled. Form questions are shown in the app (elicitation/form-questions.ts)
   * unless this brings its own `form` (tests). Its `confirmAnswer` is the native step before the
   * answer to a form that might ask for a secret is sent; without it such an answer is never sent.
   */
  elicitor?: Pick<Elicitor, 'url'> & Partial<Elicitor>;
  /** MCP connection layer tuning: timeouts, backoff, the OAuth provider hook (default: the gate's registry/executor). */
  connections?: ConnectionLayerOptions;
  /** Add the built-in offline demo server on a first run with no servers (the app: true; tests: off). */
  offerDemoServer?: boolean;
  /** Model providers: their settings file, built-in providers (the offline demo), adapter tuning (defaults: memory, none). */
  models?: ModelsModuleOptions;
  /** Applies the theme preference to the host (main: nativeTheme). Default: none ("system" is light). */
  appearance?: Appearance;
  /** Conversations folder, model providers, loop caps, link confirmation (default: memory, the demo model only). */
  chat?: ChatOptions;
  /**
   * Folder where what each account listed is kept (the matrix shows a disconnected account's tools
   * from it; a changed tool is shown before and after). Default: memory only.
   */
  listingsDir?: string;
  /** Folder where the roots people give servers are kept (one file per server). Default: memory only. */
  rootsDir?: string;
  /**
   * Servers asking the person's model for completions: the native dialogs that ask the person
   * (default: every request denied, nothing loosened), where each server's setting is kept (default:
   * memory only) and the limits.
   */
  sampling?: { asker?: SamplingAsker; dir?: string; limits?: Partial<SamplingLimits> };
  /** The folder Warden keeps its files in (main: the user-data folder), shown in Settings. */
  dataFolder?: string;
  /** Verifies a ledger folder for `ledger:verify` with its key and anchor (default: in a worker thread, off the main thread). */
  verifyLedger?: (dir: string, options?: VerifyOptions) => Promise<LedgerVerifyResult>;
  /**
   * Connect every enabled server once recovery is done (the app and the test host: true; tests:
   * off unless they test it), retrying failures with `autostartPolicy`'s backoff.
   */
  autoConnect?: boolean;
  /** Spacing of automatic attempts after a failed connect (defaults: 2 s doubling to 60 s, 6 retries). */
  autostartPolicy?: Partial<AutostartPolicy>;
}

/** The running core: contract handlers, outgoing events, and shutdown. */
export interface WardenCore {
  readonly handlers: Handlers;
  /** Which module declared each contract channel (exactly one each; see assembleHandlers). */
  readonly handlerOwners: Readonly<Record<ChannelName, string>>;
  readonly events: CoreEvents;
  /** Server definitions, accounts and their secrets (the connection layer reads these). */
  readonly servers: ServerService;
  /** The gate, the permission store and their handlers (the only path to a tools/call). */
  readonly gate: GateModule;
  /** Live MCP connections: the gate's ToolRegistry and ToolExecutor. */
  readonly connections: ConnectionManager;
  /** Model providers and their keys; the chat loop's `ModelProviders`. */
  readonly models: ModelProviderService;
  /**
   * Recovery of operations interrupted by the last exit (ledger only): executing → outcome_unknown,
   * never re-sent; the gate learns every recorded operation id. Await before serving requests.
   */
  readonly recovered: Promise<OperationRecoveryReport | null>;
  /** Conversations and the model loop (every tool call a model makes goes through `gate`). */
  readonly chat: ChatService;
  /** The permission matrix, rule checks, rug-pull reviews, accounts, and what each account listed. */
  readonly permissions: PermissionsModule;
  /** What the first-run demo offer did (null when `offerDemoServer` is off). */
  readonly demoOffered: Promise<Awaited<ReturnType<typeof offerDemoServerOnFirstRun>> | null>;
  /** The enabled switch, launch connects, retries and the servers overview. */
  readonly autostart: ServerAutostart;
  /** Settles when every enabled server has connected or failed its first attempt (at once when `autoConnect` is off). */
  readonly launched: Promise<void>;
  status(): CoreStatus;
  close(): Promise<void>;
}

/** A browser opener for hosts that have none: refuses with a clear error, opens nothing. */
const refusingBrowser: BrowserOpener = {
  open: async () => {
    throw new WardenError('UNSUPPORTED', 'This host cannot open a browser; sign in from the Warden app');
  },
};

/** Assembles the core from its ports. */
export function createCore(deps: CoreDeps): WardenCore {
  const clock = deps.clock ?? systemClock;
  const memory = deps.ledger ? undefined : (deps.journal ?? new MemoryJournal(clock));
  const journal: Journal = deps.ledger?.ledger ?? memory!;
  // One source of operation history: the ledger's index, or the in-memory journal's records.
  const history: HistoryReads = deps.ledger?.history ?? new MemoryHistory(() => memory!.read());
  // Nothing that leaves the core for the window (a response, an event, an error) carries a secret
  // Warden holds: a server that echoes the token it was sent, or a secret it read, reaches the
  // renderer (which holds no secrets, and may be compromised) redacted, as the ledger records it.
  const redactor = deps.ledger?.ledger.redactor;
  const forWindow = <T>(value: T): T => (redactor ? redactor.scrubIfPresent(value) : value);
  const events = new CoreEvents(forWindow);
  // The same redactor over every file the core's stores write in the user-data folder.
  const scrub: Scrub = redactor ? (value) => redactor.scrubIfPresent(value) : keepAsIs;
  const startedAt = new Date(clock.now()).toISOString();
  // Safe mode has one owner, the ledger (tampering found; lifted only by acknowledging it).
  const safeMode = () => deps.ledger?.ledger.safeMode ?? false;
  // Damage a person acknowledged stays in the log: the status must not call it whole again.
  const acknowledgedDamage = (): { acknowledgedDamage?: number } => {
    const count = deps.ledger?.ledger.recovery.breaks.filter((b) => b.acknowledged).length ?? 0;
    return count > 0 ? { acknowledgedDamage: count } : {};
  };
  const { importLocation, ...serverOptions } = deps.servers ?? {};
  const serversModule = createServersModule({
    ...serverOptions,
    ...(deps.confirmServerChange ? { confirmChange: deps.confirmServerChange } : {}),
    clock,
    journal,
    events,
  });
  const importModule = createImportModule({
    servers: serversModule.service,
    clock,
    ...(importLocation ? { importLocation } : {}),
    ...(deps.fileDialogs ? { fileDialogs: deps.fileDialogs } : {}),
    ...(deps.confirmServerChange ? { confirmChange: deps.confirmServerChange } : {}),
  });
  // Tokens and keys are registered with the redactor one by one: the keychain only announces the
  // JSON text it stores, and a server or a provider may echo a bare token back.
  const redactorSink = deps.servers?.onSecretValue ?? (redactor ? (v: string) => redactor.register(v) : undefined);
  // Provider keys share the one keychain store; the redactor learns each key whichever store it is.
  // The offline demo model is built in: listed first, the default on first start, no key, no network.
  const demoModel = new DemoModel({ chunkDelayMs: deps.chat?.demoChunkDelayMs ?? 0 });
  const modelsModule = createModelsModule({
    ...deps.models,
    builtins: deps.models?.builtins ?? [{ choice: DEMO_PROVIDER_CHOICE, provider: demoModel }],
    ...(deps.confirmProviderEndpoint ? { confirmEndpoint: deps.confirmProviderEndpoint } : {}),
    secrets: serversModule.secrets,
    onSecretValue: redactorSink,
    ...(redactor ? { redactor } : {}),
    journal,
    clock,
    events,
  });
  const browser: BrowserOpener = deps.browser ?? refusingBrowser;
  // OAuth sign-in for remote servers; after a login or logout the account reconnects (or drops)
  // so the connection picks up the new session at once. The connection layer asks OAuth for its
  // providers, so it subscribes to sign-in changes once both exist.
  const signInListeners = new Set<(status: AuthStatus) => void>();
  const oauth = new OAuthService({
    secrets: serversModule.secrets,
    browser,
    servers: serversModule.service,
    clock,
    ...(redactorSink ? { onSecretValue: redactorSink } : {}),
    ...(deps.confirmAuthorizationServer ? { confirmAuthorizationServer: deps.confirmAuthorizationServer } : {}),
    ...(deps.resolveHost ? { resolveHost: deps.resolveHost } : {}),
    onChanged: (s) => {
      for (const listener of signInListeners) listener(s);
    },
  });
  const names = {
    server: (serverId: string) => serversModule.service.getServer(serverId)?.name,
    account: (serverId: string, accountId: string) => serversModule.service.accountsOf(serverId).find((a) => a.id === accountId)?.label,
  };
  const formQuestions = new FormQuestions({ events, clock, names });
  const elicitor: Elicitor = {
    url: (request, signal) => (deps.elicitor ?? cancellingElicitor).url(request, signal),
    form: deps.elicitor?.form ? deps.elicitor.form.bind(deps.elicitor) : (request, signal) => formQuestions.ask(request, signal),
    refused: deps.elicitor?.refused ? deps.elicitor.refused.bind(deps.elicitor) : (notice) => formQuestions.refused(notice),
    // The native step names the server and account as Warden does, like the form it follows.
    ...(deps.elicitor?.confirmAnswer
      ? { confirmAnswer: (c: AnswerConfirmation, signal: AbortSignal) => deps.elicitor!.confirmAnswer!({ ...c, ...formQuestions.labelsOf(c.serverId, c.serverLabel, c.accountId) }, signal) }
      : {}),
  };
  // Roots are read by the connections built below; a change reaches them through this listener
  // (added once both exist), as sign-in changes do.
  const rootsListeners = new Set<(serverId: string, accountId: string) => void>();
  const roots = new RootsService({
    dir: deps.rootsDir ?? null,
    scrub,
    ...(deps.fileDialogs?.chooseFolder ? { chooseFolder: (o: { title: string; defaultPath?: string }) => deps.fileDialogs!.chooseFolder!(o) } : {}),
    onChanged: (serverId, accountId) => {
      for (const listener of rootsListeners) listener(serverId, accountId);
    },
    serverName: names.server,
  });
  // The model a server's sampling request would be answered by: the one the person used last in
  // the chat (its newest conversation's), else the first provider with a model chosen.
  // `chat` is assembled below; the choice is only asked for once a server asks.
  let chatRef: { list(): Array<{ providerId: string; model: string | null }> } | null = null;
  const samplingModel = async (): Promise<SamplingModelChoice | null> => {
    const choices = await modelsModule.service.list();
    const last = chatRef?.list()[0];
    const lastChoice = last && last.model ? choices.find((c) => c.providerId === last.providerId) : undefined;
    if (lastChoice && last?.model) return { providerId: lastChoice.providerId, providerLabel: lastChoice.label, model: last.model };
    const first = choices.find((c) => c.defaultModel);
    return first ? { providerId: first.providerId, providerLabel: first.label, model: first.defaultModel! } : null;
  };
  const sampling = new SamplingService({
    dir: deps.sampling?.dir ?? null,
    asker: deps.sampling?.asker ?? denyingSamplingAsker,
    providers: modelsModule.service,
    modelChoice: samplingModel,
    names,
    journal,
    clock,
    ...(deps.sampling?.limits ? { limits: deps.sampling.limits } : {}),
    ...(redactor ? { redact: (text: string) => redactor.scrubString(text) } : {}),
    scrub,
  });
  serversModule.service.onChange((change) => {
    if (change.serverId === null) return;
    if (change.reason === 'removed') {
      void roots.forgetServer(change.serverId);
      void sampling.forgetServer(change.serverId);
    }
    // The change names only the server: every account of it that is gone loses its folders.
    else if (change.reason === 'account-removed') {
      const live = new Set(serversModule.service.accountsOf(change.serverId).map((a) => a.id));
      void roots.forgetMissingAccounts(change.serverId, (accountId) => live.has(accountId));
      void sampling.forgetMissingAccounts(change.serverId, (accountId) => live.has(accountId));
    }
  });
  const serverCatalog = serverCatalogOf(serversModule.service);
  const demoNotes = new DemoNotesObserver();
  const connections = createConnectionLayer({
    service: serverCatalog,
    secrets: serversModule.secrets,
    events,
    journal,
    ...(deps.ledger ? { pins: (serverId: string, accountId: string) => deps.ledger!.pinnedFor(serverId, accountId) } : {}),
    clock,
    options: {
      authProviderFor: (d, a) => oauth.providerFor(d, a),
      elicitation: { elicitor, browser },
      roots: (serverId, accountId) => roots.forServer(serverId, accountId),
      sampling: (serverId, accountId, params, signal) => sampling.answer(serverId, accountId, params, signal),
      // The demo's stores are opened through its observer, which reads them after each call.
      builtinTransport: (builtin, where) => demoNotes.open(builtin, where),
      relistAfterMs: () => serversModule.settings.get().preferences.relistAfterMs ?? DEFAULT_RELIST_AFTER_MS,
      ...deps.connections,
    },
  });
  rootsListeners.add((serverId, accountId) => connections.manager.rootsChanged(serverId, accountId));
  // A server's folders are also a wall when the person chose so: the policy decides with them.
  rootsListeners.add((serverId, accountId) => void gateModule.rootFoldersChanged(serverId, accountId, roots.list(serverId, accountId).map((r) => r.path)).catch(() => undefined));
  signInListeners.add((s) => {
    if (s.signedIn) void connections.manager.connect(s.serverId, s.accountId).catch(() => undefined);
    else void connections.manager.disconnect(s.serverId, s.accountId).catch(() => undefined);
  });
  // A deleted server or account, or a new address, ends the OAuth sign-in: revoked and forgotten
  // before the keychain entries go.
  serversModule.service.onOAuthDiscarded((server, accountIds) => oauth.discardServer(server, accountIds));
  // Settings the gate reads at every decision, so a change applies without a restart.
  const preferences = preferenceReaders(serversModule.settings);
  const gateModule = createGateModule({
    registry: connections.manager,
    executor: connections.manager,
    // What a sent call really did, read with Warden's own authority (never through its server).
    observer: firstObserver([demoNotes, createFileObserver()]),
    ...deps.gate,
    approvalTtlMs: deps.gate?.approvalTtlMs ?? preferences.approvalExpiryMs,
    defaultToolMode: deps.gate?.defaultToolMode ?? preferences.defaultToolMode,
    journal,
    history,
    clock,
    events,
    // The ledger's safe mode (tampering found) holds every tool at ask until acknowledged: the one
    // place it joins the policy state the gate, the matrix and the chat decide with.
    isSafeMode: safeMode,
    names,
  });

  // Settles what the last exit interrupted; the host awaits `recovered` (kept from being an
  // unhandled rejection here so a failure surfaces where it is awaited).
  const recovered = deps.ledger ? deps.ledger.recoverOperations(gateModule.gate) : Promise.resolve(null);
  recovered.catch(() => undefined);
  // First run with no servers: add the built-in offline demo once (a preference makes removal stick).
  const demoOffered = deps.offerDemoServer
    ? offerDemoServerOnFirstRun({ settings: serversModule.settings, service: serversModule.service }).then(async (outcome) => {
        // A newly added demo starts with the prompt-injection lab's rules.
        if (outcome === 'added') {
          await applyDemoLabRules({ service: serversModule.service, connect: (s, a) => connections.manager.connect(s, a), registry: connections.manager, policy: gateModule.policy });
        }
        return outcome;
      })
    : Promise.resolve(null);
  demoOffered.catch(() => undefined);
  const autostart = new ServerAutostart({
    manager: connections.manager,
    servers: serverCatalog,
    switches: serverSwitchesOf(serversModule.settings),
    events,
    clock,
    ...(deps.autostartPolicy ? { policy: deps.autostartPolicy } : {}),
  });
  // After recovery (nothing is re-sent, and pins are known) and after the first-run demo offer
  // (which connects the demo itself): every enabled server at once.
  const launched = deps.autoConnect
    ? Promise.allSettled([recovered, demoOffered]).then(() => autostart.launch())
    : Promise.resolve();
  launched.catch((error: unknown) => console.error('connecting the enabled servers failed', error));
  const theme = createThemeModule({ settings: serversModule.settings, events, appearance: deps.appearance });

  // Resources, prompts, completions and log levels: the person's requests, journaled, under the
  // person's server-wide rules (a Disabled server is not read).
  const serverData = new ServerData({
    manager: connections.manager,
    names: {
      server: (serverId) => serversModule.service.getServer(serverId)?.name,
      account: (serverId, accountId) => serversModule.service.accountsOf(serverId).find((a) => a.id === accountId)?.label,
    },
    // The policy the gate decides with, so the Settings default keeps a server's data unread too.
    policy: () => gateModule.effectivePolicy(),
    journal,
    clock,
    events,
    // Kept with the account (settings), so a restart asks for the same level again.
    levels: {
      get: (_serverId, accountId) => serversModule.service.logLevelOf(accountId),
      set: (_serverId, accountId, level) => serversModule.service.setLogLevel(accountId, level),
    },
  });
  const chat = createChatModule({ options: deps.chat, demo: demoModel, providers: modelsModule.service, gate: gateModule, registry: deps.gate?.registry ?? connections.manager, connections: connections.manager, servers: serversModule.service, events, clock, browser, recovered,
    attachment: (id: string) => serverData.attachmentForChat(id),
    // The ledger's redactor, which the keychain and OAuth feed: the chat keeps what the ledger would.
    ...(redactor ? { redactor } : {}),
  });
  chatRef = chat.service;
  const permissions = createPermissionsModule({
    gate: gateModule,
    servers: serversModule.service,
    connections: connections.manager,
    events,
    prompter: deps.gate?.prompter ?? denyingPrompter,
    clock,
    listingsDir: deps.listingsDir ?? null,
    scrub,
    paths: deps.gate?.paths?.semantics ?? (process.platform === 'win32' ? 'win32' : 'posix'),
    conversationTitle: (id) => chat.service.list().find((c) => c.id === id)?.title,
    ...(deps.fileDialogs?.chooseFolder ? { chooseFolder: (o: { title: string }) => deps.fileDialogs!.chooseFolder!(o) } : {}),
  });

  const preferencesModule = createPreferencesModule({
    settings: serversModule.settings,
    secrets: serversModule.secrets,
    events,
    journal,
    clock,
    prompter: deps.gate?.prompter ?? denyingPrompter,
    revalidate: (cause) => gateModule.gate.revalidate(cause),
    about: { version: deps.version, platform: deps.platform ?? process.platform },
    dataFolder: deps.dataFolder ?? null,
    ledger: deps.ledger ? { dir: deps.ledger.ledger.dir, safeMode: () => deps.ledger!.ledger.safeMode } : null,
    // Sealed records are checked with the ledger's key, and the folder against its anchor.
    verify: (dir) => (deps.verifyLedger ?? verifyLedgerInWorker)(dir, deps.ledger?.verifyOptions() ?? {}),
  });

  const status = (): CoreStatus => ({
    version: deps.version,
    startedAt,
    platform: deps.platform ?? process.platform,
    journal: {
      kind: journal.kind,
      records: journal.size(),
      ...(deps.ledger?.indexing != null ? { indexing: deps.ledger.indexing } : {}),
      ...acknowledgedDamage(),
    },
    servers: { configured: serversModule.service.definitions().length, connected: connections.connectedCount() },
    pendingApprovals: gateModule.gate.pending().length,
    safeMode: safeMode(),
  });

  // Push `core:status-changed` whenever a domain event may have moved a status field (servers,
  // connections, approvals, safe mode), coalesced per tick and only when something differs.
  let lastStatus = JSON.stringify(status());
  let statusCheckQueued = false;
  const queueStatusCheck = () => {
    if (statusCheckQueued) return;
    statusCheckQueued = true;
    queueMicrotask(() => {
      statusCheckQueued = false;
      const next = status();
      const text = JSON.stringify(next);
      if (text === lastStatus) return;
      lastStatus = text;
      events.emit('core:status-changed', next);
    });
  };
  events.subscribe((event) => {
    if (event !== 'core:status-changed') queueStatusCheck();
  });
  // The index catching up in the background after a start without a current one: the frame
  // shows how far it is (Activity waits for it).
  const offIndexing = deps.ledger?.onIndexing(queueStatusCheck);
  // A break found by the background verification puts the app in safe mode as one found at start
  // would: everything not yet executing is decided again (now at ask), and the frame is told.
  const offSafeMode = deps.ledger?.onSafeModeChange((on) => {
    if (on) void gateModule.gate.revalidate('the ledger check found a break in its records (damage, or a change in the middle of the log)').catch(() => undefined);
    queueStatusCheck();
  });

  const activity = activityHandlers({
    service: deps.ledger ?? null,
    history,
    now: () => clock.now(),
    ...(deps.fileDialogs ? { fileDialogs: deps.fileDialogs } : {}),
    gate: () => gateModule.gate,
  });
  // Leaving safe mode loosens every tool at once: confirmed in the native dialog (deny-all without one).
  const acknowledgeSafeMode = confirmLeavingSafeMode(activity['ledger:acknowledge-safe-mode'], {
    prompter: deps.gate?.prompter ?? denyingPrompter,
    safeMode,
    breaks: () => deps.ledger?.ledger.recovery.breaks.filter((b) => !b.acknowledged).length ?? 0,
  });

  // The safe-mode acknowledgement is the core's own (wrapped in its confirmation above), not the activity module's.
  const { 'ledger:acknowledge-safe-mode': _unconfirmedAcknowledge, ...activityChannels } = activity;
  const isAccountOf = (serverId: string, accountId: string) => serversModule.service.accountsOf(serverId).some((a) => a.id === accountId);
  // One owner per channel: assembleHandlers refuses a channel two modules declare, or none.
  const { handlers: contractHandlers, owners: handlerOwners } = assembleHandlers({
    core: {
      'core:status': () => status(),
      'core:ping': ({ nonce }) => ({ nonce, receivedAt: new Date(clock.now()).toISOString() }),
      'ledger:acknowledge-safe-mode': async (request) => {
        const result = await acknowledgeSafeMode(request);
        queueStatusCheck();
        return result;
      },
    },
    elicitation: elicitationHandlers(formQuestions),
    roots: rootsHandlers(
      roots,
      isAccountOf,
      {
        enforced: (serverId) => gateModule.policy.current().enforcedRoots?.includes(serverId) === true,
        set: (serverId, enforced) => gateModule.setRootsEnforced(serverId, enforced),
      },
      (serverId) => serversModule.service.getServer(serverId) !== undefined,
    ),
    sampling: sampling.handlers(isAccountOf),
    activity: activityChannels,
    activityCalls: activityCallHandlers({
      history,
      now: () => clock.now(),
      ...(deps.fileDialogs ? { fileDialogs: deps.fileDialogs } : {}),
      names: {
        server: (serverId) => serversModule.service.getServer(serverId),
        account: (serverId, accountId) => serversModule.service.accountsOf(serverId).find((a) => a.id === accountId)?.label,
        inputSchema: (serverId, accountId, toolName) => connections.manager.getTool(serverId, accountId, toolName)?.inputSchema,
        conversation: (id) => {
          const c = chat.service.list().find((x) => x.id === id);
          return c ? { title: c.title, model: c.model } : undefined;
        },
      },
    }),
    // Server changes arrive already confirmed in the native dialog (refused without one).
    servers: serversModule.handlers,
    import: importModule.handlers,
    gate: gateModule.handlers,
    connections: connections.handlers,
    serverData: serverDataHandlers(serverData),
    autostart: {
      'servers:overview': () => autostart.overview(),
      'servers:set-enabled': ({ serverId, enabled }) => autostart.setEnabled(serverId, enabled),
      'servers:restart': ({ serverId }) => autostart.restart(serverId),
    },
    auth: createAuthHandlers(oauth),
    run: runHandlers(() => gateModule.gate),
    models: modelsModule.handlers,
    theme: theme.handlers,
    chat: chat.handlers,
    permissions: permissions.handlers,
    preferences: preferencesModule.handlers,
  });
  const handlers = redactor ? redactedHandlers(contractHandlers, redactor) : contractHandlers;

  return {
    handlers,
    handlerOwners,
    events,
    servers: serversModule.service,
    gate: gateModule,
    connections: connections.manager,
    models: modelsModule.service,
    recovered,
    demoOffered,
    autostart,
    launched,
    chat: chat.service,
    permissions,
    status,
    close: async () => {
      theme.dispose();
      await chat.close();
      offSafeMode?.();
      offIndexing?.();
      await permissions.close();
      await roots.flush();
      await sampling.flush();
      gateModule.close();
      serverData.close();
      modelsModule.dispose();
      autostart.close();
      await connections.dispose();
      // The whole ledger service: its index, and the anchor's last update at a clean exit.
      return deps.ledger ? deps.ledger.close() : journal.close();
    },
  };
}

/** The same handlers, each answering and failing with Warden's secrets replaced. */
function redactedHandlers(handlers: Handlers, redactor: Redactor): Handlers {
  const wrap = (handler: (request: unknown) => unknown) => async (request: unknown) => {
    try {
      return redactor.scrubIfPresent(await handler(request));
    } catch (error) {
      throw redactedError(error, redactor);
    }
  };
  const entries = Object.entries(handlers as unknown as Record<string, (request: unknown) => unknown>);
  return Object.fromEntries(entries.map(([channel, handler]) => [channel, wrap(handler)])) as unknown as Handlers;
}

/** The same failure with Warden's secrets replaced in its message (and stack, which logs show). */
function redactedError(error: unknown, redactor: Redactor): unknown {
  if (error instanceof WardenError) return new WardenError(error.code, redactor.scrubString(error.message));
  if (!(error instanceof Error)) return redactor.scrubIfPresent(error);
  const clean = new Error(redactor.scrubString(error.message));
  clean.name = error.name;
  clean.stack = error.stack === undefined ? undefined : redactor.scrubString(error.stack);
  return clean;
}
