import { describe, expect, it } from 'vitest';
import { CallNotSentError, outcomeOf, ToolCallFailedError, ToolCallOutcomeUnknownError } from '../../../electron/core/gate/call-outcome';
import { isCallNotSent } from '../../../electron/core/gate/call-outcome';

describe('call outcome mapping', () => {
  it('an answer is succeeded; not-sent and server-rejected are failed; everything else is outcome_unknown', () => {
    expect(outcomeOf({ ok: true })).toBe('succeeded');
    expect(outcomeOf({ ok: true, isError: true })).toBe('failed');
    // A stopped call's server may have acted, whatever it answered afterwards.
    expect(outcomeOf({ ok: false, error: new ToolCallFailedError('Invalid params', -32602), aborted: true })).toBe('outcome_unknown');
    expect(outcomeOf({ ok: false, error: new CallNotSentError('not connected'), aborted: true })).toBe('failed');
    expect(outcomeOf({ ok: false, error: new CallNotSentError('not connected') })).toBe('failed');
    expect(outcomeOf({ ok: false, error: new ToolCallFailedError('Invalid params', -32602) })).toBe('failed');
    for (const reason of ['timeout', 'connection_closed', 'cancelled', 'transport_error'] as const) {
      expect(outcomeOf({ ok: false, error: new ToolCallOutcomeUnknownError('x', reason) })).toBe('outcome_unknown');
    }
    expect(outcomeOf({ ok: false, error: new Error('anything unexpected') })).toBe('outcome_unknown');
    expect(outcomeOf({ ok: false, error: 'a string' })).toBe('outcome_unknown');
  });

  it("the executor's not-sent error is the gate's not-sent marker, and the other two are not", () => {
    expect(isCallNotSent(new CallNotSentError('x'))).toBe(true);
    expect(isCallNotSent(new ToolCallFailedError('x'))).toBe(false);
    expect(isCallNotSent(new ToolCallOutcomeUnknownError('x', 'timeout'))).toBe(false);
  });
});
