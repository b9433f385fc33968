/**
 * A hostile server asks for a secret in a form written to slip past the judge: a neutral field
 * under a message asking for a token, a field name like `auth` or `sk`, a look-alike Cyrillic
 * letter, a zero-width space that the display removes, another language. The real core
 * (createCore) with the real stdio fixture (test/fixtures/servers/phishing-form.ts), driven
 * through the `elicitation:*` contract as the window does. A clear request for a secret never
 * reaches the person; one that only might be is shown with a warning, and the answer leaves only
 * after the person confirms it again in the native step.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import type { AnswerConfirmation } from '../../../electron/core/elicitation/elicitation';
import { MemoryJournal } from '../../../electron/core/memory-journal';
import { systemClock } from '../../../electron/core/ports';
import type { ElicitationQuestion, RefusedFormView } from '../../../shared/contract/elicitation';
import type { ServerView } from '../../../shared/domain/servers';
import type { ChannelName } from '../../../shared/ipc';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';
import { MapSecretStore, stdioFixture, waitUntil } from '../mcp/helpers';

class ListableMapSecretStore extends MapSecretStore {
  async keys(prefix: string): Promise<string[]> {
    return [...this.values.keys()].filter((k) => k.startsWith(prefix));
  }
}

let core: WardenCore | undefined;
afterEach(async () => {
  await core?.close();
  core = undefined;
});

/** A core whose native "send this answer?" step records what it showed and answers `send.value` (absent: the host has no such step). */
async function start(send?: { value: boolean }) {
  const confirmations: AnswerConfirmation[] = [];
  core = createCore({
    confirmServerChange: confirmEveryServerChange,
    version: 'test',
    journal: new MemoryJournal(systemClock),
    servers: { secrets: new ListableMapSecretStore() },
    gate: { prompter: { prompt: async () => 'approve' } },
    connections: { reconnect: { maxAttempts: 0 } },
    elicitor: { url: async () => 'cancel', ...(send ? { confirmAnswer: async (c: AnswerConfirmation) => (confirmations.push(c), send.value) } : {}) },
  });
  const call = async <T,>(channel: ChannelName, request: unknown): Promise<T> => {
    const r = await dispatch(core!.handlers, channel, request);
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
    return r.value as T;
  };
  const def = stdioFixture('ignored', 'phishing-form');
  const added = await call<ServerView>('servers:add', { definition: { name: 'Notes helper', transport: 'stdio', command: def.command, args: def.args, env: [] }, accountLabel: 'Personal' });
  const key = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
  expect((await call<{ status: { state: string } }>('connections:connect', key)).status.state).toBe('connected');
  for (const toolName of ['ask_form', 'ask_name']) await call('permissions:set', { scope: 'tool', ...key, toolName, mode: 'allow' });
  const ask = (form: string) => core!.gate.gate.request({ source: 'user', ...key, toolName: 'ask_form', arguments: { form } });
  const askName = () => core!.gate.gate.request({ source: 'user', ...key, toolName: 'ask_name', arguments: {} });
  return { call, ask, askName, confirmations };
}

describe('a form that asks for a secret in disguise never reaches the person', () => {
  it.each([
    ['message-token', 'value', /the form's message asks for a secret \(“token”\)/],
    ['key-not-username', 'login', /its description asks for a secret \(“api key”\)/],
    ['named-auth', 'auth', /its name asks for a secret \(“auth”\)/],
    ['named-cookie', 'cookie', /its name asks for a secret \(“cookie”\)/],
    ['named-sk', 'sk', /its name asks for a secret \(“sk”\)/],
    ['sms-code', 'value', /its title asks for a secret \(“code from the sms”\)/],
    ['cyrillic-password', 'answer', /its title asks for a secret \(“password”\)/],
    ['german-password', 'antwort', /its title asks for a secret \(“passwort”\)/],
    ['zero-width-title', 'field1', /its title asks for a secret \(“password”\)/],
    ['unassigned-in-message', 'answer', /the form's message asks for a secret \(“password”\)/],
    ['tag-in-title', 'field1', /its title asks for a secret \(“password”\)/],
    ['escape-in-title', 'field1', /its title asks for a secret \(“password”\)/],
    ['spanish-password', 'clave', /its (name|title) asks for a secret \(“(clave|contrasena)”\)/],
    // The notice names the field as the server wrote it; the judge read it as "password".
    ['fullwidth-name', '\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44', /its name asks for a secret \(“password”\)/],
  ])('%s is refused unseen, the person is warned, and the server is told why', async (form, field, why) => {
    const { call, ask } = await start({ value: true });
    const running = ask(form);
    // Whichever comes first: the server's call ends (the form was refused), or the form is shown to the person.
    let ended = false;
    void running.finally(() => (ended = true));
    let shown = false;
    while (!ended && !shown) {
      shown = (await call<{ questions: unknown[] }>('elicitation:list', {})).questions.length > 0;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(shown ? 'the form was shown to the person' : 'refused').toBe('refused');
    const op = await running;
    expect(JSON.stringify(op.result)).toContain('Warden refused the form');
    const { questions, refused } = await call<{ questions: unknown[]; refused: RefusedFormView[] }>('elicitation:list', {});
    expect(questions).toEqual([]);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.field).toBe(field);
    expect(refused[0]!.why).toMatch(why);
  });
});

describe('a form that only might ask for a secret is shown with a warning, and its answer leaves only after the native step', () => {
  async function pending(call: Awaited<ReturnType<typeof start>>['call']): Promise<ElicitationQuestion> {
    return waitUntil(async () => (await call<{ questions: ElicitationQuestion[] }>('elicitation:list', {})).questions[0], 30_000, 'a question to be waiting');
  }

  it.each([
    ['bare-code', { code: 'A1B2' }, /the field “code” might ask for a one-time code/],
    ['names-a-key', { name: 'laptop' }, /the form's message mentions a secret \(“api key”\)/],
  ])('%s: the form warns, the native step warns again, and refusing there sends nothing', async (form, content, warning) => {
    const send = { value: false };
    const { call, ask, confirmations } = await start(send);
    const running = ask(form);
    const question = await pending(call);
    expect(question.warning).toMatch(warning);
    await call('elicitation:answer', { questionId: question.questionId, action: 'accept', content });
    const op = await running;
    expect(confirmations).toHaveLength(1);
    expect(confirmations[0]).toMatchObject({ serverLabel: 'Notes helper', accountLabel: 'Personal', warning: question.warning });
    expect(confirmations[0]!.fields).toEqual(Object.keys(content));
    // The value itself is not repeated in the native step.
    expect(JSON.stringify(confirmations)).not.toContain(Object.values(content)[0]);
    expect(JSON.stringify(op.result)).toContain('{\\"action\\":\\"decline\\"}');
    expect(JSON.stringify(op.result)).not.toContain(Object.values(content)[0]);

    send.value = true;
    const again = ask(form);
    const second = await pending(call);
    await call('elicitation:answer', { questionId: second.questionId, action: 'accept', content });
    expect(JSON.stringify((await again).result)).toContain(Object.values(content)[0]);
  });

  it('a host with no native step never sends a doubtful answer', async () => {
    const { call, ask } = await start();
    const running = ask('bare-code');
    const question = await pending(call);
    await call('elicitation:answer', { questionId: question.questionId, action: 'accept', content: { code: 'A1B2' } });
    const text = JSON.stringify((await running).result);
    expect(text).toContain('{\\"action\\":\\"cancel\\"}');
    expect(text).not.toContain('A1B2');
  });

  it('an ordinary form is shown without a warning and sent without a second step', async () => {
    const { call, askName, confirmations } = await start({ value: false });
    const running = askName();
    const question = await pending(call);
    expect(question.warning).toBeUndefined();
    await call('elicitation:answer', { questionId: question.questionId, action: 'accept', content: { name: 'Ada' } });
    expect(JSON.stringify((await running).result)).toContain('Ada');
    expect(confirmations).toEqual([]);
  });
});
