/**
 * The views of the app frame, each in its own file. Chat is the home; model providers live in
 * Settings.
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
import { SettingsView } from './settings-view';

const VIEW_COMPONENTS: Record<ViewId, () => JSX.Element> = {
  chat: ChatView,
  servers: ServersView,
  permissions: PermissionsView,
  approvals: ApprovalsView,
  activity: ActivityView,
  recovery: RecoveryView,
  settings: SettingsView,
};

/** Shows the view the navigation slice has selected. */
export function CurrentView() {
  const view = useAppStore((s) => s.view);
  const View = VIEW_COMPONENTS[view];
  return <View />;
}
