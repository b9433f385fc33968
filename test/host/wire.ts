/**
 * The browser test host's wire format, shared by the host (Node) and the stand-in preload
 * (browser). Test code only: nothing here ships.
 *
 * Request  {id, channel, request}  →  response {id, result: Result}
 * Event    {event, payload}         (pushed by the host for every core event)
 */
import type { Result } from '../../shared/result';

/** Path of the WebSocket endpoint on the host's own origin. */
export const SOCKET_PATH = '/__warden-test-host/socket';
/** Path the stand-in preload is served from (its text carries the per-host token). */
export const STANDIN_PATH = '/__warden-test-host/standin.js';
/** The WebSocket subprotocol the host speaks; it is the one the host selects in the handshake. */
export const SUBPROTOCOL = 'warden-test-host.v1';
/**
 * The token travels as a second offered subprotocol, `warden-token.<hex>`, because a browser
 * WebSocket cannot set headers and the token must not appear in any URL. The host never selects it.
 */
export const TOKEN_PROTOCOL_PREFIX = 'warden-token.';

/** What the host hands the stand-in (inside the served script, never in the page URL). */
export interface StandinConfig {
  socketUrl: string;
  token: string;
}

/** One contract call from the page. `id` is chosen by the caller and echoed back. */
export interface WireRequest {
  id: number | string;
  channel: string;
  request: unknown;
}

/** The answer to one call; `id` is null when the message was too malformed to have one. */
export interface WireResponse {
  id: number | string | null;
  result: Result<unknown>;
}

/** A core event pushed to every connected page. */
export interface WireEvent {
  event: string;
  payload: unknown;
}
