/**
 * The production Windows adapters behind the organization policy's ports: the registry (through
 * reg.exe) and owners/access lists (through .NET in Windows PowerShell). Both programs are started
 * from the real system folder by absolute path, with an environment Warden builds itself:
 * environment variables (PATH, SystemRoot, PSModulePath, COR_PROFILER, …) are all settable by the
 * user whose policy this is, so none of them may decide which program answers or what it loads.
 *
 * The system folder comes from the path of ntdll.dll among this process's own loaded modules
 * (Node's diagnostic report lists them): the kernel maps ntdll from the real system folder into
 * every process, so no variable or search path can redirect it.
 */
import { execFile } from 'node:child_process';
import { win32 } from 'node:path';
import type { WindowsRegistry } from './organization-location';
import type { WindowsSecurity } from './organization-guard';

/** Runs a program and resolves its standard output (utf8). */
export type RunProgram = (file: string, args: readonly string[], env: Record<string, string>) => Promise<string>;

const runProgram: RunProgram = (file, args, env) =>
  new Promise((resolve, reject) => {
    execFile(file, [...args], { env, windowsHide: true, timeout: 20_000, maxBuffer: 1024 * 1024, encoding: 'utf8' }, (error, stdout) => {
      if (error) reject(Object.assign(error, { stdout }));
      else resolve(stdout);
    });
  });

/** The real System32 folder, from the loaded ntdll.dll (see the file comment). */
export function windowsSystemFolder(getReport: () => unknown = () => process.report?.getReport()): string {
  const report = getReport() as { sharedObjects?: unknown } | undefined;
  const modules = Array.isArray(report?.sharedObjects) ? report.sharedObjects : [];
  const ntdll = modules.find((m): m is string => typeof m === 'string' && /^[A-Za-z]:\\.*\\ntdll\.dll$/i.test(m));
  if (!ntdll) throw new Error('the Windows system folder could not be found (ntdll.dll is not among the loaded modules)');
  return win32.dirname(ntdll);
}

/** An environment with nothing from the user's: only what the program needs to start. */
function cleanEnv(systemFolder: string): Record<string, string> {
  const windows = win32.dirname(systemFolder);
  return { SystemRoot: windows, windir: windows, SystemDrive: windows.slice(0, 2) };
}

/** One value from `reg query <key> /v <name>` output, as stored (REG_EXPAND_SZ unexpanded); null if absent. */
export function parseRegQuery(output: string, name: string): string | null {
  for (const line of output.split(/\r?\n/)) {
    const m = /^\s+(.+?) {4}(REG_[A-Z_]+) {4}(.*)$/.exec(line);
    if (m && m[1]!.toLowerCase() === name.toLowerCase()) return m[3]!;
  }
  return null;
}

/** The registry through `<System32>\reg.exe`. */
export function regExeRegistry(systemFolder: string, run: RunProgram = runProgram): WindowsRegistry {
  return {
    async readValue(key, name) {
      let out: string;
      try {
        out = await run(win32.join(systemFolder, 'reg.exe'), ['query', key, '/v', name], cleanEnv(systemFolder));
      } catch (error) {
        // reg.exe exits with 1 when the key or value does not exist.
        if ((error as { code?: unknown }).code === 1) return null;
        throw error;
      }
      return parseRegQuery(out, name);
    },
  };
}

/** Prints the owner+DACL SDDL of each path in WARDEN_POLICY_PATHS (one per line), using .NET only: no cmdlet, so no module is loaded. */
const SDDL_SCRIPT = [
  "$ErrorActionPreference = 'Stop'",
  "$sections = [System.Security.AccessControl.AccessControlSections]'Owner, Access'",
  'foreach ($p in $env:WARDEN_POLICY_PATHS.Split([char]10)) {',
  '  if ([System.IO.Directory]::Exists($p)) { $s = [System.Security.AccessControl.DirectorySecurity]::new($p, $sections) }',
  '  else { $s = [System.Security.AccessControl.FileSecurity]::new($p, $sections) }',
  '  [Console]::Out.WriteLine($s.GetSecurityDescriptorSddlForm($sections))',
  '}',
].join('\n');

/** Owners and access lists through `<System32>\WindowsPowerShell\v1.0\powershell.exe` (no profile, no modules). */
export function powershellSecurity(systemFolder: string, run: RunProgram = runProgram): WindowsSecurity {
  const home = win32.join(systemFolder, 'WindowsPowerShell', 'v1.0');
  return {
    async sddl(paths) {
      const out = await run(
        win32.join(home, 'powershell.exe'),
        ['-NoLogo', '-NoProfile', '-NonInteractive', '-EncodedCommand', Buffer.from(SDDL_SCRIPT, 'utf16le').toString('base64')],
        { ...cleanEnv(systemFolder), PSModulePath: win32.join(home, 'Modules'), WARDEN_POLICY_PATHS: paths.join('\n') },
      );
      return out.split(/\r?\n/).filter((l) => l.trim() !== '');
    },
  };
}

/** The registry and access-list ports for this Windows machine; each fails with a plain reason if the system folder cannot be found. */
export function windowsPolicyPorts(getReport?: () => unknown): { registry: WindowsRegistry; security: WindowsSecurity } {
  let folder: string | undefined;
  const systemFolder = () => (folder ??= windowsSystemFolder(getReport));
  return {
    registry: { readValue: (key, name) => regExeRegistry(systemFolder()).readValue(key, name) },
    security: { sddl: (paths) => powershellSecurity(systemFolder()).sddl(paths) },
  };
}
