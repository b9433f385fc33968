/**
 * OAuth tokens never reach the ledger in clear, from the attacker's side: a hostile MCP server
 * echoes the bearer token it received (and every other credential its authorization server
 * handed out) in a tool result. The call goes through the real gate and the real ledger (with the
 * app's one redactor, fed by the keychain and the OAuth layer); the ledger files on disk must not
 * contain any of them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { REDACTED } from '../../../electron/core/redact/redactor';
import { startOAuthFixture, type OAuthFixture } from './fixture-oauth-servers';
import { cleanUpWorld, startCoreWorld, textUnder, type CoreWorld } from './core-world';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => undefined);
});

async function hostileFixture(): Promise<OAuthFixture> {
  const f = await startOAuthFixture({ echoCredentials: true, issueIdToken: true, issueClientSecret: true });
  cleanups.push(() => f.close());
  return f;
}

/** Runs `echo_credentials` through the contract and the gate (approved by the prompter); returns its final state. */
async function echoThroughGate(w: CoreWorld, target: { serverId: string; accountId: string }): Promise<string> {
  expect((await w.connect(target.serverId, target.accountId)).state).toBe('connected');
  const proposed = await w.call('tools:run', { ...target, toolName: 'echo_credentials', arguments: {} });
  expect(proposed.state).toBe('awaiting_approval');
  await w.call('approvals:review', { operationId: proposed.operationId });
  for (let i = 0; i < 200; i++) {
    const op = (await w.core.gate.gate.get(proposed.operationId));
    if (op && ['succeeded', 'failed', 'outcome_unknown', 'denied', 'invalidated'].includes(op.state)) return op.state;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the call did not finish');
}

function credentials(f: OAuthFixture): string[] {
  return [...f.record.issuedAccessTokens, ...f.record.issuedRefreshTokens, ...f.record.issuedIdTokens, ...f.record.issuedClientSecrets];
}

describe('OAuth tokens are scrubbed from the ledger', () => {
  it('access, refresh and id tokens and the client secret echoed in a tool result are journaled redacted, right after sign-in', async () => {
    const f = await hostileFixture();
    const w = await startCoreWorld({ ledger: true });
    cleanups.push(async () => {
      await w.close().catch(() => undefined);
      await cleanUpWorld(w);
    });
    const added = await w.call('servers:add', {
      definition: { name: 'Echo', transport: 'http', url: f.mcpUrl, headers: [], auth: { kind: 'oauth' } },
      accountLabel: 'Work',
    });
    const target = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    await w.call('auth:login', target);
    expect(await echoThroughGate(w, target)).toBe('succeeded');
    const secrets = credentials(f);
    expect(secrets).toHaveLength(4);
    await w.core.close();

    const journaled = textUnder(`${w.dataDir}/ledger`);
    expect(journaled).toContain('echo_credentials');
    for (const secret of secrets) expect(journaled).not.toContain(secret);
    expect(journaled).toContain(`Authorization: Bearer ${REDACTED}`);
  });

  it('a compromised renderer never receives them: every response and event it can see has them redacted', async () => {
    const f = await hostileFixture();
    const w = await startCoreWorld({ ledger: true });
    cleanups.push(async () => {
      await w.close().catch(() => undefined);
      await cleanUpWorld(w);
    });
    // All the renderer gets: what its contract calls answer, and every event pushed to the window.
    const seen: string[] = [];
    w.core.events.subscribe((event, payload) => seen.push(`${event} ${JSON.stringify(payload)}`));
    const read = async <C extends Parameters<typeof w.attempt>[0]>(channel: C, request: Parameters<typeof w.attempt<C>>[1]) => {
      const answer = await w.attempt(channel, request);
      seen.push(`${channel} ${JSON.stringify(answer)}`);
      return answer;
    };
    const added = await w.call('servers:add', {
      definition: { name: 'Echo', transport: 'http', url: f.mcpUrl, headers: [], auth: { kind: 'oauth' } },
      accountLabel: 'Work',
    });
    const target = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    await w.call('auth:login', target);
    expect((await w.connect(target.serverId, target.accountId)).state).toBe('connected');
    const proposed = await read('tools:run', { ...target, toolName: 'echo_credentials', arguments: {} });
    expect(proposed.ok).toBe(true);
    const operationId = proposed.ok ? proposed.value.operationId : '';
    // The person approves in the native dialog; the renderer only asks for the review and reads.
    await read('approvals:review', { operationId });
    for (let i = 0; i < 200; i++) {
      const op = await read('operations:get', { operationId });
      if (op.ok && op.value.state === 'succeeded') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await read('operations:list', { limit: 100 });
    await read('approvals:list', {});
    const text = seen.join('\n');
    expect(text).toContain(`Authorization: Bearer ${REDACTED}`);
    for (const secret of credentials(f)) expect(text.includes(secret), 'a credential reached the renderer').toBe(false);
  });

  it('tokens read back from the keychain after a restart are scrubbed too', async () => {
    const f = await hostileFixture();
    const first = await startCoreWorld({ ledger: true });
    cleanups.push(async () => {
      await first.close().catch(() => undefined);
      await cleanUpWorld(first);
    });
    const added = await first.call('servers:add', {
      definition: { name: 'Echo', transport: 'http', url: f.mcpUrl, headers: [], auth: { kind: 'oauth' } },
      accountLabel: 'Work',
    });
    const target = { serverId: added.definition.id, accountId: added.accounts[0]!.id };
    await first.call('auth:login', target);
    await first.core.close();

    // A new run: a fresh redactor, which only learns the tokens by reading them from the keychain.
    const second = await startCoreWorld({ ledger: true, dataDir: first.dataDir, service: first.service });
    cleanups.push(() => second.close());
    expect(await echoThroughGate(second, target)).toBe('succeeded');
    await second.core.close();
    const journaled = textUnder(`${first.dataDir}/ledger`);
    for (const secret of credentials(f)) expect(journaled).not.toContain(secret);
    expect(journaled).toContain(`Authorization: Bearer ${REDACTED}`);
  });
});
