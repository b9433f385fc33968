/**
 * A short note about a menu command this version cannot carry out (e.g. Settings before there is
 * a Settings view), so a shortcut never seems to do nothing.
 */
import { useAppStore } from '../store';

export function NavigationNotice() {
  const notice = useAppStore((s) => s.navigationNotice);
  const dismiss = useAppStore((s) => s.dismissNavigationNotice);
  if (!notice) return null;
  return (
    <div className="banner view" role="status" data-testid="navigation-notice">
      <span>{notice}</span>
      <button type="button" className="button" onClick={dismiss}>
        Dismiss
      </button>
    </div>
  );
}
