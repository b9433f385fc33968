/**
 * The one function that turns a call's recorded outcome and Warden's observation into the four
 * words every surface shows: every state, with no observation and with every combination of what
 * a target can be observed to be.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OBSERVED_OUTCOME_WORDS, observedOutcome, OpObservation, type ObservedTarget } from '../../../shared/domain/observation';
import { OperationState } from '../../../shared/domain/operations';

const OPERATION_STATES = OperationState.options;

const facts = { exists: true, type: 'file' as const, resolved: '/w/a.txt', size: 3, sha256: 'a'.repeat(64), mtimeMs: 1, unreadable: null };

function target(over: Partial<ObservedTarget>): ObservedTarget {
  return { field: 'path', path: '/w/a.txt', before: facts, after: facts, expected: 'content', expectedSha256: 'b'.repeat(64), matches: true, changed: true, retargeted: false, words: 'x', ...over };
}

function observation(targets: ObservedTarget[], otherChanges: string[] = []): OpObservation {
  return OpObservation.parse({ operationId: 'op', observer: 'local-files', source: 's', scope: 'this path only; other files not checked', targets, otherChanges, foldersChecked: otherChanges.length > 0, summary: 'x', tookMs: 1, at: 1 });
}

describe('observedOutcome: the four words of a sent call', () => {
  it('a call that was never sent has none of the four words, whatever is attached to it', () => {
    for (const state of OPERATION_STATES.filter((s) => s !== 'succeeded' && s !== 'failed' && s !== 'outcome_unknown')) {
      expect(observedOutcome(state, null)).toBeNull();
      expect(observedOutcome(state, observation([target({ matches: false })]))).toBeNull();
    }
  });

  it('with nothing observed: done as claimed, outcome unknown, or (for a failure) none', () => {
    expect(observedOutcome('succeeded', null)).toBe('done_as_claimed');
    expect(observedOutcome('succeeded', undefined)).toBe('done_as_claimed');
    expect(observedOutcome('outcome_unknown', null)).toBe('outcome_unknown');
    expect(observedOutcome('failed', null)).toBeNull();
  });

  it('a success whose every judged target holds what was approved is done and observed; one judged target is enough', () => {
    expect(observedOutcome('succeeded', observation([target({})]))).toBe('done_and_observed');
    expect(observedOutcome('succeeded', observation([target({}), target({ expected: 'none', matches: null })]))).toBe('done_and_observed');
  });

  it('a success nothing could be judged of is done as claimed, even with facts recorded', () => {
    expect(observedOutcome('succeeded', observation([]))).toBe('done_as_claimed');
    expect(observedOutcome('succeeded', observation([target({ expected: 'none', matches: null, changed: true })]))).toBe('done_as_claimed');
  });

  it('"Done." over a target that does not hold the approved content is observed different', () => {
    expect(observedOutcome('succeeded', observation([target({ matches: false, changed: false })]))).toBe('observed_different');
    expect(observedOutcome('succeeded', observation([target({}), target({ matches: false })]))).toBe('observed_different');
  });

  it('a path that led elsewhere after the call, or another entry of a checked folder that changed, is observed different in every sent state', () => {
    for (const state of ['succeeded', 'failed', 'outcome_unknown']) {
      expect(observedOutcome(state, observation([target({ retargeted: true })]))).toBe('observed_different');
      expect(observedOutcome(state, observation([target({})], ['/w/extra.txt']))).toBe('observed_different');
    }
  });

  it('no answer: the approved bytes on disk stay outcome unknown (the person settles it); a change that is not what was approved is observed different', () => {
    expect(observedOutcome('outcome_unknown', observation([target({ matches: true, changed: true })]))).toBe('outcome_unknown');
    expect(observedOutcome('outcome_unknown', observation([target({ matches: false, changed: false })]))).toBe('outcome_unknown');
    expect(observedOutcome('outcome_unknown', observation([target({ matches: false, changed: true })]))).toBe('observed_different');
    expect(observedOutcome('outcome_unknown', observation([target({ expected: 'none', matches: null, changed: true })]))).toBe('observed_different');
  });

  it('a failure the server reported while a target changed is observed different; an unchanged one has none of the four', () => {
    expect(observedOutcome('failed', observation([target({ changed: true })]))).toBe('observed_different');
    expect(observedOutcome('failed', observation([target({ matches: false, changed: false })]))).toBeNull();
  });

  it('property: every combination gives one of the four words or none, never done-and-observed with a mismatch, a swap or another change', () => {
    const arbTarget = fc.record({ matches: fc.constantFrom(true, false, null), changed: fc.boolean(), retargeted: fc.boolean() }).map((x) => target({ ...x, expected: x.matches === null ? 'none' : 'content' }));
    fc.assert(
      fc.property(fc.constantFrom('succeeded', 'failed', 'outcome_unknown'), fc.array(arbTarget, { maxLength: 4 }), fc.boolean(), fc.boolean(), (state, targets, observed, other) => {
        const o = observed ? observation(targets, other ? ['/w/x'] : []) : null;
        const words = observedOutcome(state, o);
        if (words !== null) expect(Object.keys(OBSERVED_OUTCOME_WORDS)).toContain(words);
        const bad = o !== null && (other || targets.some((t) => t.retargeted || t.matches === false));
        if (words === 'done_and_observed') expect(bad).toBe(false);
        if (o !== null && (other || targets.some((t) => t.retargeted))) expect(words).toBe('observed_different');
        if (state !== 'succeeded') expect(words).not.toBe('done_and_observed');
        if (state !== 'succeeded') expect(words).not.toBe('done_as_claimed');
      }),
    );
  });
});
