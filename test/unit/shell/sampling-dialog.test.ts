/**
 * Main's sampling dialogs (a server asking the person's model for a reply), with the mocked
 * electron module: Deny is the default and the cancel answer, names not ids, the exact text with
 * hidden characters made visible, long text cut with a line saying how much, and "Show full text"
 * paging through all of it before the question comes back.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => import('../../helpers/electron-mock').then((m) => m.electronModule));

import { electronMock, resetElectronMock } from '../../helpers/electron-mock';
import type { MessageBoxOptions } from 'electron';
import type { SamplingQuestion } from '../../../electron/core/sampling/sampling-service';

beforeEach(() => resetElectronMock());

const question: SamplingQuestion = {
  serverName: 'Summaries\u202E',
  accountName: 'Work',
  modelLabel: 'claude-fixture from Anthropic (work)',
  maxTokens: 4096,
  requestedMaxTokens: 50_000,
  systemPrompt: 'Be brief.',
  transcript: 'Server (as the user): Summarise the report.',
  tools: ['search'],
  warnings: ['it tells the model to ignore earlier instructions'],
};
const signal = () => new AbortController().signal;
const answering = (...responses: number[]) => {
  const shown: MessageBoxOptions[] = [];
  const show = async (_w: unknown, options: MessageBoxOptions) => {
    shown.push(options);
    return { response: responses.shift() ?? 0, checkboxChecked: false };
  };
  return { shown, show };
};

describe('the sampling question', () => {
  it('Deny is the default and the cancel answer; it names server, account, model, max tokens, tools and shows the exact text', async () => {
    const { samplingDialogOptions, SAMPLING_BUTTONS } = await import('../../../electron/main/sampling-dialog');
    const { options, cut } = samplingDialogOptions(question);
    expect(cut).toBe(false);
    expect(options.buttons).toEqual(['Deny', 'Allow once', 'Always for this server and account']);
    expect(SAMPLING_BUTTONS[0]).toBe('Deny');
    expect(options.defaultId).toBe(0);
    expect(options.cancelId).toBe(0);
    expect(options.message).toBe('Summaries\\u202e (Work) asks your model for a reply');
    expect(options.detail).toContain('Model that would answer: claude-fixture from Anthropic (work)');
    expect(options.detail).toContain('Max tokens: 4096 (the server asked for 50000; Warden allows at most 4096)');
    expect(options.detail).toContain('Tools the server offers the model: search (if the model asks for one, the request goes back to the server, which runs it; Warden runs nothing)');
    expect(options.detail).toContain('System prompt (written by the server):\n│ Be brief.');
    expect(options.detail).toContain('Messages (written by the server):\n│ Server (as the user): Summarise the report.');
    expect(options.detail).toContain('Warning: it tells the model to ignore earlier instructions');
  });

  it('answers: Escape/close and Deny deny, the second and third buttons allow once and always, a failing dialog denies', async () => {
    const { createSamplingAsker } = await import('../../../electron/main/sampling-dialog');
    const { show } = answering(0, 1, 2, 7);
    const asker = createSamplingAsker(() => null, show);
    expect(await asker.ask(question, signal())).toBe('deny');
    expect(await asker.ask(question, signal())).toBe('once');
    expect(await asker.ask(question, signal())).toBe('always');
    expect(await asker.ask(question, signal())).toBe('deny');
    const broken = createSamplingAsker(() => null, async () => {
      throw new Error('no display');
    });
    expect(await broken.ask(question, signal())).toBe('deny');
    // A request the server withdrew is never allowed, even if a button was pressed after.
    const withdrawn = new AbortController();
    const late = createSamplingAsker(() => null, async () => {
      withdrawn.abort();
      return { response: 1, checkboxChecked: false };
    });
    expect(await late.ask(question, withdrawn.signal)).toBe('deny');
  });

  it('long text is cut with how much is not shown, and "Show full text" pages through all of it, then asks again', async () => {
    const { createSamplingAsker, samplingDialogOptions, fullText, PAGE_CHARS, QUESTION_TEXT_CHARS, SERVER_MARK } = await import('../../../electron/main/sampling-dialog');
    const long = { ...question, transcript: `Server (as the user): ${'x'.repeat(PAGE_CHARS * 2)}END` };
    const { options, cut } = samplingDialogOptions(long);
    expect(cut).toBe(true);
    const total = fullText(long).length;
    expect(options.detail).toContain(`… (${total - QUESTION_TEXT_CHARS} more characters not shown: choose "Show full text" to read all of it)`);
    expect(options.buttons).toEqual(['Deny', 'Allow once', 'Always for this server and account', 'Show full text']);
    // Show full text → part 1 (Next) → part 2 (Next) → part 3 (Back) → the question again → Allow once.
    const { shown, show } = answering(3, 1, 1, 0, 1);
    expect(await createSamplingAsker(() => null, show).ask(long, signal())).toBe('once');
    expect(shown.map((o) => o.message)).toEqual([options.message, 'Part 1 of 3', 'Part 2 of 3', 'Part 3 of 3', options.message]);
    // Pages break between lines, and each piece of a cut line of the server's starts with its mark again.
    const unmarked = (text: string) => text.replaceAll(SERVER_MARK, '').replaceAll('\n', '');
    expect(unmarked(shown.slice(1, 4).map((o) => o.detail).join(''))).toBe(unmarked(fullText(long)));
    for (const o of shown.slice(1, 4)) {
      for (const line of o.detail!.split('\n')) expect(line.startsWith(SERVER_MARK) || ['System prompt (written by the server):', 'Messages (written by the server):', ''].includes(line), line.slice(0, 40)).toBe(true);
    }
    expect(shown[3]!.buttons).toEqual(['Back to the question']);
  });

  it('is shown with dialog.showMessageBox over the window by default', async () => {
    const { createSamplingAsker } = await import('../../../electron/main/sampling-dialog');
    electronMock.dialog.showMessageBox.mockResolvedValueOnce({ response: 1, checkboxChecked: false });
    expect(await createSamplingAsker(() => null).ask(question, signal())).toBe('once');
    expect(electronMock.dialog.showMessageBox).toHaveBeenCalledTimes(1);
  });
});

describe('loosening and reply review', () => {
  it('turning sampling on or to Always is confirmed with Cancel the default; only the second button confirms', async () => {
    const { createSamplingAsker, samplingLooseningOptions } = await import('../../../electron/main/sampling-dialog');
    const change = { serverName: 'Summaries', accountName: 'Work', from: { mode: 'off' as const, reviewReplies: false }, to: { mode: 'always' as const, reviewReplies: false } };
    const o = samplingLooseningOptions(change);
    expect(o).toMatchObject({ defaultId: 0, cancelId: 0, buttons: ['Cancel', 'Always allow'] });
    expect(o.message).toBe('Let Summaries (Work) use your model whenever it asks, without asking you each time?');
    expect(samplingLooseningOptions({ ...change, to: { mode: 'ask', reviewReplies: false } }).message).toBe('Let Summaries (Work) ask to use your model?');
    const { show } = answering(1, 0, 2);
    const asker = createSamplingAsker(() => null, show);
    expect(await asker.confirmLoosening(change)).toBe(true);
    expect(await asker.confirmLoosening(change)).toBe(false);
    expect(await asker.confirmLoosening(change)).toBe(false);
  });

  it("a reply is sent to the server only with 'Send to the server'; Don't send is the default", async () => {
    const { createSamplingAsker, reviewDialogOptions } = await import('../../../electron/main/sampling-dialog');
    const review = { serverName: 'Summaries', accountName: 'Work', modelLabel: 'm from P', text: 'The summary.', toolUses: ['search with {"query":"x"}'] };
    const { options } = reviewDialogOptions(review);
    expect(options).toMatchObject({ defaultId: 0, cancelId: 0, buttons: ["Don't send", 'Send to the server'] });
    // The model's words are marked as not Warden's; Warden's line of what it asks for is not.
    expect(options.detail).toBe('│ The summary.\nAsks the server to run: search with {"query":"x"}');
    const { show } = answering(0, 1);
    const asker = createSamplingAsker(() => null, show);
    expect(await asker.reviewReply(review, signal())).toBe(false);
    expect(await asker.reviewReply(review, signal())).toBe(true);
  });
});
