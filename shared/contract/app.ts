/**
 * Contract entries for the desktop shell: commands that main's application menu and system
 * notifications send to the window, and the appearance (theme) preference.
 *
 * A command only moves the window around (show a view, start a chat, open settings): none of
 * them can approve, deny or run anything, and they flow one way, main → renderer.
 */
import { z } from 'zod';
import { defineChannels, defineEvents } from '../contract-kit';

/** The views a command can open, in the order of the menu and its Ctrl/Cmd+1…6 shortcuts. */
export const APP_VIEWS = ['chat', 'servers', 'permissions', 'approvals', 'activity', 'recovery'] as const;
export const AppView = z.enum(APP_VIEWS);
export type AppView = z.infer<typeof AppView>;

/** What the menu or a notification asks the window to do. */
export const AppCommand = z.discriminatedUnion('type', [
  z.object({ type: z.literal('show-view'), view: AppView }).strict(),
  z.object({ type: z.literal('new-chat') }).strict(),
  z.object({ type: z.literal('open-settings') }).strict(),
]);
export type AppCommand = z.infer<typeof AppCommand>;

/** How Warden is drawn: following the operating system, or always light or dark. */
export const ThemePreference = z.enum(['system', 'light', 'dark']);
export type ThemePreference = z.infer<typeof ThemePreference>;

/** The stored preference and what it comes to right now. */
export const ThemeState = z.object({
  preference: ThemePreference,
  dark: z.boolean().describe('true when Warden is drawn dark right now (the preference, or the system when it is "system")'),
});
export type ThemeState = z.infer<typeof ThemeState>;

export const appEvents = defineEvents({
  /** Sent by main when the person uses the application menu or clicks a Warden notification. */
  'app:command': { doc: 'The application menu or a notification asks the window to show something.', payload: AppCommand },
});

export const themeChannels = defineChannels({
  'theme:get': {
    doc: 'The theme preference (system, light or dark) and whether Warden is drawn dark right now.',
    request: z.object({}).strict(),
    response: ThemeState,
  },
  'theme:set': {
    doc: 'Stores the theme preference and applies it to the whole app (window, menus, dialogs).',
    request: z.object({ preference: ThemePreference }).strict(),
    response: ThemeState,
  },
});

export const themeEvents = defineEvents({
  /** Pushed when the preference changes, or the system appearance changes while it is "system". */
  'theme:changed': { doc: 'The theme preference or the system appearance changed.', payload: ThemeState },
});
