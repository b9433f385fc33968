/**
 * A model provider that cannot be reached is told apart the same way as an MCP server, and the
 * kind travels to the renderer as data in the `models:test` answer (through dispatch, so the
 * contract's schema carries it): a closed loopback port, a loopback HTTPS server with a
 * self-signed certificate, and a host name under `.invalid` (RFC 6761: never resolves), each
 * through the official SDK's real request.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import type { ModelProblem } from '../../../shared/contract/models';
import type { ChannelName } from '../../../shared/ipc';
import { MapSecretStore, ROOT } from '../mcp/helpers';

let core: WardenCore | undefined;
const servers: Server[] = [];
afterEach(async () => {
  await core?.close();
  core = undefined;
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

async function call<T>(channel: ChannelName, request: unknown): Promise<T> {
  const r = await dispatch(core!.handlers, channel, request, () => {});
  if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
  return r.value as T;
}

/** Adds an OpenAI-compatible provider at `baseUrl` (with a key where the host needs one) and tests it. */
async function testProvider(baseUrl: string): Promise<ModelProblem | null> {
  core = createCore({
    version: 'test',
    servers: { secrets: Object.assign(new MapSecretStore(), { keys: async () => [] }) },
    models: { adapter: { maxRetries: 0, connectTimeoutMs: 15_000, idleTimeoutMs: 15_000, listTimeoutMs: 15_000 } },
  });
  const loopback = new URL(baseUrl).hostname === '127.0.0.1';
  const { provider } = await call<{ provider: { providerId: string } }>('models:add-provider', {
    kind: 'openai',
    label: 'Unreachable',
    baseUrl,
    ...(loopback ? {} : { apiKey: 'sk-test-not-a-real-key' }),
  });
  const result = await call<{ ok: boolean; problem: ModelProblem | null }>('models:test', { providerId: provider.providerId, model: 'some-model' });
  expect(result.ok).toBe(false);
  return result.problem;
}

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

describe('a model provider that cannot be reached', () => {
  it('a closed port is NETWORK of kind "refused", with the host and port', async () => {
    const probe = createHttpServer();
    const port = await listen(probe);
    await new Promise((r) => probe.close(r));
    const problem = await testProvider(`http://127.0.0.1:${port}/v1`);
    expect(problem).toMatchObject({ code: 'NETWORK', failure: { kind: 'refused', host: '127.0.0.1', port } });
  });

  it('a self-signed certificate is NETWORK of kind "tls" (self-signed)', async () => {
    const tls = path.join(ROOT, 'test/fixtures/tls');
    const port = await listen(createHttpsServer({ cert: readFileSync(path.join(tls, 'self-signed-cert.pem')), key: readFileSync(path.join(tls, 'self-signed-key.pem')) }, (_q, s) => s.end('{}')));
    const problem = await testProvider(`https://127.0.0.1:${port}/v1`);
    expect(problem).toMatchObject({ code: 'NETWORK', failure: { kind: 'tls', host: '127.0.0.1', problem: 'self-signed' } });
  });

  it('a host name that does not resolve is NETWORK of kind "dns"', async () => {
    const problem = await testProvider('https://models.warden-test.invalid/v1');
    expect(problem).toMatchObject({ code: 'NETWORK', failure: { kind: 'dns', host: 'models.warden-test.invalid' } });
  });
});
