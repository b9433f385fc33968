/**
 * The `connections:*` contract handlers and event forwarding, over a ConnectionManager.
 *
 * This is the one place connection-layer data is shaped for the renderer, so it is where
 * server-written text is sanitized for display and where nothing but the contract's fields
 * leave (the dispatcher parses responses again, stripping anything extra).
 */
import type { Handlers } from '../dispatch';
import type { CoreEvents } from '../events';
import { WardenError } from '../../../shared/result';
import type { ConnectionManager, ConnectionSnapshot } from './connection-manager';
import type { ConnectionStatus } from './connection';
import { displayStrings, sanitizeForDisplay, sanitizeServerText, sanitizeJsonText } from '../text/sanitize';

type ConnectionChannel = 'connections:connect' | 'connections:disconnect' | 'connections:status' | 'connections:list-tools' | 'connections:logs';

/**
 * Handlers for every `connections:*` channel.
 *
 * Why: app-core spreads these into its handler table; keeping them here keeps the shaping and
 * sanitizing rules next to the connection layer they describe.
 */
export function connectionHandlers(manager: ConnectionManager): Pick<Handlers, ConnectionChannel> {
  return {
    'connections:connect': async ({ serverId, accountId }) => {
      await manager.connect(serverId, accountId);
      const view = manager.snapshot(serverId).find((s) => s.accountId === accountId);
      if (!view) throw new WardenError('INTERNAL', `connections:connect: no state for ${serverId}/${accountId}`);
      return connectionView(view);
    },
    'connections:disconnect': async ({ serverId, accountId }) => {
      await manager.disconnect(serverId, accountId);
      return {};
    },
    'connections:status': ({ serverId }) => ({ connections: manager.snapshot(serverId).map(connectionView) }),
    'connections:list-tools': ({ serverId, accountId }) => {
      const connection = manager.connection(serverId, accountId);
      if (!connection || connection.status.state !== 'connected') {
        throw new WardenError('NOT_CONNECTED', `${serverId}/${accountId} is not connected`);
      }
      return {
        tools: manager.discoveredTools(serverId, accountId).map((t) => {
          const annotations = t.annotations ? displayStrings(t.annotations, 256) : undefined;
          const title = t.title !== undefined ? sanitizeForDisplay(t.title) : undefined;
          // The description was read for orders from its raw text where it was listed (hidden text included).
          const flags = [...new Set([...(t.descriptionFlags ?? []), ...flagsOf([t.title, annotations?.title])])];
          return {
            serverId: t.serverId,
            accountId: t.accountId,
            name: sanitizeForDisplay(t.name),
            ...(title !== undefined ? { title } : {}),
            ...(t.displayDescription !== undefined ? { description: t.displayDescription } : {}),
            inputSchema: sanitizeJsonText(t.inputSchema) as Record<string, unknown>,
            ...(t.outputSchema ? { outputSchema: sanitizeJsonText(t.outputSchema) as Record<string, unknown> } : {}),
            ...(annotations ? { annotations } : {}),
            ...(flags.length > 0 ? { flags } : {}),
            ...(t.unusable !== undefined ? { unusable: t.unusable } : {}),
            contractHash: t.contractHash,
          };
        }),
      };
    },
    'connections:logs': ({ serverId, accountId, afterSeq, limit }) => {
      const { lines, dropped } = manager.logLines(serverId, accountId, afterSeq ?? 0, limit);
      return { lines: lines.map((l) => ({ ...l, text: sanitizeForDisplay(l.text) })), dropped };
    },
  };
}

/** A status with every server-influenced string sanitized. */
function statusView(status: ConnectionStatus): ConnectionStatus {
  switch (status.state) {
    case 'error':
    case 'auth_required':
      return { ...status, reason: sanitizeForDisplay(status.reason) };
    default:
      return status;
  }
}

function connectionView(s: ConnectionSnapshot) {
  const flags = s.instructions !== undefined ? flagsOf([s.instructions]) : [];
  return { ...s, status: statusView(s.status), ...(flags.length > 0 ? { instructionsFlags: flags } : {}) };
}

/**
 * Why a server's texts read like instructions to an AI model, in plain words, each reason once.
 *
 * Why in main: the same patterns flag results (gate/result-display.ts), and the renderer only shows
 * what it is sent.
 */
function flagsOf(texts: ReadonlyArray<unknown>): string[] {
  const reasons = new Set<string>();
  for (const text of texts) if (typeof text === 'string') for (const r of sanitizeServerText(text, { flag: true }).flags) reasons.add(r);
  return [...reasons];
}

/**
 * Forwards manager events to the contract's `connections:*` events.
 *
 * Why: the renderer keeps a cache of connection state; these events keep it current without
 * polling. Returns an unsubscribe function for shutdown.
 */
export function bindConnectionEvents(manager: ConnectionManager, events: CoreEvents): () => void {
  const offs = [
    manager.on('status', (serverId, accountId, status) => events.emit('connections:status-changed', { serverId, accountId, status: statusView(status) })),
    manager.on('progress', (operationId, target, p) =>
      events.emit('connections:progress', {
        serverId: target.serverId,
        accountId: target.accountId,
        toolName: sanitizeForDisplay(target.toolName),
        operationId,
        progress: p.progress,
        ...(p.total !== undefined ? { total: p.total } : {}),
        ...(p.message !== undefined ? { message: sanitizeForDisplay(p.message) } : {}),
      }),
    ),
    manager.on('toolsChanged', (c) =>
      events.emit('connections:tools-changed', {
        serverId: c.serverId,
        accountId: c.accountId,
        trigger: c.trigger,
        added: c.added.map(sanitizeForDisplay),
        removed: c.removed.map(sanitizeForDisplay),
        changed: c.changed.map((x) => ({ name: sanitizeForDisplay(x.name), fields: x.fields })),
        instructionsChanged: c.instructionsChanged !== null,
      }),
    ),
  ];
  return () => offs.forEach((off) => off());
}
