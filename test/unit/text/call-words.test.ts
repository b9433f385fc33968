import { describe, expect, it } from 'vitest';
import { callOutcome, callReason, setOnDay, whyWardenAsks } from '../../../shared/call-words';
import { OperationState } from '../../../shared/domain/operations';
import type { DecisionRecord } from '../../../shared/domain/journal-events';

const decided = (decision: DecisionRecord['decision'], reason: string, layer: DecisionRecord['layer'] = 'user'): DecisionRecord => ({ decision, reason, layer, ruleId: 'r1', configErrors: [] });

describe('why a call ran, and how it ended, in words', () => {
  it('says the cause once: Always Allow, Disabled and Ask become sentences, never "Asks: …"', () => {
    expect(callReason({ state: 'succeeded', decision: decided('allow', 'Allowed: you set Always Allow for read on Files (Work)'), approvedByUser: false, reason: 'The tool call succeeded' })).toBe(
      'It ran without asking because you set Always Allow for read on Files (Work).',
    );
    expect(callReason({ state: 'denied', decision: decided('deny', 'Disabled in this conversation: you turned off read for this conversation'), approvedByUser: false, reason: 'Disabled in this conversation: you turned off read for this conversation' })).toBe(
      'Refused because you turned off read for this conversation.',
    );
    expect(callReason({ state: 'awaiting_approval', decision: decided('ask', 'Asks: you set Ask for read on Files (Work)'), approvedByUser: false, reason: 'x' })).toBe('Warden asks because you set Ask for read on Files (Work).');
    expect(whyWardenAsks('Asks: your organization requires asking for this tool')).toBe('Warden asks because your organization requires asking for this tool.');
    expect(whyWardenAsks(undefined)).toBe('Warden asks because approval is required.');
  });

  it('a person’s answer is the reason: approved, denied in the dialog, rejected in Approvals with their words', () => {
    const ask = decided('ask', 'Asks: you set Ask for read on Files (Work)');
    expect(callReason({ state: 'failed', decision: ask, approvedByUser: true, reason: 'The tool reported an error' })).toBe('You approved it in Warden’s dialog.');
    expect(callReason({ state: 'rejected', decision: ask, approvedByUser: false, reason: 'Denied in the approval dialog (Deny all)' })).toBe('You denied it in Warden’s dialog.');
    expect(callReason({ state: 'rejected', decision: ask, approvedByUser: false, reason: 'Rejected by you: wrong city' })).toBe('You rejected it in Approvals: wrong city.');
    expect(callReason({ state: 'expired', decision: ask, approvedByUser: false, reason: 'The approval request expired' })).toBe('Nobody approved it in time.');
  });

  it('every state has an outcome sentence, and none is a state code', () => {
    for (const state of OperationState.options) {
      const words = callOutcome({ state, reason: 'the server was gone' });
      expect(words).toMatch(/^[A-Z][^_]*\.$/);
      expect(words).not.toContain(state.replace(/_/g, ' '));
    }
    expect(callOutcome({ state: 'failed', reason: 'The tool reported an error' })).toBe('Failed: the tool reported an error.');
  });
});

describe('the day a rule was set', () => {
  const tuesday = new Date(2026, 11, 1, 15, 0).getTime();
  it('is said as a sentence of its own, with the year only when it is not this one', () => {
    expect(setOnDay(tuesday, new Date(2026, 11, 4).getTime())).toBe('Set on Tuesday, December 1.');
    expect(setOnDay(tuesday, new Date(2027, 0, 4).getTime())).toBe('Set on Tuesday, December 1, 2026.');
    expect(setOnDay(undefined)).toBe('');
    expect(setOnDay(Number.NaN)).toBe('');
  });
  it('follows the reason of a call a rule of the person decided, and only then', () => {
    const ran = { state: 'succeeded' as const, approvedByUser: false, reason: 'The tool call succeeded' };
    const decision = { decision: 'allow' as const, reason: 'Allowed: you set Always Allow for notes_list on Demo (default)', layer: 'user' as const, ruleId: 'r1', configErrors: [] };
    expect(callReason({ ...ran, decision: { ...decision, ruleSetAt: tuesday } })).toMatch(/^It ran without asking because you set Always Allow for notes_list on Demo \(default\)\. Set on Tuesday, December 1(, 2026)?\.$/);
    expect(callReason({ ...ran, decision })).toBe('It ran without asking because you set Always Allow for notes_list on Demo (default).');
  });
});
