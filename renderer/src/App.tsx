/**
 * The app frame: a collapsible sidebar, the current view, banners and the status bar.
 */
import { useEffect } from 'react';
import { CoreErrorBanner, SafeModeBanner, StatusPanel } from './components/status-panel';
import { Icon } from './components/icons';
import { Nav } from './components/nav';
import { NavigationNotice } from './components/navigation-notice';
import { useAppStore } from './store';
import { isSidebarCollapsed } from './store/layout-slice';
import { CurrentView } from './views/views';
import { RecoveryBanner } from './views/recovery-view';
import { ServerQuestions } from './views/server-questions';

/** The sidebar: brand, collapse toggle, navigation and the one thing this window cannot do. */
function Sidebar() {
  const collapsed = useAppStore((s) => isSidebarCollapsed(s.sidebarPreference, s.narrowWindow));
  const toggleSidebar = useAppStore((s) => s.toggleSidebar);
  return (
    <aside className="sidebar" aria-label="Warden" data-collapsed={collapsed ? 'true' : 'false'} data-testid="sidebar">
      <div className="brand">
        <span className="brand-mark" aria-hidden="true" />
        <span className="brand-name">Warden</span>
        <button
          type="button"
          className="sidebar-toggle"
          aria-expanded={!collapsed}
          aria-controls="sidebar-nav"
          title={collapsed ? 'Show the sidebar labels' : undefined}
          data-testid="sidebar-toggle"
          onClick={toggleSidebar}
        >
          <Icon name="sidebar" />
          <span className="visually-hidden">{collapsed ? 'Expand the sidebar' : 'Collapse the sidebar'}</span>
        </button>
      </div>
      <div id="sidebar-nav" className="sidebar-nav">
        <Nav collapsed={collapsed} />
      </div>
      {collapsed ? null : <p className="sidebar-note">This window cannot approve tool calls. Approvals happen in Warden's own dialog.</p>}
    </aside>
  );
}

/**
 * Root component: subscribes to core status for the window's lifetime and lays out the frame.
 *
 * Subscribes before fetching so an event pushed while the first fetch is in flight is not lost.
 */
export function App() {
  const refreshStatus = useAppStore((s) => s.refreshStatus);
  const watchStatus = useAppStore((s) => s.watchStatus);
  const watchServers = useAppStore((s) => s.watchServers);
  const refreshServers = useAppStore((s) => s.refreshServers);
  const watchPermissions = useAppStore((s) => s.watchPermissions);
  const watchApprovals = useAppStore((s) => s.watchApprovals);
  const watchActivity = useAppStore((s) => s.watchActivity);
  const watchChat = useAppStore((s) => s.watchChat);
  const watchWindowWidth = useAppStore((s) => s.watchWindowWidth);
  const collapsed = useAppStore((s) => isSidebarCollapsed(s.sidebarPreference, s.narrowWindow));
  useEffect(() => {
    const unsubscribe = watchStatus();
    void refreshStatus();
    return unsubscribe;
  }, [refreshStatus, watchStatus]);
  // The views' caches follow main's events for the window's lifetime, whichever view is open.
  useEffect(() => {
    const offs = [watchServers(), watchPermissions(), watchApprovals(), watchActivity(), watchChat()];
    // Server and account names are needed wherever ids would otherwise show (Activity, Recovery).
    void refreshServers();
    return () => offs.forEach((off) => off());
  }, [watchServers, watchPermissions, watchApprovals, watchActivity, watchChat, refreshServers]);
  useEffect(() => watchWindowWidth(), [watchWindowWidth]);

  return (
    <div className={collapsed ? 'frame frame-collapsed' : 'frame'} data-testid="app-frame">
      <Sidebar />
      <main className="content">
        <SafeModeBanner />
        <CoreErrorBanner />
        <NavigationNotice />
        <RecoveryBanner />
        <ServerQuestions />
        <CurrentView />
      </main>
      <StatusPanel />
    </div>
  );
}
