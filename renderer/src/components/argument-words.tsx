/**
 * A call's arguments as a person reads them where they decide (an approval card, Recovery):
 * labelled lines written by the one formatter the native dialogs use (shared/argument-words.ts),
 * with the exact JSON one click away behind "Show JSON".
 */

/** The labelled lines (`text`, as the formatter wrote them) and, on demand, the JSON. */
export function ArgumentWords({ text, json, label, testId }: { text: string; json: string; label: string; testId: string }) {
  return (
    <div className="argument-words">
      <span className="argument-words-label" id={`${testId}-label`}>
        {label}
      </span>
      {/* Pre-formatted so nested fields keep their indentation; each value is on its own line. */}
      <pre className="argument-lines" data-testid={testId} aria-labelledby={`${testId}-label`} tabIndex={0}>
        {text || '(no arguments)'}
      </pre>
      <details className="show-json">
        <summary>Show JSON</summary>
        <pre className="code-block" data-testid={`${testId}-json`}>
          {json}
        </pre>
      </details>
    </div>
  );
}
