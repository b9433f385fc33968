/**
 * One Activity row opened: "Why did this run?" in sentences (the decision and the rule layer that
 * made it, who approved, whether it was sent, how it ended), the timeline of what happened in
 * words, the arguments (secrets replaced), and the ids under "Technical details".
 *
 * Record types and state codes never appear as text here: each event is said in words
 * (`eventWords`); the code stays in a data attribute for tests.
 */
import type { ActivityCall } from '../../../shared/domain/activity';
import type { AuditRow, OperationHistory, OperationView } from '../../../shared/domain/ledger';
import { TechnicalDetails, Time } from '../components/common';
import { eventWords, stateWords } from '../components/names';
import { decisionSentence } from '../../../shared/call-words';

/** Which layer of the policy decided, in words. */
const LAYER_WORDS: Record<string, string> = {
  availability: 'what the server lists',
  organization: 'your organization’s policy',
  'safe-mode': 'safe mode (the activity log was found damaged)',
  conversation: 'this conversation’s setting',
  user: 'your rules',
  default: 'the default for tools with no rule',
  configuration: 'a rule that could not be read',
  roots: 'the folders you keep this server inside',
  chat: 'the chat, before any rule was asked (the tools it offers the model and its limits on calls)',
};

/** "3.2 s", "4 min 10 s", "2 h 5 min". */
export function durationWords(ms: number | null): string {
  if (ms === null) return 'not finished';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} days`;
}

/** Who asked for a call, in words. */
export function askedByWords(a: ActivityCall['askedBy']): string {
  if (a.source === 'user') return 'You, with Run…';
  if (a.source === 'gateway') return 'Another app, through Warden';
  const who = a.model ? `Model ${a.model}` : 'A model';
  if (a.conversationId === null) return who;
  return a.conversationTitle === null ? `${who} in a deleted conversation` : `${who} in “${a.conversationTitle}”`;
}

function approvalWords(history: OperationHistory): string {
  const a = history.approval;
  // The policy's own approval repeats the decision's reason: said once, under Decision.
  if (a && a.by.startsWith('policy')) return 'No one needed to approve it: your Always Allow let it run.';
  if (a) return a.by === 'you' ? `You approved it in Warden’s dialog (${new Date(a.at).toLocaleString()}).` : `Approved by ${a.by}: ${a.reason}`;
  const d = history.decisionAtRequest?.decision;
  if (d === 'allow') return 'No one needed to approve it: it was allowed without asking.';
  if (d === 'deny') return 'No one could approve it: it was refused without asking.';
  return 'No one approved it.';
}

/**
 * An event's reason in the timeline. A settled outcome is told from its record's fields (who,
 * what they found, whether it was tried again), so the retry's operation id, which the stored
 * reason carries for exports, stays under Technical details.
 */
function eventReason(e: AuditRow, reconciled: OperationView['reconciled']): string {
  if (e.type !== 'op.reconciled' || !reconciled) return e.reason;
  const who = reconciled.by === 'user' ? 'you' : reconciled.by;
  const what = reconciled.outcome === 'retried' ? 'tried it again as a new call' : reconciled.outcome === 'succeeded' ? 'recorded that it happened' : 'recorded that it did not happen';
  return `${who} ${what}${reconciled.reason ? ` (“${reconciled.reason}”)` : ''}`;
}

/** The opened row: why, what happened, arguments, ids. */
export function CallDetails({ call, history }: { call: ActivityCall; history: OperationHistory | 'loading' }) {
  if (history === 'loading') return <p className="muted">Reading this call’s history…</p>;
  const op = history.operation;
  const decision = history.decisionAtRequest;
  const ran = op.reachedExecuting;
  return (
    <div className="call-details" data-testid="activity-call-details">
      {/* Plain sections named by their headings, not landmarks: several calls can be open at once, and landmarks must have unique names. */}
      <section data-testid="activity-why">
        <h2 className="call-section-title">{ran ? 'Why did this run?' : 'Why did this not run?'}</h2>
        <dl className="facts">
          <dt>Asked by</dt>
          <dd>{askedByWords(call.askedBy)}</dd>
          <dt>Decision</dt>
          <dd>
            {decision
              ? // A person's or the demo's own rule names who set it in its reason ("you set…", "the demo’s
                // starting rules set…"); any other layer is named after the reason.
                decision.layer === 'user'
                ? decisionSentence(decision.reason)
                : `${decision.reason} — decided by ${LAYER_WORDS[decision.layer] ?? decision.layer}.`
              : 'No decision was recorded: the arguments did not fit the tool, or Warden stopped first.'}
          </dd>
          <dt>Approval</dt>
          <dd>{approvalWords(history)}</dd>
          <dt>Sent</dt>
          <dd>{history.executing ? <Time at={history.executing.at} /> : 'Never sent to the server.'}</dd>
          <dt>Outcome</dt>
          <dd>{history.outcome ? `${stateWords(history.outcome.state)}: ${history.outcome.reason}` : 'Not finished yet.'}</dd>
        </dl>
      </section>
      <section data-testid="activity-timeline">
        <h2 className="call-section-title">What happened</h2>
        <ol className="event-list">
          {history.events.map((e) => (
            <li key={e.seq} data-type={e.type} data-to={e.to ?? ''}>
              <Time at={e.time} /> — {eventWords(e)}
              {/* A request's recorded reason names its source by code ("Requested by user"): said in words instead. */}
              {e.type === 'op.proposed' ? (
                <span className="muted">: by {askedByWords(call.askedBy).replace(/^[A-Z]/, (c) => c.toLowerCase())}</span>
              ) : e.reason && e.reason !== eventWords(e) ? (
                <span className="muted">: {eventReason(e, op.reconciled)}</span>
              ) : null}
            </li>
          ))}
        </ol>
      </section>
      <div className="field">
        <span>Arguments (secrets replaced)</span>
        <pre className="code-block">{history.arguments}</pre>
      </div>
      <TechnicalDetails
        testId="activity-call-ids"
        facts={[
          ['Operation', op.operationId],
          ['Tool', op.toolName],
          ['Server id', op.serverId],
          ['Account id', op.accountId],
          ...(op.conversationId ? ([['Conversation', op.conversationId]] as Array<[string, string]>) : []),
          ...(decision?.ruleId ? ([['Rule', decision.ruleId]] as Array<[string, string]>) : []),
          ...(op.reconciled?.retryOperationId ? ([['Tried again as', op.reconciled.retryOperationId]] as Array<[string, string]>) : []),
          ...(op.retryOf ? ([['A new try of', op.retryOf]] as Array<[string, string]>) : []),
          ['Fingerprint', op.fingerprint],
        ]}
      />
    </div>
  );
}
