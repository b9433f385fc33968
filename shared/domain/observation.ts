/**
 * What Warden itself saw a tool call do, and the call's outcome in four words.
 *
 * A server's "Done." is a claim made by the component being checked. An observation is evidence
 * Warden gathered with its own authority (it read the file itself, it read the demo's notes store),
 * kept apart from the claim (the server's result, in the call's outcome record) and from the
 * request and approval, which it never changes. Each observation says where its evidence came
 * from (`source`) and how far it reaches (`scope`), in words a person reads, so that "this file
 * only; other files not checked" is never read as "nothing else changed".
 *
 * `observedOutcome` is the one function that turns a call's recorded outcome and its observation
 * into the four words every surface uses; nothing else may decide them.
 */
import { z } from 'zod';

/** What was at a path at one moment, as Warden read it (not following the final symlink for `type`). */
export const PathFacts = z.object({
  exists: z.boolean(),
  /** What the path itself is: a symlink is reported as one, and `resolved` says where it leads. */
  type: z.enum(['file', 'dir', 'symlink', 'other']).nullable(),
  /** Where the path leads with every symlink followed (null when it does not exist or cannot be resolved). */
  resolved: z.string().nullable(),
  /** Of what the path leads to: bytes, SHA-256 of a file's bytes, modification time (ms since epoch). */
  size: z.number().int().nonnegative().nullable(),
  sha256: z.string().nullable(),
  mtimeMs: z.number().nullable(),
  /** Why Warden could not read it (permission, too large to hash), when it could not. */
  unreadable: z.string().nullable().default(null),
});
export type PathFacts = z.infer<typeof PathFacts>;

/** One path a call named, before and after it ran, and whether it holds what was approved. */
export const ObservedTarget = z.object({
  /** The argument it came from (`path`, `destination`), as the policy's path definition found it. */
  field: z.string(),
  /** Where the server opens it (relative paths from its working folder). */
  path: z.string(),
  before: PathFacts.nullable(),
  after: PathFacts,
  /**
   * What the approved arguments say should be there after the call: `content` (these bytes, by
   * SHA-256), `directory`, `absent` (moved away), or `none` (the tool's effect on it is not known).
   */
  expected: z.enum(['content', 'directory', 'absent', 'none']),
  expectedSha256: z.string().nullable().default(null),
  /** True, false, or null when there was nothing to compare with. */
  matches: z.boolean().nullable(),
  /** Whether anything Warden reads of it differs between before and after. */
  changed: z.boolean(),
  /** Set when the path led somewhere else after the call than before (a symlink swapped). */
  retargeted: z.boolean(),
  /** What was seen, in one sentence. */
  words: z.string(),
});
export type ObservedTarget = z.infer<typeof ObservedTarget>;

/** `op.observation`: what Warden saw a sent call do, journaled after its outcome record. */
export const OpObservation = z.object({
  operationId: z.string().min(1).max(200),
  observer: z.enum(['local-files', 'demo-notes']),
  /** Who looked, in words ("Warden read the files itself"). */
  source: z.string(),
  /** How far the evidence reaches, in words ("this file only; other files not checked"). */
  scope: z.string(),
  targets: z.array(ObservedTarget),
  /** Other entries of the folders Warden listed that changed while the call ran (names, as paths). */
  otherChanges: z.array(z.string()).default([]),
  /** Whether Warden listed the targets' folders (only then can it say nothing else there changed). */
  foldersChecked: z.boolean(),
  /** The whole observation in words a person and the model read. */
  summary: z.string(),
  /** Milliseconds Warden spent observing (before and after together). */
  tookMs: z.number().nonnegative(),
  at: z.number(),
});
export type OpObservation = z.infer<typeof OpObservation>;

/** The four outcomes of a sent call. */
export const OBSERVED_OUTCOMES = ['done_and_observed', 'done_as_claimed', 'observed_different', 'outcome_unknown'] as const;
export type ObservedOutcome = (typeof OBSERVED_OUTCOMES)[number];

/** The four outcomes in the words every surface shows. */
export const OBSERVED_OUTCOME_WORDS: Readonly<Record<ObservedOutcome, string>> = {
  done_and_observed: 'done and observed',
  done_as_claimed: 'done as claimed',
  observed_different: 'observed different',
  outcome_unknown: 'outcome unknown',
};

/**
 * A sent call's outcome in four words, from its recorded state and what Warden observed.
 *
 * Null for a call that was never sent or that the server said failed with nothing seen changed:
 * those have their own words (denied, declined, failed), and none of the four would be true.
 *
 * - `observed different` wins over everything: a path that led elsewhere after the call, another
 *   entry of a checked folder that changed, a target that does not hold what was approved after
 *   the server said it was done, or anything changed after the server said it failed or never
 *   answered when it is not what was approved.
 * - `outcome unknown`: the server never answered, and nothing seen contradicts the request.
 * - `done and observed`: the server said done and every target Warden could judge holds what was
 *   approved (at least one could be judged).
 * - `done as claimed`: the server said done and Warden could judge nothing (no observer, or no
 *   known effect to compare with).
 */
export function observedOutcome(state: string, observation: OpObservation | null | undefined): ObservedOutcome | null {
  if (state !== 'succeeded' && state !== 'failed' && state !== 'outcome_unknown') return null;
  const targets = observation?.targets ?? [];
  const elsewhere = observation !== null && observation !== undefined && (observation.otherChanges.length > 0 || targets.some((t) => t.retargeted));
  if (elsewhere) return 'observed_different';
  if (state === 'succeeded') {
    if (targets.some((t) => t.matches === false)) return 'observed_different';
    return targets.some((t) => t.matches === true) ? 'done_and_observed' : 'done_as_claimed';
  }
  // Not answered, or answered with a failure: a change is expected only if it is what was approved.
  const strayChange = targets.some((t) => t.changed && t.matches !== true);
  if (state === 'outcome_unknown') return strayChange ? 'observed_different' : 'outcome_unknown';
  return targets.some((t) => t.changed) ? 'observed_different' : null;
}
