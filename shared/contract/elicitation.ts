/**
 * Contract entries for questions servers ask the person (form-mode elicitation), shown in the app.
 *
 * An answer here only answers the server that asked: it is looked up among pending questions and
 * nowhere else, so it can never approve a tool call, grant a permission or resolve anything the
 * gate holds. Every text in a question is the server's (sanitized), shown labelled as such.
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';

/** A value a person may give a form field (the spec's restricted schema: primitives and lists of choices). */
const AnswerValue = z.union([z.string().max(64 * 1024), z.number(), z.boolean(), z.array(z.string().max(4096)).max(200)]);

/** A pending question, labelled with Warden's names for the server and account. */
export const ElicitationQuestion = z.object({
  questionId: z.string(),
  serverLabel: z.string(),
  accountLabel: z.string(),
  /** Untrusted: the server's words. */
  message: z.string(),
  /** The requested schema (untrusted texts sanitized), to generate the form from. */
  schema: z.record(z.string(), z.unknown()),
  /** What was wrong with the last answer, when the person is asked again. */
  problem: z.string().optional(),
  /** Set when the form might ask for a secret: why, in words. Sending its answer needs a second, native confirmation. */
  warning: z.string().optional(),
  askedAt: z.number(),
});
export type ElicitationQuestion = z.infer<typeof ElicitationQuestion>;

/** A form refused before the person saw it, because it asked for a secret. */
export const RefusedForm = z.object({
  noticeId: z.string(),
  serverLabel: z.string(),
  accountLabel: z.string(),
  /** Untrusted: the server's words. */
  message: z.string(),
  field: z.string(),
  why: z.string(),
  at: z.number(),
});
export type RefusedFormView = z.infer<typeof RefusedForm>;

export const elicitationChannels = defineChannels({
  'elicitation:list': {
    doc: 'Questions servers are asking the person (forms), and forms refused because they asked for a secret.',
    request: z.object({}).strict(),
    response: z.object({ questions: z.array(ElicitationQuestion), refused: z.array(RefusedForm) }),
  },
  'elicitation:answer': {
    doc: "Answers one server's question: accept (with the form's values), decline or cancel. Answers only that question.",
    request: z
      .object({
        questionId: z.string().min(1).max(200),
        action: z.enum(['accept', 'decline', 'cancel']),
        content: z.record(z.string().max(256), AnswerValue).optional(),
      })
      .strict(),
    response: z.object({ answered: z.literal(true) }),
  },
  'elicitation:dismiss': {
    doc: 'Removes the warning about a refused form.',
    request: z.object({ noticeId: z.string().min(1).max(200) }).strict(),
    response: z.object({ dismissed: z.boolean() }),
  },
});

export const elicitationEvents = defineEvents({
  'elicitation:changed': {
    doc: 'A question was asked, answered or withdrawn, or a form was refused.',
    payload: z.object({ questions: z.number().int().nonnegative(), refused: z.number().int().nonnegative() }),
  },
});
