/**
 * The TappedTransport decorator: everything of the SDK's `Transport` interface is forwarded as it
 * is, outgoing messages are seen just before they leave, and incoming ones are seen in arrival
 * order, synchronously, before the SDK's client gets them. The end-to-end guarantee built on that
 * order (a list_changed notice marks the listing before a later answer is delivered) is proved
 * through the real core in test/integration/mcp/relist-races.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { TappedTransport } from '../../../electron/core/mcp/tapped-transport';

/** A transport that records what is done to it and lets the test play the server. */
class RecordingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  sessionId: string | undefined = 'session-1';
  readonly calls: string[] = [];
  readonly sent: Array<{ message: JSONRPCMessage; options: TransportSendOptions | undefined }> = [];
  protocolVersion: string | undefined;
  async start(): Promise<void> {
    this.calls.push('start');
  }
  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.calls.push('send');
    this.sent.push({ message, options });
  }
  async close(): Promise<void> {
    this.calls.push('close');
    this.onclose?.();
  }
  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }
}

const notice = (method: string): JSONRPCMessage => ({ jsonrpc: '2.0', method });
const answer = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: {} });

describe('TappedTransport', () => {
  it('forwards start, send (with its options), close, sessionId and setProtocolVersion to the inner transport', async () => {
    const inner = new RecordingTransport();
    const seen: JSONRPCMessage[] = [];
    const tapped = new TappedTransport(inner, { beforeSend: (m) => seen.push(m) });
    await tapped.start();
    const message = notice('notifications/initialized');
    const options = { relatedRequestId: 7, resumptionToken: 'r' };
    await tapped.send(message, options);
    expect(inner.sent).toEqual([{ message, options }]);
    expect(seen).toEqual([message]);
    expect(tapped.sessionId).toBe('session-1');
    inner.sessionId = 'session-2';
    expect(tapped.sessionId).toBe('session-2');
    tapped.setProtocolVersion('2025-06-18');
    expect(inner.protocolVersion).toBe('2025-06-18');
    let closed = 0;
    tapped.onclose = () => closed++;
    await tapped.close();
    expect(inner.calls).toEqual(['start', 'send', 'close']);
    expect(closed).toBe(1);
  });

  it('sees an outgoing message before the inner transport gets it, and a failed send still rejects', async () => {
    const inner = new RecordingTransport();
    const order: string[] = [];
    inner.send = async () => {
      order.push('inner send');
      throw new Error('pipe closed');
    };
    const tapped = new TappedTransport(inner, { beforeSend: () => order.push('tap') });
    await expect(tapped.send(notice('x'))).rejects.toThrow('pipe closed');
    expect(order).toEqual(['tap', 'inner send']);
  });

  it('forwards errors and closes the inner transport reports, to whatever callback is set at that moment', () => {
    const inner = new RecordingTransport();
    const tapped = new TappedTransport(inner, {});
    const errors: string[] = [];
    tapped.onerror = () => errors.push('first');
    tapped.onerror = (e) => errors.push(`second: ${e.message}`);
    inner.onerror?.(new Error('boom'));
    let closed = 0;
    tapped.onclose = () => closed++;
    inner.onclose?.();
    expect(errors).toEqual(['second: boom']);
    expect(closed).toBe(1);
  });

  it('hands every incoming message (with its extra) to the client until listen(), then lets the tap take the ones it handles, in arrival order', () => {
    const inner = new RecordingTransport();
    const tapped: string[] = [];
    const delivered: Array<{ id: string; extra: MessageExtraInfo | undefined }> = [];
    const transport = new TappedTransport(inner, {
      intercept: (m) => {
        const name = 'method' in m ? m.method : `answer ${String((m as { id: number }).id)}`;
        tapped.push(name);
        return 'method' in m && m.method === 'notifications/tools/list_changed';
      },
    });
    transport.onmessage = (m, extra) => delivered.push({ id: 'method' in m ? m.method : `answer ${String((m as { id: number }).id)}`, extra });
    const extra = { authInfo: { token: 't', clientId: 'c', scopes: [] } };
    inner.onmessage?.(notice('notifications/tools/list_changed'), extra);
    expect(tapped).toEqual([]);
    expect(delivered).toEqual([{ id: 'notifications/tools/list_changed', extra }]);

    transport.listen();
    delivered.length = 0;
    inner.onmessage?.(notice('notifications/tools/list_changed'));
    inner.onmessage?.(answer(1), extra);
    inner.onmessage?.(notice('notifications/message'));
    expect(tapped).toEqual(['notifications/tools/list_changed', 'answer 1', 'notifications/message']);
    expect(delivered).toEqual([
      { id: 'answer 1', extra },
      { id: 'notifications/message', extra: undefined },
    ]);
  });

  it('a list_changed notice followed at once by an answer is seen before the SDK client settles that answer', async () => {
    const server = new McpServer({ name: 'order', version: '1.0.0' });
    server.registerTool('ping', { description: 'answers' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const order: string[] = [];
    const transport = new TappedTransport(clientSide, {
      intercept: (m) => {
        if ('method' in m && m.method === 'notifications/tools/list_changed') {
          order.push('list_changed seen');
          return true;
        }
        return false;
      },
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    transport.listen();
    // Where the SDK client takes each message over (it settles an answer right there).
    const deliver = transport.onmessage!;
    transport.onmessage = (m, extra) => {
      if ('result' in m) order.push('answer delivered to the client');
      deliver(m, extra);
    };
    // The server's notice and its answer to the call arrive back to back, as from one read.
    const send = serverSide.send.bind(serverSide);
    serverSide.send = async (message, options) => {
      // Synchronous back to back (the in-memory transport delivers within send): no turn between.
      if ('result' in message) void send(notice('notifications/tools/list_changed'));
      return send(message, options);
    };
    const result = client.callTool({ name: 'ping', arguments: {} }).then(() => order.push('answer settled'));
    await result;
    expect(order).toEqual(['list_changed seen', 'answer delivered to the client', 'answer settled']);
    await client.close();
    await server.close();
  });
});
