/**
 * The native dialogs of sampling: a server asking the person's model for a completion.
 *
 * Owned by main, written from the core's question (Warden's names for the server and account, the
 * server's text already cleaned by the core's sanitizer). Deny is the default and the cancel
 * button, so Enter, Escape, closing the dialog and a dialog that cannot be shown all deny. A
 * message box cannot scroll, so long text is cut with a line saying how much is not shown, and
 * "Show full text" pages through all of it before the question comes back.
 *
 * The server's text keeps its line breaks (a transcript must read as written), so every line of it
 * starts with SERVER_MARK: no line the server writes ("Warning: none", Warden's closing sentence)
 * can read as one of Warden's, which never start with it. Warden's warnings come before the
 * server's text, where no length of it can push them out of view.
 */
import type { BrowserWindow, MessageBoxOptions } from 'electron';
import { dialogLine, makeHiddenVisible } from '../../shared/display';
import { confirmedInDialog, showOverWindow, type ShowMessageBox } from './dialogs';
import type { SamplingAsker, SamplingChoice, SamplingLoosening, SamplingQuestion, SamplingReplyReview } from '../core/sampling/sampling-service';

/** Buttons of the question, in order: Deny is the default and the cancel answer. */
export const SAMPLING_BUTTONS = ['Deny', 'Allow once', 'Always for this server and account'] as const;
export const SHOW_FULL_TEXT = 'Show full text';
const CHOICES: readonly SamplingChoice[] = ['deny', 'once', 'always'];
/** Most characters of the server's text shown in the question itself. */
export const QUESTION_TEXT_CHARS = 3000;
/** Characters per page of "Show full text". */
export const PAGE_CHARS = 6000;
/** Buttons of the reply review: Don't send is the default. */
export const REVIEW_BUTTONS = ["Don't send", 'Send to the server'] as const;

/** What starts every line of text a server or model wrote, and no line of Warden's. */
export const SERVER_MARK = '│ ';

const oneLine = dialogLine;
/** Text written by someone else, hidden characters made visible, each line marked as theirs (only `\n` survives makeHiddenVisible). */
const quoted = (text: string) =>
  makeHiddenVisible(text)
    .split('\n')
    .map((line) => SERVER_MARK + line)
    .join('\n');

/** All of the server's text of one question, as the pages show it. */
export function fullText(question: SamplingQuestion): string {
  return [`System prompt (written by the server):`, question.systemPrompt ? quoted(question.systemPrompt) : '(none)', '', 'Messages (written by the server):', quoted(question.transcript)].join('\n');
}

/** The question's message box; `cut` is whether the text was too long to show whole. */
export function samplingDialogOptions(question: SamplingQuestion): { options: MessageBoxOptions; cut: boolean } {
  const text = fullText(question);
  const cut = text.length > QUESTION_TEXT_CHARS;
  const shown = cut ? `${text.slice(0, QUESTION_TEXT_CHARS)}\n… (${text.length - QUESTION_TEXT_CHARS} more characters not shown: choose "${SHOW_FULL_TEXT}" to read all of it)` : text;
  const asked = question.requestedMaxTokens > question.maxTokens ? ` (the server asked for ${question.requestedMaxTokens}; Warden allows at most ${question.maxTokens})` : '';
  return {
    cut,
    options: {
      type: 'warning',
      title: 'Warden: let a server use your model?',
      message: `${oneLine(question.serverName)} (${oneLine(question.accountName)}) asks your model for a reply`,
      detail: [
        `Server: ${oneLine(question.serverName)}`,
        `Account: ${oneLine(question.accountName)}`,
        `Model that would answer: ${oneLine(question.modelLabel)}`,
        `Max tokens: ${question.maxTokens}${asked}`,
        question.tools.length
          ? `Tools the server offers the model: ${question.tools.map(oneLine).join(', ')} (if the model asks for one, the request goes back to the server, which runs it; Warden runs nothing)`
          : 'Tools: none',
        ...(question.warnings.length ? ['', ...question.warnings.map((w) => `Warning: ${oneLine(w)}`)] : []),
        '',
        shown,
        '',
        'The reply goes back to the server. Nothing in this request can approve or run a tool in Warden.',
      ].join('\n'),
      buttons: [...SAMPLING_BUTTONS, ...(cut ? [SHOW_FULL_TEXT] : [])],
      defaultId: 0,
      cancelId: 0,
      noLink: true,
      normalizeAccessKeys: false,
    },
  };
}

/** The confirmation of a looser setting (turning sampling on, Always, no more reply review). */
export function samplingLooseningOptions(change: SamplingLoosening): MessageBoxOptions {
  const who = `${oneLine(change.serverName)} (${oneLine(change.accountName)})`;
  const what =
    change.to.mode === 'always'
      ? `Let ${who} use your model whenever it asks, without asking you each time?`
      : change.to.mode === 'ask' && change.from.mode === 'off'
        ? `Let ${who} ask to use your model?`
        : `Stop showing you ${who}'s replies before they are sent?`;
  return {
    type: 'warning',
    title: 'Warden: allow a server to use your model?',
    message: what,
    detail: [
      'The server writes what your model is sent, including a system prompt, and gets the reply. It uses your model account, and what it costs.',
      change.to.mode === 'always' ? 'Requests are still held to the per-minute and per-hour limits, and are recorded in Activity.' : 'Each request is shown to you first; Deny is the default.',
      'Nothing a server sends this way can approve or run a tool in Warden.',
    ].join('\n\n'),
    buttons: ['Cancel', change.to.mode === 'always' ? 'Always allow' : 'Allow'],
    defaultId: 0,
    cancelId: 0,
    noLink: true,
    normalizeAccessKeys: false,
  };
}

/** The reply review's message box. */
export function reviewDialogOptions(review: SamplingReplyReview): { options: MessageBoxOptions; text: string; cut: boolean } {
  const text = [review.text ? quoted(review.text) : '(no text)', ...review.toolUses.map((u) => `Asks the server to run: ${oneLine(u)}`)].join('\n');
  const cut = text.length > QUESTION_TEXT_CHARS;
  return {
    text,
    cut,
    options: {
      type: 'question',
      title: "Warden: send the model's reply to the server?",
      message: `Send this reply from ${oneLine(review.modelLabel)} to ${oneLine(review.serverName)} (${oneLine(review.accountName)})?`,
      detail: cut ? `${text.slice(0, QUESTION_TEXT_CHARS)}\n… (${text.length - QUESTION_TEXT_CHARS} more characters not shown: choose "${SHOW_FULL_TEXT}" to read all of it)` : text,
      buttons: [...REVIEW_BUTTONS, ...(cut ? [SHOW_FULL_TEXT] : [])],
      defaultId: 0,
      cancelId: 0,
      noLink: true,
      normalizeAccessKeys: false,
    },
  };
}

/**
 * Pages of `text` for "Show full text", each at most PAGE_CHARS. A line cut at the end of a page
 * goes on at the top of the next with its SERVER_MARK again: a page that began inside a line
 * would begin without it, and could open with words that read as Warden's.
 */
export function pages(text: string): string[] {
  const out: string[] = [];
  let page: string | null = null;
  for (const line of text.split('\n')) {
    const mark = line.startsWith(SERVER_MARK) ? SERVER_MARK : '';
    let rest = line;
    for (;;) {
      const room = PAGE_CHARS - (page === null ? 0 : page.length + 1);
      if (rest.length <= room) {
        page = page === null ? rest : `${page}\n${rest}`;
        break;
      }
      // An empty page always has room for more than the mark, so every round moves on.
      if (room > mark.length) {
        const head = rest.slice(0, room);
        page = page === null ? head : `${page}\n${head}`;
        rest = mark + rest.slice(room);
      }
      out.push(page!);
      page = null;
    }
  }
  out.push(page ?? '');
  return out;
}

/** The core's SamplingAsker as native dialogs over Warden's window. */
export function createSamplingAsker(getWindow: () => BrowserWindow | null, show: ShowMessageBox = showOverWindow): SamplingAsker {
  /** Shows every page of `text`; "Back to the question" ends early. */
  const showPages = async (title: string, text: string, signal: AbortSignal) => {
    const all = pages(text);
    for (let i = 0; i < all.length && !signal.aborted; i++) {
      const last = i === all.length - 1;
      const { response } = await show(getWindow(), {
        type: 'info',
        title,
        message: `Part ${i + 1} of ${all.length}`,
        detail: all[i],
        buttons: last ? ['Back to the question'] : ['Back to the question', 'Next part'],
        defaultId: last ? 0 : 1,
        cancelId: 0,
        noLink: true,
        normalizeAccessKeys: false,
        signal,
      });
      if (response !== 1) return;
    }
  };
  /** Asks until the person picks one of `answers` (index into it), showing pages in between. */
  const askUntilAnswered = async (options: MessageBoxOptions, cut: boolean, text: string, signal: AbortSignal, answers: number): Promise<number> => {
    for (;;) {
      if (signal.aborted) return 0;
      const { response } = await show(getWindow(), { ...options, signal });
      if (cut && response === answers) {
        await showPages(`${options.title} (full text)`, text, signal);
        continue;
      }
      return response >= 0 && response < answers && !signal.aborted ? response : 0;
    }
  };
  return {
    async ask(question, signal) {
      try {
        const { options, cut } = samplingDialogOptions(question);
        const index = await askUntilAnswered(options, cut, fullText(question), signal, SAMPLING_BUTTONS.length);
        return CHOICES[index] ?? 'deny';
      } catch {
        return 'deny';
      }
    },
    confirmLoosening: (change) => confirmedInDialog(getWindow, show, samplingLooseningOptions(change)),
    async reviewReply(review, signal) {
      try {
        const { options, cut, text } = reviewDialogOptions(review);
        return (await askUntilAnswered(options, cut, text, signal, REVIEW_BUTTONS.length)) === 1;
      } catch {
        return false;
      }
    },
  };
}
