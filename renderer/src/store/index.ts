/**
 * The renderer store: one zustand store built from slices, one per domain.
 *
 * Created once per window with the contract bridge injected, and handed to React through a
 * context, so tests can build a store over any `WardenApi` (e.g. one wired to a real core).
 */
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import { createStore, type StoreApi } from 'zustand/vanilla';
import { createCoreSlice } from './core-slice';
import { createNavigationSlice } from './navigation-slice';
import { createServersSlice } from './servers-slice';
import { createPermissionsSlice } from './permissions-slice';
import { createApprovalsSlice } from './approvals-slice';
import { createActivitySlice } from './activity-slice';
import { createModelsSlice } from './models-slice';
import { createChatSlice } from './chat-slice';
import { createLayoutSlice } from './layout-slice';
import { createSettingsSlice } from './settings-slice';
import { createServerDataSlice } from './server-data-slice';
import type { AppState, StoreDeps } from './types';

export type { AppState, StoreDeps } from './types';
export type AppStore = StoreApi<AppState>;

/**
 * Builds the store from every slice.
 *
 * Why a factory: the bridge is injected (window.warden in the app, anything contract-shaped in
 * tests) instead of being read from a global inside each slice.
 */
export function createAppStore(deps: StoreDeps): AppStore {
  return createStore<AppState>()((...a) => ({
    ...createCoreSlice(deps)(...a),
    ...createNavigationSlice(deps)(...a),
    ...createServersSlice(deps)(...a),
    ...createPermissionsSlice(deps)(...a),
    ...createApprovalsSlice(deps)(...a),
    ...createActivitySlice(deps)(...a),
    ...createModelsSlice(deps)(...a),
    ...createChatSlice(deps)(...a),
    ...createLayoutSlice(deps)(...a),
    ...createSettingsSlice(deps)(...a),
    ...createServerDataSlice(deps)(...a),
  }));
}

/** React context carrying the window's store; provided once in main.tsx. */
export const AppStoreContext = createContext<AppStore | null>(null);

/**
 * Selects from the store in a component.
 *
 * Why the explicit error: rendering outside the provider is a programming mistake that should
 * fail loudly on first render, not read undefined state.
 */
export function useAppStore<T>(selector: (state: AppState) => T): T {
  const store = useContext(AppStoreContext);
  if (!store) throw new Error('useAppStore: no AppStoreContext provider above this component');
  return useStore(store, selector);
}
