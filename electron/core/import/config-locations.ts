/**
 * Where Claude Desktop, VS Code and Cursor keep their MCP server lists, per OS.
 * Pure: the platform, environment and home folder are injected, so every OS is testable here.
 */
import { posix, win32 } from 'node:path';
import type { ImportSource } from '../../../shared/contract/servers';
import { WardenError } from '../../../shared/result';

/** The machine facts locations depend on. */
export interface LocationContext {
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  /** For `vscode-workspace`. */
  workspaceFolder?: string;
}

/**
 * The default config path of `source` on this machine.
 *
 * macOS: ~/Library/Application Support/{Claude,Code/User}; Windows: %APPDATA%\{Claude,Code\User};
 * Linux: $XDG_CONFIG_HOME (or ~/.config)/{Claude,Code/User}; Cursor: ~/.cursor/mcp.json
 * everywhere; VS Code workspace: <folder>/.vscode/mcp.json.
 */
export function defaultConfigPath(source: Exclude<ImportSource, 'file'>, ctx: LocationContext): string {
  const p = ctx.platform === 'win32' ? win32 : posix;
  const appData = (): string => {
    if (ctx.platform === 'darwin') return p.join(ctx.home, 'Library', 'Application Support');
    if (ctx.platform === 'win32') return ctx.env.APPDATA || p.join(ctx.home, 'AppData', 'Roaming');
    return ctx.env.XDG_CONFIG_HOME || p.join(ctx.home, '.config');
  };
  switch (source) {
    case 'claude-desktop':
      return p.join(appData(), 'Claude', 'claude_desktop_config.json');
    case 'vscode-user':
      return p.join(appData(), 'Code', 'User', 'mcp.json');
    case 'vscode-workspace':
      if (!ctx.workspaceFolder) throw new WardenError('VALIDATION_FAILED', 'workspaceFolder: required to import a VS Code workspace config');
      return p.join(ctx.workspaceFolder, '.vscode', 'mcp.json');
    case 'cursor':
      return p.join(ctx.home, '.cursor', 'mcp.json');
  }
}

