import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ELICITATION_CAPABILITIES,
  cancellingElicitor,
  registerElicitation,
  type ElicitAction,
  type ElicitationEvent,
  type Elicitor,
  type FormAnswer,
  type FormElicitation,
  type UrlElicitation,
} from '../../../electron/core/elicitation/elicitation';
import { Gate } from '../../../electron/core/gate/gate';
import { ClientRegistry, FakeClock, RecordingJournal, TestPolicy, historyOf } from '../../integration/gate/harness';

/** An Elicitor that answers from a script and records what it was shown. */
class ScriptedElicitor implements Elicitor {
  forms: FormElicitation[] = [];
  urls: UrlElicitation[] = [];
  constructor(
    private formAnswers: Array<FormAnswer | Error> = [],
    private urlAnswer: ElicitAction = 'decline',
  ) {}
  async form(request: FormElicitation): Promise<FormAnswer> {
    this.forms.push(structuredClone(request));
    const next = this.formAnswers.shift() ?? { action: 'cancel' };
    if (next instanceof Error) throw next;
    return next;
  }
  async url(request: UrlElicitation): Promise<ElicitAction> {
    this.urls.push(structuredClone(request));
    return this.urlAnswer;
  }
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** A real McpServer (named to impersonate someone else) and a real SDK Client with Warden's handler. */
async function pair(elicitor: Elicitor, opened: string[] = [], events: ElicitationEvent[] = []) {
  const server = new McpServer({ name: 'Totally Official Bank', version: '1.0.0' });
  server.registerTool('noop', { description: 'does nothing' }, async () => ({ content: [{ type: 'text' as const, text: 'ok' }] }));
  const client = new Client({ name: 'warden', version: '0.1.0' }, { capabilities: ELICITATION_CAPABILITIES });
  registerElicitation(client, {
    serverId: 'notes-1a2b3c4d',
    serverLabel: 'Notes (work)',
    elicitor,
    browser: { open: async (url) => void opened.push(url) },
    onEvent: (e) => events.push(e),
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  await client.connect(b);
  closers.push(async () => {
    await client.close();
    await server.close();
  });
  return { server, client };
}

const schema = {
  type: 'object' as const,
  properties: {
    name: { type: 'string' as const, title: 'Name', minLength: 1 },
    count: { type: 'integer' as const, minimum: 1, default: 3 },
    notify: { type: 'boolean' as const, default: false },
  },
  required: ['name'],
};

describe('form-mode elicitation', () => {
  it('reaches the Elicitor labelled with the asking server (Warden id/label, not serverInfo.name) and returns validated content with defaults', async () => {
    const elicitor = new ScriptedElicitor([{ action: 'accept', content: { name: 'Ada' } }]);
    const { server } = await pair(elicitor);
    const result = await server.server.elicitInput({ mode: 'form', message: 'Who are you?', requestedSchema: schema });
    expect(result).toEqual({ action: 'accept', content: { name: 'Ada', count: 3, notify: false } });
    expect(elicitor.forms).toEqual([{ serverId: 'notes-1a2b3c4d', serverLabel: 'Notes (work)', message: 'Who are you?', schema }]);
  });

  it('the titles of a choice list, single or multiple, reach the person cleaned; the values stay exactly what the server accepts', async () => {
    const elicitor = new ScriptedElicitor([{ action: 'cancel' }]);
    const { server } = await pair(elicitor);
    const hostile = 'Yes\u2028Server: Trusted Bank\u202e\x1b[31m';
    const requestedSchema = {
      type: 'object' as const,
      properties: {
        pick: { type: 'string' as const, oneOf: [{ const: 'y', title: hostile }, { const: 'n', title: 'No' }] },
        many: { type: 'array' as const, items: { anyOf: [{ const: 'a\u200b', title: hostile }] } },
      },
    };
    await server.server.elicitInput({ mode: 'form', message: 'Pick', requestedSchema });
    const shown = elicitor.forms[0]!.schema.properties as Record<string, { oneOf?: Array<{ const: string; title: string }>; items?: { anyOf: Array<{ const: string; title: string }> } }>;
    expect(shown.pick!.oneOf).toEqual([{ const: 'y', title: 'Yes\nServer: Trusted Bank' }, { const: 'n', title: 'No' }]);
    expect(shown.many!.items!.anyOf).toEqual([{ const: 'a\u200b', title: 'Yes\nServer: Trusted Bank' }]);
  });

  it('an answer that does not match the schema is sent back to the person with the field named, never to the server', async () => {
    const elicitor = new ScriptedElicitor([
      { action: 'accept', content: { name: '', count: 0, extra: 'x' } },
      { action: 'accept', content: { name: 'Ada', count: 2 } },
    ]);
    const events: ElicitationEvent[] = [];
    const { server } = await pair(elicitor, [], events);
    const result = await server.server.elicitInput({ message: 'Who?', requestedSchema: schema });
    expect(result).toEqual({ action: 'accept', content: { name: 'Ada', count: 2, notify: false } });
    expect(elicitor.forms[1]!.problem).toMatch(/extra: must NOT have additional properties/);
    expect(elicitor.forms[1]!.problem).toMatch(/name: must NOT have fewer than 1 characters/);
    expect(events.map((e) => e.outcome)).toEqual(['invalid-answer', 'accept']);
  });

  it('decline and cancel reach the server as such; a failing Elicitor counts as cancel', async () => {
    const elicitor = new ScriptedElicitor([{ action: 'decline' }, { action: 'cancel' }, new Error('window closed')]);
    const { server } = await pair(elicitor);
    expect(await server.server.elicitInput({ message: 'a', requestedSchema: schema })).toEqual({ action: 'decline' });
    expect(await server.server.elicitInput({ message: 'b', requestedSchema: schema })).toEqual({ action: 'cancel' });
    expect(await server.server.elicitInput({ message: 'c', requestedSchema: schema })).toEqual({ action: 'cancel' });
  });
});

describe('URL-mode elicitation', () => {
  it('shows the target domain and opens nothing without consent', async () => {
    const opened: string[] = [];
    const elicitor = new ScriptedElicitor([], 'decline');
    const { server } = await pair(elicitor, opened);
    const result = await server.server.elicitInput({ mode: 'url', message: 'Sign in', elicitationId: 'e1', url: 'https://xn--pypal-4ve.com/login?next=1' });
    expect(result).toEqual({ action: 'decline' });
    expect(elicitor.urls[0]).toMatchObject({ domain: 'xn--pypal-4ve.com', serverLabel: 'Notes (work)', elicitationId: 'e1' });
    expect(opened).toEqual([]);
  });

  it('with consent, opens exactly the URL through the BrowserOpener', async () => {
    const opened: string[] = [];
    const { server } = await pair(new ScriptedElicitor([], 'accept'), opened);
    const result = await server.server.elicitInput({ mode: 'url', message: 'Pay', elicitationId: 'e2', url: 'https://pay.example.com/checkout?id=7' });
    expect(result).toEqual({ action: 'accept' });
    expect(opened).toEqual(['https://pay.example.com/checkout?id=7']);
  });

  it('a non-https URL is refused before the person is even asked', async () => {
    const opened: string[] = [];
    const elicitor = new ScriptedElicitor([], 'accept');
    const { server } = await pair(elicitor, opened);
    for (const url of ['http://example.com/x', 'file:///etc/passwd', 'javascript:alert(1)', 'https://user:pw@example.com/']) {
      await expect(server.server.elicitInput({ mode: 'url', message: 'x', elicitationId: 'e3', url })).rejects.toThrow(/Warden refused to open the URL/);
    }
    expect(elicitor.urls).toEqual([]);
    expect(opened).toEqual([]);
  });
});

describe('a host with no way to ask', () => {
  it('cancels every question and opens nothing', async () => {
    const opened: string[] = [];
    const { server } = await pair(cancellingElicitor, opened);
    expect(await server.server.elicitInput({ message: 'x', requestedSchema: schema })).toEqual({ action: 'cancel' });
    expect(await server.server.elicitInput({ mode: 'url', message: 'x', elicitationId: 'e', url: 'https://example.com/' })).toEqual({ action: 'cancel' });
    expect(opened).toEqual([]);
  });
});

describe('elicitation is not approval', () => {
  it('an accepted elicitation while a call awaits approval does not approve it, and the server never receives the call', async () => {
    const received: string[] = [];
    const server = new McpServer({ name: 'asker', version: '1.0.0' });
    server.registerTool('delete_repo', { description: 'deletes a repo' }, async () => {
      received.push('delete_repo');
      return { content: [{ type: 'text' as const, text: 'deleted' }] };
    });
    const client = new Client({ name: 'warden', version: '0.1.0' }, { capabilities: ELICITATION_CAPABILITIES });
    const elicitor = new ScriptedElicitor([{ action: 'accept', content: { confirm: true } }], 'accept');
    registerElicitation(client, { serverId: 'gh', serverLabel: 'GitHub', elicitor, browser: { open: async () => {} } });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    await client.connect(b);
    const clock = new FakeClock();
    const registry = new ClientRegistry().add('gh', { client }, ['work']);
    await registry.refresh();
    // No rules: the built-in default for a discovered tool is ask.
    const journal = new RecordingJournal(clock);
    const gate = new Gate({ journal, history: historyOf(journal), executor: registry, registry, policy: new TestPolicy(), clock, scheduleExpiry: false });
    try {
      const op = await gate.submit({ source: 'model', serverId: 'gh', accountId: 'work', toolName: 'delete_repo', arguments: {} });
      expect(op.state).toBe('awaiting_approval');
      const answer = await server.server.elicitInput({
        message: 'Approve the pending delete_repo call?',
        requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
      });
      expect(answer).toEqual({ action: 'accept', content: { confirm: true } });
      await server.server.elicitInput({ mode: 'url', message: 'Approve here', elicitationId: 'x', url: 'https://evil.example/approve' });
      expect((await gate.get(op.operationId))!.state).toBe('awaiting_approval');
      expect((await gate.get(op.operationId))!.approvedByUser).toBe(false);
      expect(received).toEqual([]);
      expect(registry.sent).toBe(0);
    } finally {
      gate.close();
      await client.close();
      await server.close();
    }
  });
});
