/**
 * Which of the person's and the organization's rules keep Warden from reading a server's
 * resources or prompts (accessRefusal, what the core's resources:read and prompts:get call), and
 * how a resource template's variables are found and filled in.
 */
import { describe, expect, it } from 'vitest';
import { accessRefusal } from '../../../electron/core/mcp/server-data-access';
import { PolicyState } from '../../../shared/domain/policy';
import { expandTemplate, templateVariables } from '../../../shared/domain/uri-template';

const policy = (p: unknown) => PolicyState.parse(p);
const server = (accountId: string | null, mode: unknown, id = `r-${String(accountId)}-${String(mode)}`) => ({ id, scope: { kind: 'server', serverId: 'notes', accountId }, mode });

describe('accessRefusal', () => {
  it('no rules: read', () => {
    expect(accessRefusal(policy({}), 'notes', 'work', 'Notes')).toBeUndefined();
  });

  it('a server set to Disabled (any account, this account, or an unknown mode) is not read', () => {
    expect(accessRefusal(policy({ user: [server(null, 'disabled')] }), 'notes', 'work', 'Notes')).toMatch(/you set Notes to Disabled/);
    expect(accessRefusal(policy({ user: [server('work', 'disabled')] }), 'notes', 'work', 'Notes')).toMatch(/Disabled/);
    expect(accessRefusal(policy({ user: [server('work', 'sometimes')] }), 'notes', 'work', 'Notes')).toMatch(/Disabled/);
    expect(accessRefusal(policy({ user: [{ id: 'g', scope: { kind: 'global' }, mode: 'disabled' }] }), 'notes', 'work', 'Notes')).toMatch(/your rule for every server/);
  });

  it('the most specific server-wide rule decides: this account\'s Ask over every account\'s Disabled, over the global rule', () => {
    expect(accessRefusal(policy({ user: [server(null, 'disabled'), server('work', 'ask')] }), 'notes', 'work', 'Notes')).toBeUndefined();
    expect(accessRefusal(policy({ user: [server(null, 'disabled'), server('work', 'ask')] }), 'notes', 'home', 'Notes')).toMatch(/Disabled/);
    expect(accessRefusal(policy({ user: [{ id: 'g', scope: { kind: 'global' }, mode: 'disabled' }, server(null, 'allow')] }), 'notes', 'work', 'Notes')).toBeUndefined();
  });

  it('tool rules do not decide reads; another server\'s rules do not either', () => {
    expect(accessRefusal(policy({ user: [{ id: 't', scope: { kind: 'tool', serverId: 'notes', accountId: null, toolName: 'x' }, mode: 'disabled' }] }), 'notes', 'work', 'Notes')).toBeUndefined();
    expect(accessRefusal(policy({ user: [{ id: 'o', scope: { kind: 'server', serverId: 'other', accountId: null }, mode: 'disabled' }] }), 'notes', 'work', 'Notes')).toBeUndefined();
  });

  it('the organization forbidding the server (or everything) wins over the person\'s Allow', () => {
    const user = [server(null, 'allow')];
    expect(accessRefusal(policy({ user, organization: [{ id: 'o', serverId: 'notes', mode: 'forbid' }] }), 'notes', 'work', 'Notes')).toMatch(/organization's policy forbids Notes/);
    expect(accessRefusal(policy({ user, organization: [{ id: 'o', mode: 'forbid' }] }), 'notes', 'work', 'Notes')).toMatch(/organization/);
    expect(accessRefusal(policy({ user, organization: [{ id: 'o', serverId: 'notes', toolName: 'x', mode: 'forbid' }] }), 'notes', 'work', 'Notes')).toBeUndefined();
    expect(accessRefusal(policy({ user, organization: [{ id: 'o', serverId: 'notes', mode: 'ask' }] }), 'notes', 'work', 'Notes')).toBeUndefined();
  });
});

describe('resource templates', () => {
  it('finds each variable once, in order, whatever the operator', () => {
    expect(templateVariables('demo://resource/dynamic/text/{resourceId}')).toEqual(['resourceId']);
    expect(templateVariables('file:///{+path}{?lines,from*}{#frag}{path}')).toEqual(['path', 'lines', 'from', 'frag']);
    expect(templateVariables('x://{a:3}/{b c}/{}')).toEqual(['a']);
  });

  it('fills variables in, percent-encoded so a value cannot add path segments or a query', () => {
    expect(expandTemplate('demo://resource/dynamic/text/{resourceId}', { resourceId: '7' })).toBe('demo://resource/dynamic/text/7');
    expect(expandTemplate('notes://{name}', { name: '../secret?x=1' })).toBe('notes://..%2Fsecret%3Fx%3D1');
    expect(expandTemplate('file:///{+path}{?lines}', { path: 'a b/c.txt', lines: '10' })).toBe('file:///a%20b/c.txt?lines=10');
    expect(expandTemplate('x://{a}/{b}', { a: '1' })).toBe('x://1/');
  });
});
