/**
 * The shape of the renderer store and the slice-creator type every slice uses.
 *
 * The store is a cache of state the main process owns, plus UI state (which view is open). It
 * holds no secrets and has no way to approve a tool call: the contract has no approve channel.
 * To add a slice (serversSlice, permissionsSlice, approvalsSlice, activitySlice, ...): write
 * `store/<name>-slice.ts` exporting its state type and a `SliceCreator`, add the type to
 * `AppState` below and spread the creator in `createAppStore` (store/index.ts).
 */
import type { StateCreator } from 'zustand';
import type { WardenApi } from '../../../shared/ipc';
import type { CoreSlice } from './core-slice';
import type { NavigationSlice } from './navigation-slice';
import type { ServersSlice } from './servers-slice';
import type { PermissionsSlice } from './permissions-slice';
import type { ApprovalsSlice } from './approvals-slice';
import type { ActivitySlice } from './activity-slice';
import type { ModelsSlice } from './models-slice';
import type { ChatSlice } from './chat-slice';
import type { KeyValueStorage, LayoutSlice } from './layout-slice';
import type { SettingsSlice } from './settings-slice';
import type { ServerDataSlice } from './server-data-slice';

/** Everything in the store: the intersection of all slices. */
export type AppState = CoreSlice & NavigationSlice & ServersSlice & PermissionsSlice & ApprovalsSlice & ActivitySlice & ModelsSlice & ChatSlice & LayoutSlice & SettingsSlice & ServerDataSlice;

/** What slices receive besides zustand's set/get: the contract bridge they talk through. */
export interface StoreDeps {
  /** Returns the bridge or throws NOT_CONNECTED (see api.ts `getWardenApi`). */
  api: () => WardenApi;
  /** Where UI layout choices are remembered; default: the window's localStorage (null: nowhere). */
  storage?: KeyValueStorage | null;
}

/** A slice creator: zustand's `StateCreator` over the whole store, with injected deps. */
export type SliceCreator<S> = (deps: StoreDeps) => StateCreator<AppState, [], [], S>;
