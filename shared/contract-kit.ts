/**
 * Building blocks for the typed IPC contract: how a channel and an event are declared, and how a
 * channel name maps to the named function the preload exposes.
 *
 * Pure: no node:*, no electron, no DOM. Both the real preload and the browser test stand-in build
 * `window.warden` from these functions, so the two cannot drift.
 */
import type { z } from 'zod';

/** A request/response channel: `domain:verb`, with zod schemas for both directions. */
export interface ChannelSpec<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  /** One line for humans: what the channel does. */
  doc: string;
  request: Req;
  response: Res;
}

/** A main→renderer event: `domain:event-name`, with a zod schema for its payload. */
export interface EventSpec<P extends z.ZodType = z.ZodType> {
  doc: string;
  payload: P;
}

const CHANNEL_NAME = /^[a-z][a-z0-9]*:[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** Declares channels, checking names at load time so a typo fails on start, not on first use. */
export function defineChannels<const T extends Record<string, ChannelSpec>>(channels: T): T {
  for (const name of Object.keys(channels)) assertName(name, 'channel');
  return channels;
}

/** Declares events, with the same name rule as channels. */
export function defineEvents<const T extends Record<string, EventSpec>>(events: T): T {
  for (const name of Object.keys(events)) assertName(name, 'event');
  return events;
}

function assertName(name: string, what: string): void {
  if (!CHANNEL_NAME.test(name)) {
    throw new Error(`Invalid ${what} name "${name}": expected "domain:verb" in kebab-case`);
  }
}

/** `permissions:set-mode` → `setMode`. */
export function camel(kebab: string): string {
  return kebab.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `servers:add` → `['servers', 'add']`: the path of the function on `window.warden`. */
export function channelPath(channel: string): [domain: string, method: string] {
  const [domain, verb] = channel.split(':') as [string, string];
  return [domain, camel(verb)];
}

/** `core:status-changed` → `['core', 'onStatusChanged']`. */
export function eventPath(event: string): [domain: string, method: string] {
  const [domain, name] = event.split(':') as [string, string];
  const c = camel(name);
  return [domain, `on${c[0]!.toUpperCase()}${c.slice(1)}`];
}
