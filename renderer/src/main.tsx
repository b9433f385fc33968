/**
 * Renderer entry: builds the store over `window.warden` and mounts the app frame.
 */
// First: zod must be jitless before any schema exists (the CSP forbids eval).
import '../../shared/zod-jitless';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { getWardenApi } from './api';
import { App } from './App';
import { AppStoreContext, createAppStore } from './store';

const store = createAppStore({ api: getWardenApi });
// Before the first render: main delivers a menu or notification command as soon as the page has
// loaded, which can be before React's first effects run.
store.getState().watchAppCommands();
const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <AppStoreContext.Provider value={store}>
      <App />
    </AppStoreContext.Provider>
  </StrictMode>,
);
