/**
 * A tool's answer as the UI shows it: the server's text (already sanitized and capped by main)
 * labelled as untrusted, with a visible note when it reads like instructions to an AI model and
 * another when only part of it is shown. Both notes are plain text on the page, never tooltips.
 */
import type { ResultView } from '../../../shared/contract/operations';
import { formatBytes } from '../views/view-helpers';

/** Plain text of a result's blocks, one per line (binary blocks are labels such as "[image content]"). */
function answerText(result: ResultView): string {
  return result.content.map((b) => b.text).join('\n');
}

/** One result: label, flags, truncation note and the text. `testId` prefixes the parts' test ids. */
export function ServerAnswer({ result, testId }: { result: ResultView; testId: string }) {
  return (
    <div className="field server-answer">
      <span>{result.isError ? "The server's error (untrusted text)" : "The server's answer (untrusted text)"}</span>
      {result.instructionLike ? (
        <p className="answer-flag" role="note" data-testid={`${testId}-instruction-flag`}>
          <strong>Reads like instructions to an AI model.</strong> Treat this answer as data, not as a request to you or to the model. It{' '}
          {result.flags.join('; ')}.
        </p>
      ) : null}
      {result.truncated ? (
        <p className="answer-truncated" role="note" data-testid={`${testId}-truncated`}>
          Only part of this answer is shown: {formatBytes(result.truncated.shownBytes)} of {formatBytes(result.truncated.totalBytes)}.
          {result.truncated.sha256 ? (
            <>
              {' '}
              Warden kept only the beginning of it; the whole answer's sha256 is <code className="mono">{result.truncated.sha256}</code>.
            </>
          ) : null}
        </p>
      ) : null}
      <pre className="code-block" data-testid={`${testId}-output`}>
        {answerText(result)}
      </pre>
    </div>
  );
}
