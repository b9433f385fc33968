/**
 * An SDK `Transport` that wraps another and lets the connection see messages at the transport's
 * edge: each outgoing message just before it is handed on, and each incoming message in arrival
 * order, synchronously, before the SDK's `Protocol` sees it (or instead of it).
 *
 * Why a decorator and not hooks patched onto the live transport: the SDK's `Client` is given this
 * object and installs its callbacks on it, so nothing ever replaces a method of a transport
 * another party also holds; every part of the interface (start, send, close, the three callbacks,
 * `sessionId`, `setProtocolVersion`) is forwarded as it is.
 *
 * Why synchronously: the SDK settles a response the moment it arrives but hands notifications
 * to their handlers a microtask later. A `tools/list_changed` notice followed by an answer must
 * mark the listing as not current before that answer is delivered, and progress sent just before
 * an answer must reach its call while the call still listens.
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';

/** What the connection does at the edge. */
export interface TransportTap {
  /** Told about each outgoing message just before the inner transport gets it. */
  beforeSend?(message: JSONRPCMessage): void;
  /**
   * Told about each incoming message first; returns true when it handled the message (the SDK
   * then never sees it). Only consulted once `listen` has been called.
   */
  intercept?(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): boolean;
}

export class TappedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private intercepting = false;

  constructor(
    /** The transport that really moves the bytes (stdio process, HTTP, in-memory). */
    readonly inner: Transport,
    private readonly tap: TransportTap,
  ) {
    // Installed once, before `start`: the inner transport calls whatever the SDK set on us, read
    // at the moment of each event, so a callback the SDK replaces later is the one that runs.
    inner.onmessage = (message, extra) => {
      if (this.intercepting && this.tap.intercept?.(message, extra) === true) return;
      this.onmessage?.(message, extra);
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => this.onclose?.();
  }

  /**
   * Starts consulting `intercept` for incoming messages. Until then every message goes to the
   * SDK unseen (the initialize handshake is the SDK's alone).
   */
  listen(): void {
    this.intercepting = true;
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.tap.beforeSend?.(message);
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }
}
