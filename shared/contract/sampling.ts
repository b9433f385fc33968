/**
 * Contract entries for sampling: whether a server may ask the person's model for completions.
 *
 * A window can read the setting and ask to change it, but a change that loosens it (turning it
 * on, Always, or no longer reviewing replies) is applied only after the person confirms it in a
 * native dialog owned by main: a compromised window cannot turn sampling on by itself.
 */
import { z } from 'zod';
import { defineChannels } from '../contract-kit';

const Key = { serverId: z.string().min(1).max(200), accountId: z.string().min(1).max(200) };
export const SamplingMode = z.enum(['off', 'ask', 'always']);
export type SamplingMode = z.infer<typeof SamplingMode>;
export const SamplingSettingView = z.object({
  mode: SamplingMode,
  /** Show the model's reply to the person before it goes back to the server. */
  reviewReplies: z.boolean(),
});
export type SamplingSettingView = z.infer<typeof SamplingSettingView>;
export const SamplingLimitsView = z.object({
  requestsPerMinute: z.number(),
  maxTokensPerRequest: z.number(),
  tokensPerHour: z.number(),
});
const SamplingState = z.object({
  setting: SamplingSettingView,
  limits: SamplingLimitsView,
  /** The model that would answer (the person's), in words; null when none can be used. */
  model: z.string().nullable(),
});

export const samplingChannels = defineChannels({
  'sampling:get': {
    doc: 'Whether one server and account may ask for model completions (off, ask, always), its limits and the model that would answer.',
    request: z.object(Key).strict(),
    response: SamplingState,
  },
  'sampling:set': {
    doc: 'Changes the sampling setting of one server and account; a looser setting takes effect only after the person confirms it in a native dialog (applied is false if they did not).',
    request: z.object({ ...Key, mode: SamplingMode, reviewReplies: z.boolean() }).strict(),
    response: SamplingState.extend({ applied: z.boolean() }),
  },
});
