/**
 * Servers, accounts, connections, tools and logs: a cache of what main owns, refreshed from
 * `servers:changed`, `connections:status-changed` and `connections:tools-changed`.
 *
 * No secret value is ever stored here. Forms hold a secret in their own component state until it
 * is sent (servers:add / servers:edit / secrets:set go straight to the keychain in main); the
 * store only learns the `hasSecret` flags main reports back.
 */
import type { ConnectionStatusView, ConnectionView, LogLineView, ToolView } from '../../../shared/contract/connections';
import type { ImportPreview, SecretDecision, SecretInput, ServersOverview } from '../../../shared/contract/servers';
import type { ServerDraft, ServerView } from '../../../shared/domain/servers';
import { toShownError, unwrap, type ShownError } from '../api';
import type { SliceCreator } from './types';

/** `serverId/accountId`: the key of one connection (ids never contain `/`). */
export function connectionKey(serverId: string, accountId: string): string {
  return `${serverId}/${accountId}`;
}

/** The latest progress a server reported for one running call. */
export interface CallProgressView {
  progress: number;
  total?: number;
  message?: string;
}

export interface ServersSlice {
  /** Every server's enabled switch, state, tools and backoff, plus the summary line (pushed by main). */
  overview: ServersOverview | null;
  /** Latest progress per operation id, while its call runs. */
  callProgress: Record<string, CallProgressView>;
  /** The server whose details the Servers view shows (null: the list); kept while the person visits other views. */
  openServerId: string | null;
  openServer(serverId: string | null): void;
  /** Turns a server on (connects now and at every launch) or off. Throws ContractError. */
  setServerEnabled(serverId: string, enabled: boolean): Promise<void>;
  /** Disconnects a server, forgets its retries and connects it again. Throws ContractError. */
  restartServer(serverId: string): Promise<void>;
  servers: ServerView[];
  keychainProblem: string | null;
  settingsProblem: string | null;
  /** Connection state per `connectionKey`. */
  connections: Record<string, ConnectionView | { serverId: string; accountId: string; status: ConnectionStatusView }>;
  /** Tools per `connectionKey`, as the connected server lists them. */
  tools: Record<string, ToolView[]>;
  /** serverId → the account "Use in chats" made the one chats use, since this window opened. */
  chatAccounts: Record<string, string>;
  /** Captured stderr/notes per `connectionKey`. */
  logs: Record<string, LogLineView[]>;
  serversError: ShownError | null;
  /** Re-reads servers:list and connections:status. Never throws; failures land in `serversError`. */
  refreshServers(): Promise<void>;
  /** Subscribes to the servers/connections events; returns the unsubscribe function. */
  watchServers(): () => void;
  /** Adds a server; secrets go to the keychain in the same request and are not kept. Throws ContractError. */
  addServer(definition: ServerDraft, secrets: SecretInput[], accountLabel?: string): Promise<ServerView>;
  /** Replaces a server's definition (id kept). Throws ContractError. */
  editServer(serverId: string, definition: ServerDraft, secrets: SecretInput[], accountId?: string): Promise<ServerView>;
  removeServer(serverId: string): Promise<void>;
  addAccount(serverId: string, label: string, secrets: SecretInput[]): Promise<void>;
  renameAccount(accountId: string, label: string): Promise<void>;
  removeAccount(accountId: string): Promise<void>;
  /** Makes an account the one a conversation uses (null: every conversation without a choice of its own). */
  switchAccount(conversationId: string | null, serverId: string, accountId: string): Promise<void>;
  /** Stores one secret in the keychain (the value is not kept). */
  setSecret(serverId: string, accountId: string, name: string, value: string): Promise<void>;
  clearSecret(serverId: string, accountId: string, name: string): Promise<void>;
  connect(serverId: string, accountId: string): Promise<void>;
  disconnect(serverId: string, accountId: string): Promise<void>;
  loadTools(serverId: string, accountId: string): Promise<void>;
  loadLogs(serverId: string, accountId: string): Promise<void>;
  /** Asks main to show its native open dialog for `source` and previews the file chosen there. */
  importPreview(request: { source: ImportPreview['source'] }): Promise<ImportPreview>;
  importServers(previewId: string, entryIds: string[], decisions: SecretDecision[]): Promise<ServerView[]>;
}

/**
 * Creates the servers slice.
 *
 * Why the actions re-read instead of patching: main is the owner, so after any change the cache is
 * replaced with what main now reports (and `servers:changed` does the same for changes made
 * elsewhere, e.g. an import in another window).
 */
export const createServersSlice: SliceCreator<ServersSlice> = ({ api }) => (set, get) => {
  const guard = async (work: () => Promise<void>) => {
    try {
      await work();
      set({ serversError: null });
    } catch (error) {
      set({ serversError: toShownError(error) });
    }
  };
  const refreshConnections = async () => {
    const { connections } = await unwrap(api().connections.status({}));
    const next: ServersSlice['connections'] = {};
    for (const c of connections) next[connectionKey(c.serverId, c.accountId)] = c;
    set({ connections: next });
  };
  const setStatus = (serverId: string, accountId: string, status: ConnectionStatusView) => {
    const key = connectionKey(serverId, accountId);
    const previous = get().connections[key];
    set({ connections: { ...get().connections, [key]: { ...(previous ?? { serverId, accountId }), status } } });
  };
  const refreshOverview = async () => set({ overview: await unwrap(api().servers.overview({})) });
  return {
    overview: null,
    callProgress: {},
    openServerId: null,
    openServer: (openServerId) => set({ openServerId }),
    async setServerEnabled(serverId, enabled) {
      await unwrap(api().servers.setEnabled({ serverId, enabled }));
      await refreshOverview();
    },
    async restartServer(serverId) {
      await unwrap(api().servers.restart({ serverId }));
      await refreshOverview();
    },
    servers: [],
    keychainProblem: null,
    settingsProblem: null,
    connections: {},
    tools: {},
    chatAccounts: {},
    logs: {},
    serversError: null,
    refreshServers: () =>
      guard(async () => {
        const list = await unwrap(api().servers.list({}));
        set({ servers: list.servers, keychainProblem: list.keychainProblem, settingsProblem: list.settingsProblem });
        await refreshConnections();
        await refreshOverview();
      }),
    watchServers() {
      try {
        const w = api();
        const offs = [
          w.servers.onChanged(() => void get().refreshServers()),
          w.connections.onStatusChanged(({ serverId, accountId, status }) => {
            setStatus(serverId, accountId, status);
            if (status.state === 'connected') void guard(() => get().loadTools(serverId, accountId));
            if (status.state === 'disconnected') {
              const { [connectionKey(serverId, accountId)]: _gone, ...rest } = get().tools;
              set({ tools: rest });
            }
          }),
          w.connections.onToolsChanged(({ serverId, accountId }) => void guard(() => get().loadTools(serverId, accountId))),
          w.servers.onOverviewChanged((overview) => set({ overview })),
          w.connections.onProgress(({ operationId, progress, total, message }) => {
            const next = { ...get().callProgress, [operationId]: { progress, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) } };
            // Only running calls need theirs: keep the latest few hundred, so a day of calls does not pile up.
            const ids = Object.keys(next);
            for (const id of ids.slice(0, Math.max(0, ids.length - 200))) delete next[id];
            set({ callProgress: next });
          }),
        ];
        return () => offs.forEach((off) => off());
      } catch (error) {
        set({ serversError: toShownError(error) });
        return () => {};
      }
    },
    async addServer(definition, secrets, accountLabel) {
      const view = await unwrap(api().servers.add({ definition, secrets, ...(accountLabel ? { accountLabel } : {}) }));
      // A server just added opens in its details: the next thing a person does is connect or check it.
      set({ openServerId: view.definition.id });
      await get().refreshServers();
      return view;
    },
    async editServer(serverId, definition, secrets, accountId) {
      const view = await unwrap(api().servers.edit({ serverId, definition, secrets, ...(accountId ? { accountId } : {}) }));
      await get().refreshServers();
      return view;
    },
    async removeServer(serverId) {
      await unwrap(api().servers.remove({ serverId }));
      await get().refreshServers();
    },
    async addAccount(serverId, label, secrets) {
      await unwrap(api().accounts.add({ serverId, label, secrets }));
      await get().refreshServers();
    },
    async renameAccount(accountId, label) {
      await unwrap(api().accounts.rename({ accountId, label }));
      await get().refreshServers();
    },
    async removeAccount(accountId) {
      await unwrap(api().accounts.remove({ accountId }));
      await get().refreshServers();
    },
    async switchAccount(conversationId, serverId, accountId) {
      await unwrap(api().accounts.switch({ conversationId, serverId, accountId }));
      if (conversationId === null) set((s) => ({ chatAccounts: { ...s.chatAccounts, [serverId]: accountId } }));
    },
    async setSecret(serverId, accountId, name, value) {
      await unwrap(api().secrets.set({ serverId, accountId, name, value }));
      await get().refreshServers();
    },
    async clearSecret(serverId, accountId, name) {
      await unwrap(api().secrets.clear({ serverId, accountId, name }));
      await get().refreshServers();
    },
    async connect(serverId, accountId) {
      setStatus(serverId, accountId, { state: 'connecting', attempt: 1 });
      try {
        const view = await unwrap(api().connections.connect({ serverId, accountId }));
        set({ connections: { ...get().connections, [connectionKey(serverId, accountId)]: view } });
        if (view.status.state === 'connected') await get().loadTools(serverId, accountId);
      } finally {
        await get().loadLogs(serverId, accountId).catch(() => undefined);
      }
    },
    async disconnect(serverId, accountId) {
      await unwrap(api().connections.disconnect({ serverId, accountId }));
      await refreshConnections();
    },
    async loadTools(serverId, accountId) {
      const { tools } = await unwrap(api().connections.listTools({ serverId, accountId }));
      set({ tools: { ...get().tools, [connectionKey(serverId, accountId)]: tools } });
    },
    async loadLogs(serverId, accountId) {
      const { lines } = await unwrap(api().connections.logs({ serverId, accountId, limit: 500 }));
      set({ logs: { ...get().logs, [connectionKey(serverId, accountId)]: lines } });
    },
    importPreview: (request) => unwrap(api().servers.importPreview(request)),
    async importServers(previewId, entryIds, decisions) {
      const { servers } = await unwrap(api().servers.import({ previewId, entryIds, decisions }));
      await get().refreshServers();
      return servers;
    },
  };
};
