/**
 * The views of the app frame, each in its own file. Chat is the home.
 */
import type { JSX } from 'react';
import { useAppStore } from '../store';
import type { ViewId } from '../store/navigation-slice';
import { ChatView } from './chat-view';
import { ActivityView } from './activity-view';
import { ApprovalsView } from './approvals-view';
import { PermissionsView } from './permissions-view';
import { RecoveryView } from './recovery-view';
import { ServersView } from './servers-view';
import { ModelsPanel } from './models-panel';
import { ViewFrame } from '../components/common';

/** The Models panel in its own view until a Settings view hosts it. */
function ModelsView() {
  return (
    <ViewFrame
      id="models"
      title="Models"
      note={
        <p>
          The model providers you can chat with. Your conversation goes to the provider you pick; the tools it may use and every approval stay decided by
          Warden, whichever model you choose. API keys are kept in your system keychain and only ever sent to the host you entered them for.
        </p>
      }
    >
      <ModelsPanel />
    </ViewFrame>
  );
}

const VIEW_COMPONENTS: Record<ViewId, () => JSX.Element> = {
  chat: ChatView,
  servers: ServersView,
  permissions: PermissionsView,
  approvals: ApprovalsView,
  activity: ActivityView,
  recovery: RecoveryView,
  models: ModelsView,
};

/** Shows the view the navigation slice has selected. */
export function CurrentView() {
  const view = useAppStore((s) => s.view);
  const View = VIEW_COMPONENTS[view];
  return <View />;
}
