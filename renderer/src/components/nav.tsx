/**
 * The app frame's navigation between views: the views people work in, and Settings at the foot
 * of the sidebar. Collapsed, the sidebar shows only the icons; each button keeps its text label
 * for assistive technology, and the toggle above brings the labels back.
 */
import { useAppStore } from '../store';
import type { ViewId } from '../store/navigation-slice';
import { Icon } from './icons';

/** What each view is called where a person reads it. */
export const VIEW_LABELS: Record<ViewId, string> = {
  chat: 'Chat',
  servers: 'Servers',
  permissions: 'Permissions',
  approvals: 'Approvals',
  activity: 'Activity',
  recovery: 'Recovery',
  settings: 'Settings',
};

const MAIN_VIEWS: readonly ViewId[] = ['chat', 'servers', 'permissions', 'approvals', 'activity', 'recovery'];

function NavButton({ id, collapsed }: { id: ViewId; collapsed: boolean }) {
  const view = useAppStore((s) => s.view);
  const navigate = useAppStore((s) => s.navigate);
  const pending = useAppStore((s) => s.status?.pendingApprovals ?? 0);
  const unknown = useAppStore((s) => s.recoveryOperations.length);
  const badge = id === 'approvals' && pending > 0 ? pending : null;
  return (
    <button
      type="button"
      className={id === view ? 'nav-item nav-item-active' : 'nav-item'}
      aria-current={id === view ? 'page' : undefined}
      data-testid={`nav-${id}`}
      title={collapsed ? VIEW_LABELS[id] : undefined}
      onClick={() => navigate(id)}
    >
      <Icon name={id} />
      <span className="nav-label">{VIEW_LABELS[id]}</span>
      {badge !== null ? (
        <span className="badge" data-testid="nav-approvals-badge">
          {badge}
          <span className="visually-hidden"> waiting</span>
        </span>
      ) : null}
      {id === 'recovery' && unknown > 0 ? (
        <span className="badge badge-warn" data-testid="nav-recovery-badge" aria-label={`${unknown} with unknown outcome`}>
          {unknown}
        </span>
      ) : null}
    </button>
  );
}

/** Sidebar navigation; the Approvals entry carries the pending count the core reports. */
export function Nav({ collapsed }: { collapsed: boolean }) {
  return (
    <nav className="nav" aria-label="Views">
      <ul>
        {MAIN_VIEWS.map((id) => (
          <li key={id}>
            <NavButton id={id} collapsed={collapsed} />
          </li>
        ))}
      </ul>
      <ul className="nav-foot">
        <li>
          <NavButton id="settings" collapsed={collapsed} />
        </li>
      </ul>
    </nav>
  );
}
