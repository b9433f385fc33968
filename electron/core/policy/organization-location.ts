/**
 * Where the managed (organization) policy file is, per OS.
 *
 * On Windows it lives in ProgramData. The `ProgramData` environment variable cannot say where that
 * is: any user can set it (for example with `setx ProgramData C:\Users\me\x`) and so point Warden
 * at a folder with no policy. The known-folder location comes from the registry instead:
 * `HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion\ProfileList` value `ProgramData` (what the
 * known-folder API itself reads, normally `%SystemDrive%\ProgramData`), with `%SystemDrive%`
 * taken from the registry's `SystemRoot` value rather than from the environment. HKLM is writable
 * only by administrators. The registry is reached through the small `WindowsRegistry` port so
 * this logic is tested on any OS.
 */
import { win32 } from 'node:path';
import { localPathProblem } from '../local-path';

/** Reads one value of a registry key as stored (REG_EXPAND_SZ values are not expanded). */
export interface WindowsRegistry {
  /** The value's data, or null when the key or value does not exist. */
  readValue(key: string, name: string): Promise<string | null>;
}

export const PROFILE_LIST_KEY = 'HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\ProfileList';
export const CURRENT_VERSION_KEY = 'HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion';

/**
 * ProgramData's location from the registry, never from the environment. Throws an Error saying
 * what is wrong when the registry does not give a plain local folder.
 */
export async function programDataFromRegistry(registry: WindowsRegistry): Promise<string> {
  const raw = await registry.readValue(PROFILE_LIST_KEY, 'ProgramData');
  if (!raw) throw new Error(`the registry value ${PROFILE_LIST_KEY}\\ProgramData is missing`);
  let expanded = raw.trim();
  if (/%[^%]+%/.test(expanded)) {
    const systemRoot = (await registry.readValue(CURRENT_VERSION_KEY, 'SystemRoot'))?.trim() ?? '';
    const drive = /^([A-Za-z]:)\\/.exec(systemRoot)?.[1];
    if (!drive) throw new Error(`the registry value ${CURRENT_VERSION_KEY}\\SystemRoot (${JSON.stringify(systemRoot)}) does not start with a drive`);
    // Only the variables Windows itself uses here, resolved from the registry; anything else would come from the environment.
    expanded = expanded.replace(/%([^%]+)%/g, (whole, name: string) => {
      const upper = name.toUpperCase();
      if (upper === 'SYSTEMDRIVE') return drive;
      if (upper === 'SYSTEMROOT' || upper === 'WINDIR') return systemRoot;
      throw new Error(`the registry value ${PROFILE_LIST_KEY}\\ProgramData (${JSON.stringify(raw)}) uses ${whole}, which Warden will not take from the environment`);
    });
  }
  const problem = localPathProblem(expanded, 'win32');
  if (problem) throw new Error(`ProgramData from the registry (${JSON.stringify(expanded)}) ${problem}`);
  // reg.exe prints in the console code page; a replaced character means the name was not read faithfully.
  if (/[?\uFFFD]/.test(expanded)) throw new Error(`ProgramData from the registry (${JSON.stringify(expanded)}) could not be read faithfully`);
  return expanded;
}

/**
 * The managed policy file's path: `/etc/warden/policy.json` (Linux and other Unix),
 * `/Library/Application Support/Warden/policy.json` (macOS), `<ProgramData>\Warden\policy.json`
 * (Windows, ProgramData from the registry). Throws when the Windows location cannot be read.
 */
export async function organizationPolicyPath(platform: NodeJS.Platform, registry?: WindowsRegistry): Promise<string> {
  if (platform === 'win32') {
    if (!registry) throw new Error('no access to the Windows registry on this host');
    return win32.join(await programDataFromRegistry(registry), 'Warden', 'policy.json');
  }
  if (platform === 'darwin') return '/Library/Application Support/Warden/policy.json';
  return '/etc/warden/policy.json';
}
