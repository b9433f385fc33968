/**
 * Servers: a searchable list of every configured server (status, tool count, account, the enabled
 * switch, Restart / Disconnect in one click, and a summary line), each opening into its details:
 * the exact command line (or URL), accounts with their connection, sign-in for OAuth servers, the
 * stderr log ring, the server's instructions (sanitized, collapsed), the folders each account lets
 * the server work in (roots-panel.tsx), and the tools each account
 * lists with their permission mode (descriptions shown as the server's untrusted claim) and a Run
 * form; plus import from Claude Desktop / VS Code / Cursor.
 */
import { useEffect, useState } from 'react';
import type { AuthStatus } from '../../../shared/contract/auth';
import type { ToolView } from '../../../shared/contract/connections';
import type { AccountView, ServerView } from '../../../shared/domain/servers';
import { getWardenApi, toShownError, unwrap, type ShownError } from '../api';
import { ConnectionPill, ConnectionProblem, EmptyState, ErrorNote, ServerClaim, ViewFrame } from '../components/common';
import { InlineEntry } from '../components/form-field';
import { Markdown } from '../components/markdown';
import { RemoveAccount } from '../components/remove-account';
import { RowActions, ServerList, ServerSwitch } from './server-list';
import { useAppStore } from '../store';
import { connectionKey } from '../store/servers-slice';
import { ImportPanel } from './import-panel';
import { RootsPanel } from './roots-panel';
import { SamplingPanel } from './sampling-panel';
import { RunForm } from './run-form';
import { ServerDataPanel } from './server-data-panel';
import { ServerForm } from './server-form';

/** Runs an action, reporting a failure to `onError` instead of throwing. */
function useAction(): [ShownError | null, (work: () => Promise<unknown>) => Promise<void>] {
  const [error, setError] = useState<ShownError | null>(null);
  const run = async (work: () => Promise<unknown>) => {
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(toShownError(e));
    }
  };
  return [error, run];
}

/** Sign-in state and Sign in / Sign out for one account of an OAuth server (auth:* channels; no token ever reaches here). */
function OAuthControls({ serverId, accountId }: { serverId: string; accountId: string }) {
  const [status, setStatus] = useState<AuthStatus | null>(null);
  const [error, run] = useAction();
  useEffect(() => {
    void run(async () => setStatus(await unwrap(getWardenApi().auth.status({ serverId, accountId }))));
  }, [serverId, accountId]);
  return (
    <span className="inline-actions" data-testid={`auth-${serverId}-${accountId}`}>
      <span className="muted">
        {status?.loginInProgress
          ? 'Waiting for the browser sign-in…'
          : status?.signedIn
            ? `Signed in${status.issuer ? ` with ${status.issuer}` : ''}${status.expiresAt ? ` (token until ${new Date(status.expiresAt).toLocaleString()})` : ''}`
            : 'Not signed in'}
      </span>
      {status?.signedIn ? (
        <button type="button" className="button button-small" onClick={() => run(async () => setStatus(await unwrap(getWardenApi().auth.logout({ serverId, accountId }))))}>
          Sign out
        </button>
      ) : (
        <button type="button" className="button button-small" onClick={() => run(async () => setStatus(await unwrap(getWardenApi().auth.login({ serverId, accountId }))))}>
          Sign in…
        </button>
      )}
      <ErrorNote error={error} />
    </span>
  );
}

function SecretsEditor({ server, account }: { server: ServerView; account: AccountView }) {
  const setSecret = useAppStore((s) => s.setSecret);
  const clearSecret = useAppStore((s) => s.clearSecret);
  const [editing, setEditing] = useState<string | null>(null);
  const [error, run] = useAction();
  if (account.secrets.length === 0) return null;
  return (
    <div className="secrets">
      {account.secrets.map((s) => (
        <div className="secret-row" key={s.name}>
          <code>{s.name}</code>
          <span className={s.hasSecret ? 'pill pill-connected' : 'pill pill-error'}>{s.hasSecret ? 'in keychain' : 'not set'}</span>
          {editing === s.name ? (
            <InlineEntry
              formId={`secret-${account.id}-${s.name}`.replace(/[^a-zA-Z0-9_-]/g, '-')}
              label={`Value of ${s.name}`}
              secret
              missing={`Enter the value of ${s.name}: it goes to the OS keychain.`}
              submitLabel="Store"
              onSubmit={(v) => {
                setEditing(null);
                void run(() => setSecret(server.definition.id, account.id, s.name, v));
              }}
              onCancel={() => setEditing(null)}
            />
          ) : (
            <span className="inline-actions">
              <button type="button" className="button button-small" onClick={() => setEditing(s.name)}>
                {s.hasSecret ? 'Replace…' : 'Set…'}
              </button>
              {s.hasSecret ? (
                <button type="button" className="button button-small" onClick={() => run(() => clearSecret(server.definition.id, account.id, s.name))}>
                  Clear
                </button>
              ) : null}
            </span>
          )}
        </div>
      ))}
      <ErrorNote error={error} />
    </div>
  );
}

/** A tool's permission mode in words, from the permission matrix (the tool-level rule, or what applies without one). */
function ToolMode({ serverId, accountId, toolName, testId }: { serverId: string; accountId: string; toolName: string; testId: string }) {
  const row = useAppStore((s) => s.matrix.find((r) => r.serverId === serverId && r.accountId === accountId && r.toolName === toolName));
  if (!row) return null;
  const words = { allow: 'Always Allow', ask: 'Ask', deny: 'Disabled' } as const;
  const effective = words[row.effective as keyof typeof words] ?? row.effective;
  return (
    <span className={`pill pill-decision-${row.effective}`} data-testid={testId} title={row.explanation}>
      {row.mode ? effective : `${effective} (default)`}
    </span>
  );
}

function ToolList({ tools, testPrefix }: { tools: ToolView[]; testPrefix: string }) {
  const [running, setRunning] = useState<string | null>(null);
  if (tools.length === 0) return <p className="muted">No tools listed.</p>;
  return (
    <ul className="tool-list" data-testid={`${testPrefix}-tools`}>
      {tools.map((t) => (
        <li key={t.name} className="tool-item" data-testid={`tool-${t.name}`}>
          <div className="tool-head">
            <code className="tool-name">{t.name}</code>
            {t.title ? <span className="muted">{t.title}</span> : null}
            {t.annotations?.readOnlyHint === true ? <span className="pill pill-hint">read-only (claimed)</span> : null}
            {t.annotations?.destructiveHint === true ? <span className="pill pill-hint-danger">destructive (claimed)</span> : null}
            {t.unusable === undefined ? <ToolMode serverId={t.serverId} accountId={t.accountId} toolName={t.name} testId={`tool-mode-${t.name}`} /> : null}
            {t.unusable === undefined ? (
              <button type="button" className="button button-small push-right" data-testid={`tool-run-${t.name}`} onClick={() => setRunning(running === t.name ? null : t.name)}>
                Run…
              </button>
            ) : null}
          </div>
          {t.unusable !== undefined ? (
            <p className="msg-notice msg-notice-warning" data-testid={`tool-${t.name}-unusable`}>
              Warden never calls this tool: {t.unusable}.
            </p>
          ) : null}
          <div className="tool-desc">
            <ServerClaim testId={`tool-${t.name}-description`} flags={t.flags}>
              {t.description}
            </ServerClaim>
          </div>
          {running === t.name ? <RunForm tool={t} onClose={() => setRunning(null)} /> : null}
        </li>
      ))}
    </ul>
  );
}

function AccountPanel({ server, account }: { server: ServerView; account: AccountView }) {
  const serverId = server.definition.id;
  const key = connectionKey(serverId, account.id);
  const connection = useAppStore((s) => s.connections[key]);
  const tools = useAppStore((s) => s.tools[key]);
  const logs = useAppStore((s) => s.logs[key]);
  const connect = useAppStore((s) => s.connect);
  const disconnect = useAppStore((s) => s.disconnect);
  const loadLogs = useAppStore((s) => s.loadLogs);
  const loadTools = useAppStore((s) => s.loadTools);
  const renameAccount = useAppStore((s) => s.renameAccount);
  const switchAccount = useAppStore((s) => s.switchAccount);
  const openLink = useAppStore((s) => s.openLink);
  const [showLogs, setShowLogs] = useState(false);
  const [renaming, setRenaming] = useState<string | null>(null);
  const inChats = useAppStore((s) => s.chatAccounts[serverId] === account.id);
  const [error, run] = useAction();
  const state = connection?.status.state ?? 'disconnected';
  // Connected before this view opened (at launch, say): its tools are read when the panel shows.
  useEffect(() => {
    if (state === 'connected' && tools === undefined) void loadTools(serverId, account.id).catch(() => undefined);
  }, [state, tools, loadTools, serverId, account.id]);
  const instructions = connection && 'instructions' in connection ? connection.instructions : undefined;
  const instructionsFlags = connection && 'instructionsFlags' in connection ? connection.instructionsFlags : undefined;
  const prefix = `account-${serverId}-${account.id}`;

  return (
    <div className="account" data-testid={prefix}>
      <div className="account-head">
        {renaming !== null ? (
          <InlineEntry
            formId={`${prefix}-rename`}
            label="New name"
            initial={renaming}
            missing="Enter a name for this account, such as Work."
            submitLabel="Rename"
            onSubmit={(label) => {
              setRenaming(null);
              void run(() => renameAccount(account.id, label));
            }}
            onCancel={() => setRenaming(null)}
          />
        ) : (
          <strong className="account-label">{account.label}</strong>
        )}
        <ConnectionPill status={connection?.status} testId={`${prefix}-status`} />
        <span className="inline-actions push-right">
          {state === 'connected' || state === 'connecting' || state === 'error' ? (
            <button type="button" className="button button-small" data-testid={`${prefix}-disconnect`} onClick={() => run(() => disconnect(serverId, account.id))}>
              Disconnect
            </button>
          ) : null}
          {state !== 'connected' && state !== 'connecting' ? (
            <button type="button" className="button button-small button-primary" data-testid={`${prefix}-connect`} onClick={() => run(() => connect(serverId, account.id))}>
              Connect
            </button>
          ) : null}
          <button
            type="button"
            className="button button-small"
            data-testid={`${prefix}-logs-toggle`}
            onClick={() => {
              setShowLogs(!showLogs);
              if (!showLogs) void run(() => loadLogs(serverId, account.id));
            }}
          >
            {showLogs ? 'Hide log' : 'Log'}
          </button>
          {server.accounts.length > 1 ? (
            <button
              type="button"
              className="button button-small"
              data-testid={`${prefix}-use-in-chats`}
              onClick={() =>
                run(() => switchAccount(null, serverId, account.id))
              }
            >
              Use in chats
            </button>
          ) : null}
          <button type="button" className="button button-small" onClick={() => setRenaming(account.label)}>
            Rename…
          </button>
          {server.accounts.length > 1 ? <RemoveAccount serverId={serverId} accountId={account.id} label={account.label} serverLabel={server.definition.name} testIdPrefix={prefix} /> : null}
        </span>
      </div>
      {inChats ? (
        <p className="msg-notice" role="status" data-testid={`${prefix}-in-chats`}>
          Chats now use {account.label} for {server.definition.name}, except a conversation where you chose another account.
        </p>
      ) : null}
      <ConnectionProblem status={connection?.status} testId={`${prefix}-problem`} />
      {server.definition.transport === 'http' && server.definition.auth.kind === 'oauth' ? <OAuthControls serverId={serverId} accountId={account.id} /> : null}
      <SecretsEditor server={server} account={account} />
      <ErrorNote error={error} />
      {instructions ? (
        <>
          {instructionsFlags && instructionsFlags.length > 0 ? (
            // The note stays visible while the instructions themselves are collapsed.
            <p className="answer-flag claim-flag" role="note" data-testid={`${prefix}-instructions-flag`}>
              <strong>The server&apos;s instructions read like instructions to an AI model.</strong> Warden gives a model this text only as the server&apos;s untrusted
              words, and nothing in it can change what Warden allows. It {instructionsFlags.join('; ')}.
            </p>
          ) : null}
          <details className="server-instructions" data-testid={`${prefix}-instructions`}>
            <summary>Instructions from the server (its own words, not Warden&apos;s)</summary>
            <div className="claim">
              <span className="claim-label">Server says:</span>
              <Markdown text={instructions} onLink={(url) => void openLink(url)} />
            </div>
          </details>
        </>
      ) : null}
      {showLogs ? (
        <pre className="log-ring" data-testid={`${prefix}-logs`}>
          {(logs ?? []).length === 0 ? 'No log lines yet.' : (logs ?? []).map((l) => `${new Date(l.time).toISOString()} [${l.source}] ${l.text}`).join('\n')}
        </pre>
      ) : null}
      <RootsPanel serverId={serverId} accountId={account.id} serverName={server.definition.name} accountLabel={account.label} testPrefix={prefix} />
      <SamplingPanel serverId={serverId} accountId={account.id} serverName={server.definition.name} accountLabel={account.label} testPrefix={prefix} />
      {tools ? <ToolList tools={tools} testPrefix={prefix} /> : state === 'connected' ? <p className="muted">Loading tools…</p> : null}
      {state === 'connected' ? <ServerDataPanel serverId={serverId} accountId={account.id} serverName={server.definition.name} testPrefix={prefix} /> : null}
    </div>
  );
}

function ServerCard({ server, onEdit, onBack }: { server: ServerView; onEdit: () => void; onBack: () => void }) {
  const row = useAppStore((s) => s.overview?.servers.find((r) => r.serverId === server.definition.id));
  const removeServer = useAppStore((s) => s.removeServer);
  const addAccount = useAppStore((s) => s.addAccount);
  const [newAccount, setNewAccount] = useState<string | null>(null);
  const [confirmRemove, setConfirmRemove] = useState(false);
  const [error, run] = useAction();
  const d = server.definition;
  return (
    <article className="card server-card" data-testid={`server-${d.id}`}>
      <button type="button" className="link server-back" onClick={onBack} data-testid="server-details-back">
        ← All servers
      </button>
      <header className="card-head">
        <h2>{d.name}</h2>
        {row ? <ServerSwitch row={row} /> : null}
        {row ? <RowActions row={row} restartOnly /> : null}
        <span className="pill pill-hint">{d.transport === 'stdio' ? 'local' : d.transport === 'http' ? 'remote' : 'built-in'}</span>
        <span className="inline-actions push-right">
          {d.transport !== 'builtin' ? (
            <button type="button" className="button button-small" onClick={onEdit} data-testid={`server-${d.id}-edit`}>
              Edit…
            </button>
          ) : null}
          <button type="button" className="button button-small" onClick={() => setNewAccount('')}>
            Add account…
          </button>
          {confirmRemove ? (
            <>
              <button type="button" className="button button-small button-danger" onClick={() => run(() => removeServer(d.id))}>
                Remove server and its secrets
              </button>
              <button type="button" className="button button-small" onClick={() => setConfirmRemove(false)}>
                Keep
              </button>
            </>
          ) : (
            <button type="button" className="button button-small button-danger" onClick={() => setConfirmRemove(true)}>
              Remove…
            </button>
          )}
        </span>
      </header>
      {row?.notRetrying ? (
        <p className="msg-notice msg-notice-warning" role="status" data-testid={`server-${d.id}-not-retrying`}>
          Not retrying; press Connect to try again.
        </p>
      ) : null}
      {server.commandLine !== null ? (
        <div className="commandline">
          <span className="commandline-label">Runs exactly:</span>
          <pre data-testid={`server-${d.id}-commandline`}>{server.commandLine}</pre>
          {d.transport === 'stdio' && d.cwd ? <span className="muted">in {d.cwd}</span> : null}
        </div>
      ) : d.transport === 'http' ? (
        <div className="commandline">
          <span className="commandline-label">Connects to:</span>
          <pre>{d.url}</pre>
          <span className="muted">Authentication: {d.auth.kind}</span>
        </div>
      ) : (
        <div className="commandline" data-testid={`server-${d.id}-builtin`}>
          <span className="commandline-label">Built into Warden:</span>
          <span>
            The offline demo server runs inside Warden itself: nothing is started on this computer and nothing goes over the network. Its notes and
            files are make-believe and live in memory.
          </span>
        </div>
      )}
      {newAccount !== null ? (
        <InlineEntry
          formId={`server-${d.id}-new-account`}
          label="Name of the new account"
          placeholder="e.g. Work"
          missing="Enter a name for the new account, such as Work or Personal."
          submitLabel="Add"
          onSubmit={(label) => {
            setNewAccount(null);
            void run(() => addAccount(d.id, label, []));
          }}
          onCancel={() => setNewAccount(null)}
        />
      ) : null}
      <ErrorNote error={error} />
      {server.accounts.map((a) => (
        <AccountPanel key={a.id} server={server} account={a} />
      ))}
    </article>
  );
}

/** The Servers view: the list, or one server's details. */
export function ServersView() {
  const servers = useAppStore((s) => s.servers);
  const refreshServers = useAppStore((s) => s.refreshServers);
  const refreshMatrix = useAppStore((s) => s.refreshMatrix);
  const serversError = useAppStore((s) => s.serversError);
  const keychainProblem = useAppStore((s) => s.keychainProblem);
  const settingsProblem = useAppStore((s) => s.settingsProblem);
  const [editing, setEditing] = useState<ServerView | 'new' | null>(null);
  const [importing, setImporting] = useState(false);
  const selected = useAppStore((s) => s.openServerId);
  const setSelected = useAppStore((s) => s.openServer);
  const addServer = useAppStore((s) => s.addServer);
  const [demoError, runDemo] = useAction();
  const addDemo = () => runDemo(() => addServer({ name: 'Warden demo (built-in)', transport: 'builtin', builtin: 'demo' }, []));
  useEffect(() => {
    void refreshServers();
  }, [refreshServers]);
  // The details show each tool's permission mode.
  useEffect(() => {
    if (selected !== null) void refreshMatrix();
  }, [selected, refreshMatrix]);
  const open = servers.find((s) => s.definition.id === selected) ?? null;

  return (
    <ViewFrame
      id="servers"
      title={open ? `Servers › ${open.definition.name}` : 'Servers'}
      wide
      actions={
        <>
          <button type="button" className="button button-primary" data-testid="servers-add" onClick={() => (setImporting(false), setEditing('new'))}>
            Add server…
          </button>
          <button type="button" className="button" data-testid="servers-import" onClick={() => (setEditing(null), setImporting(true))}>
            Import…
          </button>
        </>
      }
      note={<p>Tool names, descriptions and instructions are what each server claims about itself. Warden shows them; it does not trust them.</p>}
    >
      <ErrorNote error={serversError} testId="servers-error" />
      {settingsProblem ? <p className="error-note">Settings file problem: {settingsProblem}</p> : null}
      {keychainProblem ? <p className="error-note">Keychain problem: {keychainProblem}</p> : null}
      {editing !== null ? <ServerForm server={editing === 'new' ? null : editing} onDone={() => setEditing(null)} /> : null}
      {importing ? <ImportPanel onDone={() => setImporting(false)} /> : null}
      {servers.length === 0 && editing === null && !importing ? (
        <EmptyState
          testId="servers-empty"
          title="No servers yet"
          actions={
            <>
              <button type="button" className="button button-primary" data-testid="servers-add-demo" onClick={() => void addDemo()}>
                Add the built-in demo server
              </button>
              <button type="button" className="button" onClick={() => (setImporting(false), setEditing('new'))}>
                Add a server…
              </button>
              <button type="button" className="button" onClick={() => (setEditing(null), setImporting(true))}>
                Import…
              </button>
            </>
          }
        >
          <p>A server gives Warden tools a model can ask to use. Start with one of these:</p>
          <ul>
            <li>The built-in demo server runs inside Warden, offline, with make-believe notes: a safe place to see approvals at work.</li>
            <li>Add a server of your own: a program on this computer, or a remote server at an https address.</li>
            <li>Import the servers you already set up in Claude Desktop, VS Code or Cursor.</li>
          </ul>
          <ErrorNote error={demoError} />
        </EmptyState>
      ) : null}
      {open ? (
        <ServerCard server={open} onEdit={() => (setImporting(false), setEditing(open))} onBack={() => setSelected(null)} />
      ) : servers.length > 0 ? (
        <ServerList servers={servers} onOpen={(id) => (setEditing(null), setImporting(false), setSelected(id))} />
      ) : null}
    </ViewFrame>
  );
}
