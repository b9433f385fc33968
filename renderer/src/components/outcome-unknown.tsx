/**
 * What a person can do about a call whose outcome is unknown: it was sent and no answer came, so
 * it may or may not have happened. Said where the call is shown (a chat card, the Run form), with
 * the way to Recovery, where it is settled; Warden never resends it on its own.
 */
import { useAppStore } from '../store';

export function OutcomeUnknownNote({ testId }: { testId: string }) {
  const navigate = useAppStore((s) => s.navigate);
  return (
    <p className="outcome-unknown-note" role="note" data-testid={testId}>
      Warden can&apos;t tell whether the server did it: the request was sent, and no answer came back before the call ended. Warden won&apos;t send it again on
      its own. Check on the server&apos;s side, then record what happened (or retry) in Recovery.{' '}
      <button type="button" className="link" data-testid={`${testId}-open`} onClick={() => navigate('recovery')}>
        Open Recovery
      </button>
    </p>
  );
}
