/**
 * Form questions from servers, held for the app to show: the form-mode half of the Elicitor port.
 *
 * A question waits here until the person answers it in the app (`elicitation:answer`), the server
 * withdraws it (its request is cancelled or the connection ends), or too many questions from one
 * server are already waiting (a server cannot flood the person: the extra ones are cancelled).
 * Answers are looked up among these questions only: nothing here can reach the gate, so an answer
 * — even one a compromised window makes up — only ever answers the server that asked.
 */
import { randomUUID } from 'node:crypto';
import { WardenError } from '../../../shared/result';
import type { ElicitationQuestion, RefusedFormView } from '../../../shared/contract/elicitation';
import type { Handlers } from '../dispatch';
import type { CoreEvents } from '../events';
import type { Clock } from '../ports';
import type { FormAnswer, FormElicitation, RefusedForm } from './elicitation';

/** Questions one (server, account) may have waiting at once; more are cancelled unseen. */
const MAX_PENDING_PER_SERVER = 3;
/** Refused-form warnings kept until dismissed (the oldest go first). */
const MAX_NOTICES = 20;

interface Pending {
  view: ElicitationQuestion;
  serverKey: string;
  resolve: (answer: FormAnswer) => void;
}

export interface FormQuestionsOptions {
  events: CoreEvents;
  clock: Clock;
  /** Warden's names for a server and an account (never the server's self-declared name). */
  names: { server: (serverId: string) => string | undefined; account: (serverId: string, accountId: string) => string | undefined };
}

export class FormQuestions {
  private readonly pending = new Map<string, Pending>();
  private notices: RefusedFormView[] = [];

  constructor(private readonly options: FormQuestionsOptions) {}

  /** Shows `request` in the app; resolves with the person's answer, or cancel when the server withdraws it. */
  ask(request: FormElicitation, signal: AbortSignal): Promise<FormAnswer> {
    if (signal.aborted) return Promise.resolve({ action: 'cancel' });
    const serverKey = `${request.serverId}\u0000${request.accountId ?? ''}`;
    const waiting = [...this.pending.values()].filter((p) => p.serverKey === serverKey).length;
    if (waiting >= MAX_PENDING_PER_SERVER) return Promise.resolve({ action: 'cancel' });
    const questionId = `question-${randomUUID()}`;
    const labels = this.labelsOf(request.serverId, request.serverLabel, request.accountId);
    return new Promise<FormAnswer>((resolve) => {
      const done = (answer: FormAnswer) => {
        if (!this.pending.delete(questionId)) return;
        signal.removeEventListener('abort', withdraw);
        this.changed();
        resolve(answer);
      };
      const withdraw = () => done({ action: 'cancel' });
      signal.addEventListener('abort', withdraw, { once: true });
      this.pending.set(questionId, {
        serverKey,
        resolve: done,
        view: {
          questionId,
          ...labels,
          message: request.message,
          schema: request.schema as unknown as Record<string, unknown>,
          ...(request.problem !== undefined ? { problem: request.problem } : {}),
          ...(request.warning !== undefined ? { warning: request.warning } : {}),
          askedAt: this.options.clock.now(),
        },
      });
      this.changed();
    });
  }

  /** Keeps a warning for the person: a server asked for a secret in a form, and Warden refused it unseen. */
  refused(notice: RefusedForm): void {
    const view: RefusedFormView = {
      noticeId: `notice-${randomUUID()}`,
      ...this.labelsOf(notice.serverId, notice.serverLabel, notice.accountId),
      message: notice.message,
      field: notice.field,
      why: notice.why,
      at: this.options.clock.now(),
    };
    this.notices = [...this.notices, view].slice(-MAX_NOTICES);
    this.changed();
  }

  list(): { questions: ElicitationQuestion[]; refused: RefusedFormView[] } {
    return { questions: [...this.pending.values()].map((p) => p.view), refused: [...this.notices] };
  }

  /** Answers one pending question; anything else (an operation's id, a made-up id) is refused. */
  answer(questionId: string, answer: FormAnswer): void {
    const pending = this.pending.get(questionId);
    if (!pending) throw new WardenError('NOT_FOUND', 'That question is no longer waiting for an answer: the server may have withdrawn it, or it was already answered.');
    pending.resolve(answer);
  }

  dismiss(noticeId: string): boolean {
    const before = this.notices.length;
    this.notices = this.notices.filter((n) => n.noticeId !== noticeId);
    if (this.notices.length === before) return false;
    this.changed();
    return true;
  }

  /** Warden's names for a server and an account, for anything that shows a question (never the server's self-declared name). */
  labelsOf(serverId: string, serverLabel: string, accountId: string | undefined): { serverLabel: string; accountLabel: string } {
    const server = this.options.names.server(serverId) ?? serverLabel;
    const account = accountId === undefined ? 'Default' : (this.options.names.account(serverId, accountId) ?? 'an account no longer configured');
    return { serverLabel: server, accountLabel: account };
  }

  private changed(): void {
    this.options.events.emit('elicitation:changed', { questions: this.pending.size, refused: this.notices.length });
  }
}

/** The elicitation channels over `questions`. */
export function elicitationHandlers(questions: FormQuestions): Pick<Handlers, 'elicitation:list' | 'elicitation:answer' | 'elicitation:dismiss'> {
  return {
    'elicitation:list': () => questions.list(),
    'elicitation:answer': ({ questionId, action, content }) => {
      questions.answer(questionId, action === 'accept' ? { action, content: content ?? {} } : { action });
      return { answered: true as const };
    },
    'elicitation:dismiss': ({ noticeId }) => ({ dismissed: questions.dismiss(noticeId) }),
  };
}
