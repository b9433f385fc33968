/**
 * The app frame: navigation, the current view, banners and the live status bar.
 */
import { useEffect } from 'react';
import { CoreErrorBanner, SafeModeBanner, StatusPanel } from './components/status-panel';
import { Nav } from './components/nav';
import { NavigationNotice } from './components/navigation-notice';
import { useAppStore } from './store';
import { CurrentView } from './views/views';
import { RecoveryBanner } from './views/recovery-view';

/**
 * Root component: subscribes to core status for the window's lifetime and lays out the frame.
 *
 * Subscribes before fetching so an event pushed while the first fetch is in flight is not lost.
 */
export function App() {
  const refreshStatus = useAppStore((s) => s.refreshStatus);
  const watchStatus = useAppStore((s) => s.watchStatus);
  const watchServers = useAppStore((s) => s.watchServers);
  const watchPermissions = useAppStore((s) => s.watchPermissions);
  const watchApprovals = useAppStore((s) => s.watchApprovals);
  const watchActivity = useAppStore((s) => s.watchActivity);
  const watchChat = useAppStore((s) => s.watchChat);
  useEffect(() => {
    const unsubscribe = watchStatus();
    void refreshStatus();
    return unsubscribe;
  }, [refreshStatus, watchStatus]);
  // The views' caches follow main's events for the window's lifetime, whichever view is open.
  useEffect(() => {
    const offs = [watchServers(), watchPermissions(), watchApprovals(), watchActivity(), watchChat()];
    return () => offs.forEach((off) => off());
  }, [watchServers, watchPermissions, watchApprovals, watchActivity, watchChat]);

  return (
    <div className="frame" data-testid="app-frame">
      <aside className="sidebar">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true" />
          <span className="brand-name">Warden</span>
        </div>
        <Nav />
        <p className="sidebar-note">This window cannot approve tool calls. Approvals happen in Warden's own dialog.</p>
      </aside>
      <main className="content">
        <SafeModeBanner />
        <CoreErrorBanner />
        <NavigationNotice />
        <RecoveryBanner />
        <CurrentView />
      </main>
      <StatusPanel />
    </div>
  );
}
