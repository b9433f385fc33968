/**
 * The typed IPC contract: every channel and every main→renderer event Warden has, declared once.
 *
 * Domains declare their entries in `shared/contract/<domain>.ts`; this file is the one map that
 * everything is generated from: the main-process binder, the preload's `window.warden`, the
 * renderer's typed client and the browser test host. There is deliberately no "approve" channel:
 * approving happens only in a native dialog owned by main.
 */
import type { z } from 'zod';
import { channelPath, eventPath, type ChannelSpec, type EventSpec } from './contract-kit';
import type { Result } from './result';
import { coreChannels, coreEvents } from './contract/core';
import { activityChannels } from './contract/activity';
import { serversChannels, serversEvents } from './contract/servers';
import { approvalsChannels, approvalsEvents } from './contract/approvals';
import { operationsChannels, operationsEvents } from './contract/operations';
import { permissionsChannels, permissionsEvents } from './contract/permissions';
import { connectionsChannels, connectionsEvents } from './contract/connections';
import { runChannels } from './contract/run';
import { authChannels } from './contract/auth';
import { modelsChannels, modelsEvents } from './contract/models';
import { appEvents, themeChannels, themeEvents } from './contract/app';
import { chatChannels, chatEvents } from './contract/chat';
import { accountsTrustChannels } from './contract/accounts';
import { settingsChannels, settingsEvents } from './contract/settings';
import { serverDataChannels, serverDataEvents } from './contract/server-data';
import { elicitationChannels, elicitationEvents } from './contract/elicitation';
import { rootsChannels } from './contract/roots';
import { samplingChannels } from './contract/sampling';

/** Every request/response channel. */
export const channels = {
  ...coreChannels,
  ...activityChannels,
  ...serversChannels,
  ...approvalsChannels,
  ...operationsChannels,
  ...permissionsChannels,
  ...connectionsChannels,
  ...runChannels,
  ...authChannels,
  ...modelsChannels,
  ...themeChannels,
  ...chatChannels,
  ...accountsTrustChannels,
  ...settingsChannels,
  ...serverDataChannels,
  ...elicitationChannels,
  ...rootsChannels,
  ...samplingChannels,
} as const satisfies Record<string, ChannelSpec>;

/** Every main→renderer event. */
export const events = {
  ...coreEvents,
  ...serversEvents,
  ...approvalsEvents,
  ...operationsEvents,
  ...permissionsEvents,
  ...connectionsEvents,
  ...modelsEvents,
  ...appEvents,
  ...themeEvents,
  ...chatEvents,
  ...settingsEvents,
  ...serverDataEvents,
  ...elicitationEvents,
} as const satisfies Record<string, EventSpec>;

export type Channels = typeof channels;
export type ChannelName = keyof Channels;
export type EventName = keyof typeof events;
/** The parsed request type of a channel. */
export type RequestOf<C extends ChannelName> = z.infer<Channels[C]['request']>;
/** The response type of a channel. */
export type ResponseOf<C extends ChannelName> = z.infer<Channels[C]['response']>;
/** The payload type of an event. */
export type PayloadOf<E extends EventName> = z.infer<(typeof events)[E]['payload']>;

/** Names of every channel, in declaration order. */
export const channelNames = Object.keys(channels) as ChannelName[];
/** Names of every event, in declaration order. */
export const eventNames = Object.keys(events) as EventName[];

/** The IPC channel used to deliver events to the renderer (one per event name, prefixed). */
export function eventWireChannel(event: EventName): string {
  return `event:${event}`;
}

/** True if `name` is a declared channel (guards lookups with untrusted names). */
export function isChannelName(name: unknown): name is ChannelName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(channels, name);
}

// ---- window.warden, generated from the contract -------------------------------------------

type Split<S extends string> = S extends `${infer D}:${infer V}` ? [D, V] : never;
type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
type DomainOf<S extends string> = Split<S>[0];
type MethodOf<S extends string> = Camel<Split<S>[1]>;
type EventMethodOf<S extends string> = `on${Capitalize<Camel<Split<S>[1]>>}`;

/** The shape of `window.warden`: `warden.<domain>.<verb>(request)` and `warden.<domain>.on<Event>(cb)`. */
export type WardenApi = {
  [D in DomainOf<ChannelName> | DomainOf<EventName>]: {
    [C in ChannelName as DomainOf<C> extends D ? MethodOf<C> : never]: (
      request: z.input<Channels[C]['request']>,
    ) => Promise<Result<ResponseOf<C>>>;
  } & {
    [E in EventName as DomainOf<E> extends D ? EventMethodOf<E> : never]: (
      listener: (payload: PayloadOf<E>) => void,
    ) => () => void;
  };
};

/** Sends one request over whatever transport the host has; never throws, returns a Result. */
export type Invoker = (channel: ChannelName, request: unknown) => Promise<Result<unknown>>;
/** Subscribes to one event over the host's transport; returns an unsubscribe function. */
export type Subscriber = (event: EventName, listener: (payload: unknown) => void) => () => void;

/**
 * Builds `window.warden` from the contract: one named function per channel and per event.
 *
 * Used by the real preload (over `ipcRenderer`) and by the browser test stand-in (over a
 * WebSocket), so both expose exactly the same names. No generic `invoke(channel)` is exposed.
 */
export function createWardenApi(invoke: Invoker, subscribe: Subscriber): WardenApi {
  const api: Record<string, Record<string, unknown>> = {};
  for (const channel of channelNames) {
    const [domain, method] = channelPath(channel);
    (api[domain] ??= {})[method] = (request: unknown) => invoke(channel, request ?? {});
  }
  for (const event of eventNames) {
    const [domain, method] = eventPath(event);
    (api[domain] ??= {})[method] = (listener: (payload: unknown) => void) => {
      if (typeof listener !== 'function') throw new TypeError(`${event}: listener must be a function`);
      return subscribe(event, listener);
    };
  }
  return api as WardenApi;
}

/** Every function path `window.warden` must have, e.g. `core.status`, `core.onStatusChanged`. */
export function expectedApiPaths(): string[] {
  return [...channelNames.map((c) => channelPath(c).join('.')), ...eventNames.map((e) => eventPath(e).join('.'))].sort();
}
