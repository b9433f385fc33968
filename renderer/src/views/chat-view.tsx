/**
 * Chat, the home of the app: conversations on the left, the open conversation with its model
 * picker, the streamed replies, and a card for every tool call the model made (what it is, what
 * Warden decided and why, what happened, and any warning about its result).
 *
 * This window cannot approve: a reply's calls that wait for approval show a "Review…" button that
 * asks main to open Warden's native dialog, where the person decides.
 */
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { ChatMessage, ChatToolCall, ChatTool } from '../../../shared/contract/chat';
import { DecisionPill, ErrorNote } from '../components/common';
import { explainError } from '../errors';
import { Markdown } from '../components/markdown';
import { CallProgress } from '../components/progress';
import { OutcomeUnknownNote } from '../components/outcome-unknown';
import { useAppStore } from '../store';

const STATUS_WORDS: Record<ChatToolCall['status'], string> = {
  deciding: 'Deciding…',
  awaiting_approval: 'Waiting for your approval',
  running: 'Running…',
  succeeded: 'Succeeded',
  failed: 'Failed',
  not_permitted: 'Not permitted',
  declined: 'Declined by you',
  expired: 'Expired, nothing ran',
  cancelled: 'Cancelled, nothing ran',
  outcome_unknown: 'Outcome unknown',
  stopped: 'Stopped',
  invalid: 'Invalid arguments, nothing ran',
  skipped: 'Not run (limit reached)',
};

const STATE_WORDS = { idle: '', responding: 'Writing…', waiting_approval: 'Waiting for your approval', running_tools: 'Running tools…' } as const;

function duration(call: ChatToolCall): string | null {
  if (call.startedAt === null || call.endedAt === null) return null;
  const ms = Math.max(0, call.endedAt - call.startedAt);
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * Statuses whose card text (`why`) says how the call ended (or that nothing is decided yet): only
 * the outcome line carries it. For the others, a card saved before reasons were kept shows it as the reason.
 */
const OUTCOME_FROM_WHY = new Set<ChatToolCall['status']>(['deciding', 'failed', 'outcome_unknown', 'stopped', 'invalid', 'expired']);

/** How the call ended, or where it is, in words: "Done: the server answered.", "Failed: …", "Nothing ran." */
function outcomeLine(call: ChatToolCall): string {
  const end = (text: string) => `${text}${/[.!?]$/.test(text) ? '' : '.'}`;
  switch (call.status) {
    case 'deciding':
      return 'Being decided.';
    case 'awaiting_approval':
      // The status pill says it waits for approval; the outcome line says only what that means.
      return 'Nothing has run yet.';
    case 'running':
      return 'Running.';
    case 'succeeded':
      return 'Done: the server answered.';
    case 'failed':
      return end(`Failed: ${call.why}`);
    case 'outcome_unknown':
      return end(`Outcome unknown: ${call.why}`);
    case 'stopped':
      // Who stopped it and why nothing needs checking: the gate's reason says both.
      return end(call.why);
    case 'invalid':
      return end(`Nothing ran: ${call.why}`);
    case 'expired':
      return call.askAgain ? end(call.why) : 'Nothing ran.';
    default:
      return 'Nothing ran.';
  }
}

function ToolCallCard({ call }: { call: ChatToolCall }) {
  const tool = call.toolName ?? call.modelName;
  const took = duration(call);
  // The trusted preview ends with "tool on server (account)", which the card's head already says;
  // a call Warden has no description for previews as that alone, and shows no preview line.
  const where = `${tool} on ${call.serverLabel} (${call.accountLabel})`;
  const preview = call.preview === where ? '' : call.preview.endsWith(` — ${where}`) ? call.preview.slice(0, -` — ${where}`.length) : call.preview;
  return (
    <article className={`tool-card tool-card-${call.status}`} data-testid={`call-${call.callId}`} data-status={call.status}>
      <header className="tool-card-head">
        <span className="tool-card-name">{tool}</span>
        <span className="muted">{call.serverLabel ? `on ${call.serverLabel} (${call.accountLabel ?? ''})` : 'not a tool Warden offered'}</span>
        <span className={`pill call-status call-status-${call.status}`} data-testid={`call-${call.callId}-status`}>
          {STATUS_WORDS[call.status]}
        </span>
        {call.decision ? <DecisionPill decision={call.decision} /> : null}
        {took ? <span className="muted small">{took}</span> : null}
      </header>
      {preview ? <p className="tool-card-preview">{preview}</p> : null}
      {call.status === 'running' && call.operationId && call.startedAt !== null ? <CallProgress operationId={call.operationId} startedAt={call.startedAt} readsOnly={call.readsOnly} testId={`call-${call.callId}-progress`} /> : null}
      {/* Why it ran (the reason) and how it ended (the outcome) are two facts, said apart. */}
      {call.reason || !OUTCOME_FROM_WHY.has(call.status) ? (
        <p className="tool-card-why" data-testid={`call-${call.callId}-why`}>
          <span className="muted">Why: </span>
          {call.reason || call.why}
        </p>
      ) : null}
      <p className="tool-card-outcome" data-testid={`call-${call.callId}-outcome`}>
        <span className="muted">Outcome: </span>
        {outcomeLine(call)}
      </p>
      {call.status === 'outcome_unknown' ? <OutcomeUnknownNote testId={`call-${call.callId}-unknown`} /> : null}
      {call.flagged ? (
        <p className="tool-card-flag" role="note" data-testid={`call-${call.callId}-flag`}>
          Warning: this result contains text that tries to give the model instructions (a possible prompt injection). Warden passed it to the model only as untrusted data; nothing in it can change what Warden allows.
        </p>
      ) : null}
      {call.truncated ? <p className="muted small">The result was cut for the model (it saw the first part and a note saying so).</p> : null}
      <details className="tool-card-details">
        <summary>Arguments the model sent</summary>
        <pre className="code-block" data-testid={`call-${call.callId}-arguments`}>
          {call.argumentsJson || '{}'}
        </pre>
      </details>
      {call.resultText ? (
        <details className="tool-card-details">
          <summary>Result (the server&apos;s text, untrusted)</summary>
          <pre className="code-block" data-testid={`call-${call.callId}-result`}>
            {call.resultText}
          </pre>
        </details>
      ) : null}
      <details className="tool-card-details">
        <summary>What the model was told</summary>
        <pre className="code-block">{call.modelResult}</pre>
      </details>
    </article>
  );
}

function Message({ message }: { message: ChatMessage }) {
  const openLink = useAppStore((s) => s.openLink);
  const review = useAppStore((s) => s.reviewMessage);
  const askAgain = useAppStore((s) => s.askAgain);
  const [reviewing, setReviewing] = useState(false);
  const pending = message.toolCalls.filter((c) => c.status === 'awaiting_approval').length;
  const expired = message.toolCalls.some((c) => c.askAgain);
  if (message.role === 'user') {
    return (
      <div className="msg msg-user" data-testid={`msg-${message.id}`}>
        {message.text ? <p className="msg-user-text">{message.text}</p> : null}
        {(message.attachments ?? []).map((a, i) => (
          <details key={i} className="msg-attachment" data-testid="msg-attachment">
            <summary>
              {a.kind === 'resource' ? 'Resource' : 'Prompt'} {a.title} from {a.serverLabel} — the server&apos;s text, not yours
            </summary>
            {a.flags.length > 0 ? (
              <p className="answer-flag" role="note">
                <strong>Reads like instructions to an AI model.</strong> The model was given it only as the server&apos;s untrusted text. It {a.flags.join('; ')}.
              </p>
            ) : null}
            <pre className="server-text-body" tabIndex={0} aria-label={`Text of ${a.title} from ${a.serverLabel}`}>
              {a.text}
            </pre>
          </details>
        ))}
      </div>
    );
  }
  if (message.role === 'notice') {
    if (message.problem) {
      const { sentence, detail } = explainError({ code: message.problem.code, message: message.problem.message, source: 'model', ...(message.problem.failure ? { failure: message.problem.failure } : {}) });
      return (
        <div className={`msg-notice msg-notice-${message.tone}`} role="alert" data-testid="chat-notice" data-code={message.problem.code}>
          <p>
            <strong>{sentence}</strong>
          </p>
          {detail ? <p className="small">{detail}</p> : null}
        </div>
      );
    }
    return (
      <p className={`msg-notice msg-notice-${message.tone}`} role={message.tone === 'error' ? 'alert' : 'status'} data-testid="chat-notice">
        {message.text}
      </p>
    );
  }
  return (
    <div className="msg msg-assistant" data-testid={`msg-${message.id}`} data-streaming={message.streaming}>
      {message.text ? <Markdown text={message.text} onLink={(url) => void openLink(url)} /> : message.streaming ? <p className="muted">…</p> : null}
      {message.note ? <p className="muted small">{message.note}</p> : null}
      {message.toolCalls.length ? (
        <div className="tool-cards">
          {message.toolCalls.map((c) => (
            <ToolCallCard key={c.callId} call={c} />
          ))}
        </div>
      ) : null}
      {pending > 0 ? (
        <div className="pending-box" data-testid="chat-pending">
          <p>
            <strong>{pending === 1 ? '1 call waits' : `${pending} calls wait`} for your approval.</strong> Review opens Warden&apos;s own dialog; this window cannot approve.
          </p>
          <button
            type="button"
            className="button button-primary"
            disabled={reviewing}
            data-testid="chat-review"
            onClick={() => {
              setReviewing(true);
              void review(message.id).finally(() => setReviewing(false));
            }}
          >
            {reviewing ? 'Waiting for Warden’s dialog…' : 'Review…'}
          </button>
        </div>
      ) : null}
      {expired ? (
        <div className="pending-box">
          <p>These calls were waiting for approval when Warden stopped, so nothing ran.</p>
          <button type="button" className="button" data-testid="chat-ask-again" onClick={() => void askAgain(message.id)}>
            Ask again
          </button>
        </div>
      ) : null}
      {message.usage && !message.streaming ? (
        <p className="muted small msg-usage">
          {message.model ? `${message.model} · ` : ''}
          {message.usage.inputTokens ?? '?'} tokens in · {message.usage.outputTokens ?? '?'} out
        </p>
      ) : null}
    </div>
  );
}

function ConversationList() {
  const conversations = useAppStore((s) => s.conversations);
  const current = useAppStore((s) => s.conversation?.id);
  const open = useAppStore((s) => s.openConversation);
  const create = useAppStore((s) => s.newConversation);
  const search = useAppStore((s) => s.searchConversations);
  const query = useAppStore((s) => s.chatSearch);
  return (
    <aside className="chat-list" aria-label="Conversations">
      <button type="button" className="button button-primary" data-testid="chat-new" onClick={() => void create()}>
        New conversation
      </button>
      <input className="input" type="search" placeholder="Search titles" aria-label="Search conversations by title" value={query} onChange={(e) => void search(e.target.value)} data-testid="chat-search" />
      <ul>
        {conversations.map((c) => (
          <li key={c.id}>
            <button type="button" className={c.id === current ? 'chat-list-item chat-list-item-active' : 'chat-list-item'} aria-current={c.id === current ? 'true' : undefined} onClick={() => void open(c.id)} data-testid={`chat-item-${c.id}`}>
              <span className="chat-list-title">{c.title}</span>
              {c.state !== 'idle' ? <span className="chat-list-state">{STATE_WORDS[c.state]}</span> : null}
            </button>
          </li>
        ))}
        {conversations.length === 0 ? <li className="empty">{query ? 'No title matches.' : 'No conversations yet.'}</li> : null}
      </ul>
    </aside>
  );
}

function ModelPicker() {
  const c = useAppStore((s) => s.conversation)!;
  const providers = useAppStore((s) => s.chatProviders);
  const models = useAppStore((s) => s.chatModels);
  const choose = useAppStore((s) => s.chooseModel);
  const provider = providers.find((p) => p.providerId === c.providerId);
  return (
    <div className="model-picker">
      <label className="field">
        <span>Model provider</span>
        <select className="input" value={c.providerId} aria-label="Model provider" data-testid="chat-provider" onChange={(e) => void choose(e.target.value, providers.find((p) => p.providerId === e.target.value)?.defaultModel ?? null)}>
          {providers.map((p) => (
            <option key={p.providerId} value={p.providerId}>
              {p.label}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span>Model</span>
        {models ? (
          <select className="input" value={c.model ?? ''} aria-label="Model" data-testid="chat-model" onChange={(e) => void choose(c.providerId, e.target.value || null)}>
            {c.model === null ? <option value="">Choose a model</option> : null}
            {models.map((m) => (
              <option key={m.id} value={m.id}>
                {m.label}
              </option>
            ))}
          </select>
        ) : (
          <input className="input" defaultValue={c.model ?? ''} placeholder="model id" data-testid="chat-model" onBlur={(e) => void choose(c.providerId, e.target.value.trim() || null)} />
        )}
      </label>
      {provider?.kind === 'demo' ? (
        <span className="pill pill-hint" data-testid="chat-demo-badge">
          Scripted demo: not a real model, no network
        </span>
      ) : null}
    </div>
  );
}

function ToolsPanel() {
  const tools = useAppStore((s) => s.chatTools);
  const setRule = useAppStore((s) => s.setConversationRule);
  if (tools.length === 0) return <p className="muted small">No server is connected, so the model has no tools. Connect one in Servers.</p>;
  const row = (t: ChatTool) => (
    <tr key={`${t.serverId}-${t.accountId}-${t.toolName}`} data-testid={`chat-tool-${t.toolName}`}>
      <td>
        <code>{t.toolName}</code> <span className="muted small">{t.serverLabel}</span>
      </td>
      <td>
        <DecisionPill decision={t.effective} /> {t.offered ? null : <span className="muted small">not offered</span>}
      </td>
      <td className="small">{t.reason}</td>
      <td className="chat-tool-actions">
        {t.layer === 'conversation' ? (
          <button type="button" className="button" onClick={() => void setRule(t, null)}>
            Use the usual rule
          </button>
        ) : (
          <>
            <button type="button" className="button" disabled={!t.offered} onClick={() => void setRule(t, 'disabled')}>
              Disable here
            </button>
            <button type="button" className="button" disabled={t.effective === 'allow'} onClick={() => void setRule(t, 'allow')}>
              Allow here…
            </button>
          </>
        )}
      </td>
    </tr>
  );
  return (
    // Scrolls on its own, so a long tool list never pushes the messages and the message box out of the window.
    <div className="chat-tools-scroll" tabIndex={0} role="region" aria-label="Tools in this conversation">
      <table className="chat-tools">
        <caption className="muted small">Rules made here apply to this conversation only and end with it. Allowing is confirmed in Warden&apos;s dialog.</caption>
        <thead>
          <tr>
            <th>Tool</th>
            <th>Here</th>
            <th>Why</th>
            <th>This conversation</th>
          </tr>
        </thead>
        <tbody>{tools.map(row)}</tbody>
      </table>
    </div>
  );
}

function Composer() {
  const c = useAppStore((s) => s.conversation)!;
  const send = useAppStore((s) => s.sendMessage);
  const stop = useAppStore((s) => s.stopReply);
  const attachments = useAppStore((s) => s.pendingAttachments);
  const removeAttachment = useAppStore((s) => s.removeAttachment);
  const [text, setText] = useState('');
  const busy = c.state !== 'idle';
  const ready = text.trim() !== '' || attachments.length > 0;
  const submit = async () => {
    if (busy || !ready) return;
    if (await send(text)) setText('');
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void submit();
    } else if (e.key === 'Escape' && busy) {
      e.preventDefault();
      void stop();
    }
  };
  return (
    <div className="chat-composer">
      {attachments.length > 0 ? (
        <ul className="chat-attachments" aria-label="Attached to your next message" data-testid="chat-attachments">
          {attachments.map((a) => (
            <li key={a.attachmentId} className="chat-attachment">
              <span>
                {a.kind === 'resource' ? 'Resource' : 'Prompt'} <strong>{a.title}</strong> from {a.serverLabel} (the server&apos;s text)
              </span>
              <button type="button" className="button button-small" aria-label={`Remove ${a.title}`} onClick={() => removeAttachment(a.attachmentId)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <textarea className="input" rows={3} value={text} placeholder="Message the model (Enter sends, Shift+Enter for a new line, Esc stops)" aria-label="Message" data-testid="chat-input" onChange={(e) => setText(e.target.value)} onKeyDown={onKey} />
      <div className="chat-composer-actions">
        {busy ? (
          <button type="button" className="button button-danger" data-testid="chat-stop" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button type="button" className="button button-primary" data-testid="chat-send" disabled={!ready} onClick={() => void submit()}>
            Send
          </button>
        )}
        <span className="muted small" data-testid="chat-state" data-state={c.state}>
          {STATE_WORDS[c.state]}
        </span>
      </div>
    </div>
  );
}

function Conversation() {
  const c = useAppStore((s) => s.conversation)!;
  const rename = useAppStore((s) => s.renameConversation);
  const remove = useAppStore((s) => s.deleteConversation);
  const [editing, setEditing] = useState<string | null>(null);
  const [showTools, setShowTools] = useState(false);
  const end = useRef<HTMLDivElement>(null);
  const usage = useMemo(
    () => c.messages.reduce((sum, m) => ({ input: sum.input + (m.usage?.inputTokens ?? 0), output: sum.output + (m.usage?.outputTokens ?? 0) }), { input: 0, output: 0 }),
    [c.messages],
  );
  const last = c.messages[c.messages.length - 1];
  // Braces matter: newer Chromium returns a Promise from scrollIntoView, and an effect may only return a cleanup function.
  useEffect(() => {
    void end.current?.scrollIntoView?.({ block: 'end' });
  }, [c.messages.length, last?.text.length, last?.toolCalls.length]);
  return (
    <div className="chat-main">
      <header className="chat-head">
        {editing === null ? (
          <h1 className="chat-title" data-testid="chat-title">
            {c.title}
          </h1>
        ) : (
          <input className="input chat-title-input" value={editing} aria-label="Conversation title" autoFocus onChange={(e) => setEditing(e.target.value)} onKeyDown={(e) => {
            if (e.key === 'Enter' && editing.trim()) void rename(editing.trim()).then(() => setEditing(null));
            if (e.key === 'Escape') setEditing(null);
          }} />
        )}
        <div className="chat-head-actions">
          <button type="button" className="button" onClick={() => setEditing(editing === null ? c.title : null)}>
            {editing === null ? 'Rename' : 'Cancel'}
          </button>
          <button type="button" className="button" aria-expanded={showTools} onClick={() => setShowTools(!showTools)} data-testid="chat-tools-toggle">
            Tools here
          </button>
          <button type="button" className="button button-danger" onClick={() => void remove(c.id)} data-testid="chat-delete">
            Delete
          </button>
        </div>
        <ModelPicker />
        <p className="muted small chat-usage" data-testid="chat-usage">
          Tokens in this conversation: {usage.input} in · {usage.output} out
        </p>
      </header>
      {showTools ? <ToolsPanel /> : null}
      <div className="chat-messages" role="log" aria-label="Messages" aria-live="polite" data-testid="chat-messages">
        {c.messages.length === 0 ? <p className="empty">No messages yet. Every tool call the model makes will show here with Warden&apos;s decision.</p> : null}
        {c.messages.map((m) => (
          <Message key={m.id} message={m} />
        ))}
        <div ref={end} />
      </div>
      <Composer />
    </div>
  );
}

function Welcome() {
  const start = useAppStore((s) => s.startDemo);
  const create = useAppStore((s) => s.newConversation);
  const busy = useAppStore((s) => s.chatBusy);
  const dismissed = useAppStore((s) => s.welcomeDismissed);
  const dismiss = useAppStore((s) => s.dismissWelcome);
  const navigate = useAppStore((s) => s.navigate);
  const openSettingsAt = useAppStore((s) => s.openSettingsAt);
  const hasConversations = useAppStore((s) => s.conversations.length > 0);
  const demo = (
    <button type="button" className="button button-primary" disabled={busy} onClick={() => void start()} data-testid="chat-try-demo">
      {busy ? 'Starting the demo…' : 'Try the demo: summarise my inbox'}
    </button>
  );
  if (dismissed) {
    return (
      <div className="chat-main chat-welcome" data-testid="chat-no-conversation">
        <h1>No conversation open</h1>
        <p>{hasConversations ? 'Pick one on the left, or start a new one.' : 'You have no conversations yet: start one, or try the demo.'}</p>
        <div className="form-actions">
          <button type="button" className="button button-primary" onClick={() => void create()}>
            Start an empty conversation
          </button>
          {demo}
        </div>
      </div>
    );
  }
  return (
    <div className="chat-main chat-welcome" data-testid="chat-welcome">
      <div className="welcome-head">
        <h1>Chat with a model, and keep the final say</h1>
        <button type="button" className="button button-small" onClick={dismiss} data-testid="chat-welcome-dismiss">
          Dismiss
        </button>
      </div>
      <p>Every tool call a model makes goes through Warden first: some run at once, some wait for you, some are never allowed. The model cannot change that.</p>
      <ol className="welcome-steps">
        <li className="card">
          <h2>Try it offline in one click</h2>
          <p>
            The built-in demo has notes and an inbox. Its script model will read the inbox, find a message that tells it to delete your notes, and try. Warden&apos;s rules stop it: deleting notes is Disabled.
          </p>
          {demo}
        </li>
        <li className="card">
          <h2>Add or import your own servers</h2>
          <p>Connect the MCP servers you use, or import them from Claude Desktop, VS Code or Cursor. Each of their tools asks you until you decide otherwise.</p>
          <button type="button" className="button" onClick={() => navigate('servers')} data-testid="chat-welcome-servers">
            Go to Servers
          </button>
        </li>
        <li className="card">
          <h2>Add a model</h2>
          <p>Use your own Anthropic or OpenAI-compatible key, or a model running on this computer (Ollama, LM Studio).</p>
          <button type="button" className="button" onClick={() => openSettingsAt('models')} data-testid="chat-welcome-models">
            Add a model in Settings
          </button>
        </li>
      </ol>
      <button type="button" className="button" onClick={() => void create()}>
        Start an empty conversation
      </button>
    </div>
  );
}

/** The Chat view. */
export function ChatView() {
  const conversation = useAppStore((s) => s.conversation);
  const refresh = useAppStore((s) => s.refreshConversations);
  const error = useAppStore((s) => s.chatError);
  const stop = useAppStore((s) => s.stopReply);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  // Esc stops a reply from anywhere in the view, not only the message box.
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key === 'Escape' && conversation && conversation.state !== 'idle') void stop();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [conversation, stop]);
  return (
    <section className="chat" data-testid="view-chat" aria-label="Chat">
      <ConversationList />
      <div className="chat-body">
        <ErrorNote error={error} testId="chat-error" />
        {conversation ? <Conversation /> : <Welcome />}
      </div>
    </section>
  );
}
