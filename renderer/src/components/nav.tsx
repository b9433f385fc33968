/**
 * The app frame's navigation between views.
 */
import { useAppStore } from '../store';
import { VIEW_IDS, type ViewId } from '../store/navigation-slice';

const LABELS: Record<ViewId, string> = {
  chat: 'Chat',
  servers: 'Servers',
  permissions: 'Permissions',
  approvals: 'Approvals',
  activity: 'Activity',
  recovery: 'Recovery',
  models: 'Models',
};

/** Sidebar navigation; the Approvals entry carries the pending count the core reports. */
export function Nav() {
  const view = useAppStore((s) => s.view);
  const navigate = useAppStore((s) => s.navigate);
  const pending = useAppStore((s) => s.status?.pendingApprovals ?? 0);
  const unknown = useAppStore((s) => s.recoveryOperations.length);
  return (
    <nav className="nav" aria-label="Views">
      <ul>
        {VIEW_IDS.map((id) => (
          <li key={id}>
            <button
              type="button"
              className={id === view ? 'nav-item nav-item-active' : 'nav-item'}
              aria-current={id === view ? 'page' : undefined}
              data-testid={`nav-${id}`}
              onClick={() => navigate(id)}
            >
              <span>{LABELS[id]}</span>
              {id === 'approvals' && pending > 0 ? (
                <span className="badge" data-testid="nav-approvals-badge" aria-label={`${pending} pending`}>
                  {pending}
                </span>
              ) : null}
              {id === 'recovery' && unknown > 0 ? (
                <span className="badge badge-warn" data-testid="nav-recovery-badge" aria-label={`${unknown} with unknown outcome`}>
                  {unknown}
                </span>
              ) : null}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
