/**
 * "Run a tool": a person's own tool call. It PROPOSES the call (tools:run, source 'user'); the
 * gate decides exactly as for a model. If the policy says Ask, the call waits in Approvals, where
 * only main's native dialog can approve it.
 */
import { useState, type FormEvent } from 'react';
import type { ToolView } from '../../../shared/contract/connections';
import { toShownError, type ShownError } from '../api';
import { ErrorNote, ServerClaim, StatePill } from '../components/common';
import { useAppStore } from '../store';
import { CallProgress } from '../components/progress';
import { argumentSkeleton } from './view-helpers';

/** Plain text of a tool result's text blocks (display only). */
function resultText(content: ReadonlyArray<Record<string, unknown>>): string {
  return content.map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : `[${String(b.type)} block]`)).join('\n');
}

/** The Run form for one tool of one (server, account). */
export function RunForm({ tool, onClose }: { tool: ToolView; onClose: () => void }) {
  const runTool = useAppStore((s) => s.runTool);
  const navigate = useAppStore((s) => s.navigate);
  const [text, setText] = useState(() => argumentSkeleton(tool.inputSchema));
  const [error, setError] = useState<ShownError | null>(null);
  const [operationId, setOperationId] = useState<string | null>(null);
  const operation = useAppStore((s) => (operationId ? (s.operations.find((o) => o.operationId === operationId) ?? null) : null));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    let args: unknown;
    try {
      args = JSON.parse(text);
    } catch (e) {
      setError({ code: 'INVALID_REQUEST', message: `arguments: not valid JSON (${e instanceof Error ? e.message : String(e)})` });
      return;
    }
    if (!args || typeof args !== 'object' || Array.isArray(args)) {
      setError({ code: 'INVALID_REQUEST', message: 'arguments: expected a JSON object such as {"path": "notes.txt"}' });
      return;
    }
    try {
      const op = await runTool({ serverId: tool.serverId, accountId: tool.accountId, toolName: tool.name, arguments: args as Record<string, unknown> });
      setOperationId(op.operationId);
    } catch (e) {
      setError(toShownError(e));
    }
  };

  return (
    <form className="card form run-form" onSubmit={submit} data-testid="run-form">
      <h3>
        Run <code>{tool.name}</code>
      </h3>
      <p className="muted">
        Your call goes through Warden's gate like any model call: Always Allow runs it, Ask sends it to Approvals, Disabled refuses it.
      </p>
      <p>
        <ServerClaim>{tool.description}</ServerClaim>
      </p>
      <details>
        <summary>Input schema (from the server)</summary>
        <pre className="code-block">{JSON.stringify(tool.inputSchema, null, 2)}</pre>
      </details>
      <label className="field">
        <span>Arguments (JSON)</span>
        <textarea className="input mono" rows={6} value={text} onChange={(e) => setText(e.target.value)} data-testid="run-form-arguments" />
      </label>
      <ErrorNote error={error} testId="run-form-error" />
      <div className="form-actions">
        <button type="submit" className="button button-primary" data-testid="run-form-submit">
          Run
        </button>
        <button type="button" className="button" onClick={onClose}>
          Close
        </button>
      </div>
      {operation ? (
        <div className="run-result" data-testid="run-form-result">
          <div>
            Operation <code>{operation.operationId}</code> <StatePill state={operation.state} testId="run-form-state" />
          </div>
          <p className="muted">{operation.reason}</p>
          {operation.state === 'awaiting_approval' ? (
            <p>
              Waiting for your approval.{' '}
              <button type="button" className="link" onClick={() => navigate('approvals')}>
                Open Approvals
              </button>
            </p>
          ) : null}
          {operation.state === 'executing' ? (
            <CallProgress operationId={operation.operationId} startedAt={operation.history.find((h) => h.to === 'executing')?.at ?? operation.requestedAt} testId="run-form-progress" stopTestId="run-form-stop" />
          ) : null}
          {operation.result ? (
            <div className="field">
              <span>{operation.result.isError ? "The server's error (untrusted text)" : "The server's answer (untrusted text)"}</span>
              <pre className="code-block" data-testid="run-form-output">
                {resultText(operation.result.content)}
              </pre>
            </div>
          ) : null}
          {operation.error ? (
            <p className="error-note">
              <code>{operation.error.code}</code> {operation.error.message}
            </p>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}
