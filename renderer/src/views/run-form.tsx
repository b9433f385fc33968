/**
 * "Run a tool": a person's own tool call. It PROPOSES the call (tools:run, source 'user'); the
 * gate decides exactly as for a model. If the policy says Ask, the call waits in Approvals, where
 * only main's native dialog can approve it.
 */
import { useState, type FormEvent } from 'react';
import type { ToolView } from '../../../shared/contract/connections';
import { toShownError, type ShownError } from '../api';
import { ErrorNote, ServerClaim, StatePill } from '../components/common';
import { ServerAnswer } from '../components/server-answer';
import { useAppStore } from '../store';
import { argumentSkeleton } from './view-helpers';

/** The Run form for one tool of one (server, account). */
export function RunForm({ tool, onClose }: { tool: ToolView; onClose: () => void }) {
  const runTool = useAppStore((s) => s.runTool);
  const navigate = useAppStore((s) => s.navigate);
  const cancel = useAppStore((s) => s.cancel);
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
        <ServerClaim flags={tool.flags}>{tool.description}</ServerClaim>
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
            <p>
              Running.{' '}
              <button type="button" className="button button-small" onClick={() => void cancel(operation.operationId)} data-testid="run-form-stop">
                Stop
              </button>{' '}
              <span className="muted">(a stopped call's outcome is unknown: it may already have happened; see Recovery)</span>
            </p>
          ) : null}
          {operation.result ? <ServerAnswer result={operation.result} testId="run-form" /> : null}
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
