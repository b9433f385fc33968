/**
 * Where Claude Desktop, VS Code and Cursor keep their MCP server lists, per OS (issue 5 §7).
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

// Windows opens these names as devices in any folder, with or without an extension.
const WINDOWS_DEVICE_NAME = /^(?:con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])(?:\..*)?$/i;

/**
 * Why `path` is not a file on this computer's own disks, or null if it is.
 *
 * Refused: network and device paths (`\\server\share`, `//server/share`, `\\?\…`, `\\.\…`,
 * `\??\…`) on every platform — on Windows merely opening one makes the system authenticate to the
 * remote host — relative paths, NUL characters, and on Windows reserved device names (`CON`,
 * `NUL`, `COM1`, …) and drive-relative paths (`C:mcp.json`).
 */
export function localPathProblem(path: string, platform: NodeJS.Platform): string | null {
  if (path.includes('\0')) return 'contains a NUL character';
  if (/^[\\/]{2}/.test(path) || /^\\\?\?\\/.test(path)) return "is a network or device path; Warden reads config files only from this computer's own disks (copy the file to a local folder first)";
  if (platform === 'win32') {
    if (!/^[A-Za-z]:[\\/]/.test(path)) return 'must be a full path starting with a drive, such as C:\\Users\\you\\mcp.json';
    const device = path.split(/[\\/]/).find((part) => WINDOWS_DEVICE_NAME.test(part.replace(/[ .]+$/, '')));
    if (device !== undefined) return `names the Windows device "${device}", not a file`;
    return null;
  }
  if (!path.startsWith('/')) return 'must be a full path starting with /';
  return null;
}
