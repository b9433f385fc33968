/**
 * The organization policy on Windows, through the ports production uses (the registry, and owners
 * and access lists as SDDL), so every case runs on any OS. A user who wants the policy gone tries
 * to: point the ProgramData environment variable elsewhere; create or own the policy folder before
 * an administrator does; get write or delete rights on the file or on a folder above it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { decide } from '../../../electron/core/policy';
import { loadManagedOrganizationPolicy } from '../../../electron/core/policy/organization';
import { sddlProblems } from '../../../electron/core/policy/organization-guard';
import { CURRENT_VERSION_KEY, PROFILE_LIST_KEY, organizationPolicyPath, type WindowsRegistry } from '../../../electron/core/policy/organization-location';
import { parseRegQuery, powershellSecurity, regExeRegistry, windowsSystemFolder, type RunProgram } from '../../../electron/core/policy/windows-system';
import type { PolicyContext, PolicyState } from '../../../shared/domain/policy';

const ctx: PolicyContext = { tool: { contractHash: 'c', endpointHash: 'e' }, paths: 'win32' };
const req = { serverId: 'gh', accountId: 'work', toolName: 'close_issue', conversationId: null, arguments: {} };
const decideWith = (organization: PolicyState['organization']) =>
  decide(req, { organization, conversation: [], user: [{ id: 'u', scope: { kind: 'global' }, mode: 'allow', pin: null }], safeMode: false }, ctx);

/** The registry of a standard installation on drive D:. */
function registry(values: Record<string, string | null> = {}): WindowsRegistry & { asked: string[] } {
  const all: Record<string, string | null> = {
    [`${PROFILE_LIST_KEY}\\ProgramData`]: '%SystemDrive%\\ProgramData',
    [`${CURRENT_VERSION_KEY}\\SystemRoot`]: 'D:\\WINDOWS',
    ...values,
  };
  const asked: string[] = [];
  return { asked, readValue: async (key, name) => (asked.push(`${key}\\${name}`), all[`${key}\\${name}`] ?? null) };
}

const FILE = 'D:\\ProgramData\\Warden\\policy.json';
const TI = 'S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464';
/** Owners and access lists as Windows sets them when an administrator creates ProgramData\Warden\policy.json. */
const STANDARD: Record<string, string> = {
  [FILE]: 'O:BAG:SYD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)(A;ID;0x1200a9;;;BU)',
  'D:\\ProgramData\\Warden': 'O:BAG:SYD:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIIOID;FA;;;CO)(A;OICIID;0x1200a9;;;BU)(A;CIID;DCLCRPCR;;;BU)',
  'D:\\ProgramData': 'O:SYG:SYD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICIIO;FA;;;CO)(A;OICI;0x1200a9;;;BU)(A;CI;DCLCRPCR;;;BU)',
  'D:\\': `O:${TI}G:${TI}D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)(A;OICIIO;SDGXGWGR;;;AU)(A;;LC;;;AU)`,
};
const POLICY = JSON.stringify({ version: 1, rules: [{ id: 'no-delete', toolName: 'delete_repo', mode: 'forbid' }] });

function load(sddl: Record<string, string> = STANDARD, reg = registry(), text: string | null = POLICY) {
  return loadManagedOrganizationPolicy({
    platform: 'win32',
    registry: reg,
    security: { sddl: async (paths) => paths.map((p) => sddl[p] ?? 'O:BAG:SYD:(A;;FA;;;SY)') },
    readText: async (p) => (p === FILE ? text : null),
  });
}

const saved = process.env.ProgramData;
afterEach(() => {
  if (saved === undefined) delete process.env.ProgramData;
  else process.env.ProgramData = saved;
});

describe('where the Windows policy is: ProgramData from the registry, never from the environment', () => {
  it('a user-set ProgramData variable does not move the policy', async () => {
    process.env.ProgramData = 'C:\\Users\\me\\not-the-policy';
    const reg = registry();
    const policy = await load(STANDARD, reg);
    expect(policy.path).toBe(FILE);
    expect(policy.errors).toEqual([]);
    expect(policy.rules).toMatchObject([{ id: 'no-delete', mode: 'forbid' }]);
    expect(reg.asked).toEqual([`${PROFILE_LIST_KEY}\\ProgramData`, `${CURRENT_VERSION_KEY}\\SystemRoot`]);
  });

  it.each([
    ['the value is missing', { [`${PROFILE_LIST_KEY}\\ProgramData`]: null }, /ProfileList\\ProgramData is missing/],
    ['it names another variable', { [`${PROFILE_LIST_KEY}\\ProgramData`]: '%USERPROFILE%\\ProgramData' }, /uses %USERPROFILE%, which Warden will not take from the environment/],
    ['it is a network share', { [`${PROFILE_LIST_KEY}\\ProgramData`]: '\\\\server\\pd' }, /is a network or device path/],
    ['SystemRoot has no drive', { [`${CURRENT_VERSION_KEY}\\SystemRoot`]: 'WINDOWS' }, /does not start with a drive/],
    ['reg.exe garbled a character', { [`${PROFILE_LIST_KEY}\\ProgramData`]: 'D:\\Programmdat?n' }, /could not be read faithfully/],
  ])('if the location cannot be determined (%s), every tool is forbidden', async (_what, values, why) => {
    const policy = await load(STANDARD, registry(values));
    expect(policy.path).toBeNull();
    expect(policy.errors[0]).toMatch(/^Organization policy location could not be determined/);
    expect(policy.errors[0]).toMatch(why);
    expect(decideWith(policy.rules)).toMatchObject({ decision: 'deny', layer: 'organization' });
  });

  it('a registry that cannot be read forbids every tool', async () => {
    const policy = await loadManagedOrganizationPolicy({ platform: 'win32', registry: { readValue: async () => Promise.reject(new Error('reg.exe failed')) }, security: { sddl: async () => [] } });
    expect(policy.errors[0]).toMatch(/could not be determined \(reg\.exe failed\)/);
    expect(decideWith(policy.rules).decision).toBe('deny');
  });

  it('other systems use fixed, administrator-only paths', async () => {
    expect(await organizationPolicyPath('linux')).toBe('/etc/warden/policy.json');
    expect(await organizationPolicyPath('darwin')).toBe('/Library/Application Support/Warden/policy.json');
    await expect(organizationPolicyPath('win32')).rejects.toThrow(/no access to the Windows registry/);
  });
});

describe('a Windows policy file non-administrators can change forbids every tool', () => {
  const refused = async (sddl: Record<string, string>, why: RegExp) => {
    const policy = await load(sddl);
    expect(policy.errors).toHaveLength(1);
    expect(policy.errors[0]).toMatch(/is not protected: /);
    expect(policy.errors[0]).toMatch(why);
    expect(decideWith(policy.rules)).toMatchObject({ decision: 'deny', layer: 'organization' });
  };

  it('the standard layout an administrator gets is accepted (users may create folders in ProgramData, not replace ours)', async () => {
    expect((await load()).errors).toEqual([]);
  });

  it('Users allowed to modify the file', () => refused({ ...STANDARD, [FILE]: `${STANDARD[FILE]}(A;;0x1301bf;;;BU)` }, /Users can change or delete D:\\ProgramData\\Warden\\policy\.json/));

  it('Everyone allowed to delete the file', () => refused({ ...STANDARD, [FILE]: `${STANDARD[FILE]}(A;;SD;;;WD)` }, /Everyone can change or delete/));

  it('the policy folder created by a user before an administrator (the user owns it)', () =>
    refused(
      { ...STANDARD, 'D:\\ProgramData\\Warden': 'O:S-1-5-21-1004336348-1177238915-682003330-1001G:S-1-5-21-1004336348-1177238915-682003330-513D:AI(A;OICI;FA;;;S-1-5-21-1004336348-1177238915-682003330-1001)(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)' },
      /D:\\ProgramData\\Warden is owned by S-1-5-21-1004336348-1177238915-682003330-1001, not by Administrators or SYSTEM/,
    ));

  it('Authenticated Users allowed to delete entries of ProgramData (and so rename Warden away)', () =>
    refused({ ...STANDARD, 'D:\\ProgramData': `${STANDARD['D:\\ProgramData']}(A;;DT;;;AU)` }, /Authenticated Users can delete or rename what is in D:\\ProgramData/));

  it('a file with no access list at all', () => refused({ ...STANDARD, [FILE]: 'O:BAG:SYD:NO_ACCESS_CONTROL' }, /has no access list, so everyone can change it/));

  it('access lists that cannot be read', async () => {
    const policy = await loadManagedOrganizationPolicy({ platform: 'win32', registry: registry(), security: { sddl: async () => Promise.reject(new Error('powershell failed')) }, readText: async () => POLICY });
    expect(policy.errors[0]).toMatch(/its permissions could not be checked \(powershell failed\)/);
    expect(decideWith(policy.rules).decision).toBe('deny');
  });

  it('a missing file is no rules (nothing to protect), whatever the folders allow', async () => {
    expect(await load({}, registry(), null)).toEqual({ path: FILE, rules: [], errors: [] });
  });

  it('reads flags in pairs and rights as hex or letters; unknown rights count as every right', () => {
    expect(sddlProblems('f', 'O:BAD:(A;CIOI;FA;;;BU)', 'file')).toEqual(['Users can change or delete f']);
    expect(sddlProblems('f', 'O:BAD:(A;OICIIO;FA;;;BU)', 'file')).toEqual([]);
    expect(sddlProblems('f', 'O:BAD:(A;;ZZ;;;BU)', 'file')).toEqual(['Users can change or delete f']);
    expect(sddlProblems('f', 'O:BAD:(D;;FA;;;BU)(A;;0x2;;;BU)', 'file')).toEqual(['Users can change or delete f']);
    expect(sddlProblems('d', 'O:BAD:(A;;0x116;;;BU)', 'folder')).toEqual([]);
    expect(sddlProblems('d', `O:${TI}D:(A;;FA;;;${TI})(A;;FA;;;OW)`, 'folder')).toEqual([]);
  });
});

describe('the production Windows adapters', () => {
  const calls: Array<{ file: string; args: readonly string[]; env: Record<string, string> }> = [];
  const run =
    (stdout: string | Error): RunProgram =>
    async (file, args, env) => {
      calls.push({ file, args, env });
      if (stdout instanceof Error) throw stdout;
      return stdout;
    };
  afterEach(() => void (calls.length = 0));

  it('find the system folder from the loaded ntdll.dll, not from any variable', () => {
    expect(windowsSystemFolder(() => ({ sharedObjects: ['D:\\Program Files\\Warden\\Warden.exe', 'D:\\WINDOWS\\SYSTEM32\\ntdll.dll', 'D:\\WINDOWS\\System32\\KERNEL32.DLL'] }))).toBe('D:\\WINDOWS\\SYSTEM32');
    expect(() => windowsSystemFolder(() => ({ sharedObjects: ['C:\\Users\\me\\ntdll.dll.txt'] }))).toThrow(/system folder could not be found/);
    expect(() => windowsSystemFolder(() => undefined)).toThrow(/system folder could not be found/);
  });

  it('read the registry with reg.exe from the system folder, in an environment of Warden’s own', async () => {
    const out = `\r\nHKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\ProfileList\r\n    ProgramData    REG_EXPAND_SZ    %SystemDrive%\\ProgramData\r\n\r\n`;
    expect(await regExeRegistry('D:\\WINDOWS\\SYSTEM32', run(out)).readValue(PROFILE_LIST_KEY, 'ProgramData')).toBe('%SystemDrive%\\ProgramData');
    expect(calls[0]).toEqual({ file: 'D:\\WINDOWS\\SYSTEM32\\reg.exe', args: ['query', PROFILE_LIST_KEY, '/v', 'ProgramData'], env: { SystemRoot: 'D:\\WINDOWS', windir: 'D:\\WINDOWS', SystemDrive: 'D:' } });
    expect(await regExeRegistry('D:\\WINDOWS\\SYSTEM32', run(Object.assign(new Error('not found'), { code: 1 }))).readValue(PROFILE_LIST_KEY, 'Nope')).toBeNull();
    expect(parseRegQuery('    Other Name    REG_SZ    x y\r\n', 'other name')).toBe('x y');
  });

  it('read access lists with .NET in PowerShell: no profile, no modules, no user environment', async () => {
    const security = powershellSecurity('D:\\WINDOWS\\SYSTEM32', run('O:BAD:(A;;FA;;;SY)\r\nO:SYD:(A;;FA;;;BA)\r\n'));
    expect(await security.sddl(['D:\\a\\b.json', 'D:\\a'])).toEqual(['O:BAD:(A;;FA;;;SY)', 'O:SYD:(A;;FA;;;BA)']);
    const call = calls[0]!;
    expect(call.file).toBe('D:\\WINDOWS\\SYSTEM32\\WindowsPowerShell\\v1.0\\powershell.exe');
    expect(call.args.slice(0, 4)).toEqual(['-NoLogo', '-NoProfile', '-NonInteractive', '-EncodedCommand']);
    const script = Buffer.from(call.args[4]!, 'base64').toString('utf16le');
    expect(script).toContain('GetSecurityDescriptorSddlForm');
    // Only .NET calls: a cmdlet would be looked up through module paths a user can change.
    expect(script).not.toMatch(/\b(Get|Set|New|Import)-[A-Z]/);
    expect(call.env).toEqual({ SystemRoot: 'D:\\WINDOWS', windir: 'D:\\WINDOWS', SystemDrive: 'D:', PSModulePath: 'D:\\WINDOWS\\SYSTEM32\\WindowsPowerShell\\v1.0\\Modules', WARDEN_POLICY_PATHS: 'D:\\a\\b.json\nD:\\a' });
  });
});
