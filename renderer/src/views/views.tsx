/**
 * The six views of the app frame (DESIGN.md §7). Each is a placeholder that says what it will
 * do; where the core already reports something relevant, that live value is shown.
 */
import type { JSX } from 'react';
import { useAppStore } from '../store';
import type { ViewId } from '../store/navigation-slice';
import { PlaceholderView } from './placeholder-view';

function ChatView() {
  return (
    <PlaceholderView
      id="chat"
      title="Chat"
      purpose={
        <>
          <p>Talk to a model with your MCP servers' tools. Every tool call the model proposes goes through Warden's gate first.</p>
          <p>Each call will show a trace: the rule that matched, the decision (allow, ask or deny), its status and any flags.</p>
        </>
      }
      live={<p>No model provider is configured in this version, so there is nothing to chat with yet.</p>}
    />
  );
}

function ServersView() {
  const servers = useAppStore((s) => s.status?.servers);
  return (
    <PlaceholderView
      id="servers"
      title="Servers"
      purpose={
        <p>
          Add and edit MCP servers (stdio and HTTP), their accounts, connection status and logs, and import servers from Claude
          Desktop, VS Code or Cursor configuration.
        </p>
      }
      live={
        servers ? (
          <p data-testid="servers-live">
            The core reports {servers.configured} configured and {servers.connected} connected.
          </p>
        ) : null
      }
    />
  );
}

function PermissionsView() {
  return (
    <PlaceholderView
      id="permissions"
      title="Permissions"
      purpose={
        <>
          <p>
            One row per server, account and tool with its mode: Always Allow, Ask or Disabled. Discovering a tool never grants
            it; new tools start at Ask.
          </p>
          <p>
            Descriptions come from the server and are shown as its claim, not as fact. A tool that changed since you allowed it
            is marked and falls back to Ask.
          </p>
        </>
      }
    />
  );
}

function ApprovalsView() {
  const pending = useAppStore((s) => s.status?.pendingApprovals);
  return (
    <PlaceholderView
      id="approvals"
      title="Approvals"
      purpose={
        <>
          <p>Tool calls waiting for your decision, each with a preview written by Warden from the tool and its exact arguments.</p>
          <p>
            Approving happens only in a native Warden dialog, never in this window: from here you will be able to open that
            dialog, reject or cancel.
          </p>
        </>
      }
      live={pending === undefined ? null : <p data-testid="approvals-live">The core reports {pending} pending.</p>}
    />
  );
}

function ActivityView() {
  const journal = useAppStore((s) => s.status?.journal);
  return (
    <PlaceholderView
      id="activity"
      title="Activity"
      purpose={<p>Every decision and every state change of every tool call, from the ledger, with filters and export.</p>}
      live={
        journal ? (
          <p data-testid="activity-live">
            The core's journal ({journal.kind}) holds {journal.records} records.
          </p>
        ) : null
      }
    />
  );
}

function RecoveryView() {
  return (
    <PlaceholderView
      id="recovery"
      title="Recovery"
      purpose={
        <p>
          Calls whose outcome is unknown because Warden stopped while they were running. Warden never resends them on its own;
          here you will check what happened and record it, or start a new call that needs its own decision.
        </p>
      }
    />
  );
}

const VIEW_COMPONENTS: Record<ViewId, () => JSX.Element> = {
  chat: ChatView,
  servers: ServersView,
  permissions: PermissionsView,
  approvals: ApprovalsView,
  activity: ActivityView,
  recovery: RecoveryView,
};

/** Shows the view the navigation slice has selected. */
export function CurrentView() {
  const view = useAppStore((s) => s.view);
  const View = VIEW_COMPONENTS[view];
  return <View />;
}
