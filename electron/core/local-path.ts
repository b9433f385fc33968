/**
 * Which paths count as files on this computer's own disks. Shared by everything that opens a path
 * it did not choose itself (import reads the file a person picked; the organization policy's
 * location comes from the registry).
 */
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
