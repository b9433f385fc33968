/**
 * Warden's client adapter for the MCP conformance suite (@modelcontextprotocol/conformance,
 * client scenarios, protocol 2025-11-25). Run by the conformance runner as
 * `tsx test/conformance/client.ts <server-url>` with MCP_CONFORMANCE_SCENARIO set.
 *
 * What it drives:
 * - `initialize`, `tools_call`, `sse-retry`: Warden's connection layer (ConnectionManager →
 *   Connection → SDK Client over Streamable HTTP), each tool call decided by the policy first;
 * - `elicitation-sep1034-client-defaults`: the same, with Warden's elicitation handler and a
 *   person stand-in that accepts the form as offered (the handler applies the defaults, SEP-1034);
 * - the auth scenarios: the SDK `Client` over Streamable HTTP directly, with
 * - Warden's OAuth pieces: `WardenOAuthProvider` (S256/issuer/endpoint checks, issuer-keyed
 *   storage in a SecretStore), the loopback redirect receiver with its random `state`, the
 *   https-or-loopback fetch guard, and a BrowserOpener that follows the authorization server's
 *   redirect the way a person's browser would (the conformance server auto-approves);
 * - Warden's policy engine (`decide`) with a test policy that allows exactly this scenario's
 *   tools: a tool is called only when the policy answers `allow`;
 *
 * Sign-in is interactive in Warden (a connection that needs authorization reports "auth
 * required" and the person signs in); here the "person" signs in automatically whenever a request
 * answers UnauthorizedError, at most MAX_AUTH_ROUNDS times per request, then the request is retried.
 * Secrets go to an in-memory SecretStore: the suite tests protocol behaviour, and the real
 * keychain path is covered by test/integration/oauth.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { ElicitRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { OAuthCredentialVault, OAUTH_SECRET_NAMES } from '../../electron/core/mcp/oauth/credential-vault';
import { startLoopbackCallback, type LoopbackCallback } from '../../electron/core/mcp/oauth/loopback-callback';
import { WardenOAuthProvider } from '../../electron/core/mcp/oauth/provider';
import { createGuardedFetch } from '../../electron/core/mcp/oauth/url-policy';
import { OAuthNetworkScope } from '../../electron/core/mcp/oauth/network-scope';
import { decide } from '../../electron/core/policy';
import { contractHash, endpointHash } from '../../electron/core/canonical';
import { endpointHash as serverEndpointHash } from '../../electron/core/settings/identity';
import type { BrowserOpener, SecretStore } from '../../electron/core/ports';
import { secretKey } from '../../shared/domain/servers';
import type { PolicyState } from '../../shared/domain/policy';
import { ConnectionManager } from '../../electron/core/mcp/connection-manager';
import type { ServerDefinition } from '../../shared/domain/servers';

const MAX_AUTH_ROUNDS = 3;
const SERVER_ID = 'conformance';
const ACCOUNT_ID = 'default';

/** Tools the test policy allows, per scenario. Everything else stays at the default (ask → not called). */
const ALLOWED_TOOLS: Record<string, string[]> = {
  tools_call: ['add_numbers'],
  'sse-retry': ['test_reconnection'],
  'elicitation-sep1034-client-defaults': ['test_client_elicitation_defaults'],
};
const AUTH_TOOLS = ['test-tool'];
/**
 * Scenarios driven through Warden's own connection layer (ConnectionManager → Connection → SDK
 * Client, with Warden's elicitation handler). The others need what that layer deliberately does
 * not do by itself: completing a sign-in inside a session (auth/*).
 */
const CONNECTION_LAYER_SCENARIOS = ['initialize', 'tools_call', 'sse-retry', 'elicitation-sep1034-client-defaults'];

const log = (...parts: unknown[]): void => {
  process.stderr.write(`[warden-conformance] ${parts.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join(' ')}\n`);
};

class MemorySecretStore implements SecretStore {
  readonly values = new Map<string, string>();
  async get(key: string): Promise<string | null> {
    return this.values.get(key) ?? null;
  }
  async set(key: string, value: string): Promise<void> {
    this.values.set(key, value);
  }
  async delete(key: string): Promise<boolean> {
    return this.values.delete(key);
  }
}

/** A browser that loads the authorization URL and follows redirects to Warden's loopback receiver. */
class FollowingBrowser implements BrowserOpener {
  private visits: Promise<void>[] = [];
  async open(url: string): Promise<void> {
    this.visits.push(
      (async () => {
        let next: URL | null = new URL(url);
        for (let hop = 0; next && hop < 10; hop++) {
          const response: Response = await fetch(next, { redirect: 'manual' });
          await response.body?.cancel();
          const location = response.headers.get('location');
          next = location ? new URL(location, next) : null;
        }
      })().catch((e: unknown) => log('browser visit failed', String(e))),
    );
  }
  settle(): Promise<unknown> {
    return Promise.allSettled(this.visits);
  }
}

interface Context {
  client_id?: string;
  client_secret?: string;
}

async function main(): Promise<void> {
  const serverUrl = process.argv[2];
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (!serverUrl) throw new Error('usage: client.ts <server-url>');
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Context;
  const isAuth = scenario.startsWith('auth/');
  const allowed = isAuth ? AUTH_TOOLS : (ALLOWED_TOOLS[scenario] ?? []);
  log('scenario', scenario, 'server', serverUrl);
  if (CONNECTION_LAYER_SCENARIOS.includes(scenario)) return runThroughConnectionLayer(serverUrl, allowed);

  const secrets = new MemorySecretStore();
  const vault = new OAuthCredentialVault(secrets, SERVER_ID, ACCOUNT_ID, serverUrl);
  // The suite's authorization servers run on other localhost ports; the person stand-in allows them.
  const network = new OAuthNetworkScope({ serverName: 'conformance', serverUrl, confirm: async () => true });
  const browser = new FollowingBrowser();
  if (context.client_secret) await secrets.set(secretKey(SERVER_ID, ACCOUNT_ID, OAUTH_SECRET_NAMES.clientSecret), context.client_secret);

  let receiver: LoopbackCallback = await startLoopbackCallback({ timeoutMs: 20_000 });
  const providerFor = (r: LoopbackCallback): WardenOAuthProvider =>
    new WardenOAuthProvider({
      vault,
      network,
      mode: 'login',
      redirectUrl: r.redirectUrl,
      state: r.state,
      browser,
      clientName: 'Warden conformance client',
      ...(context.client_id ? { preRegistered: { clientId: context.client_id } } : {}),
    });
  const authProvider = isAuth ? new SwitchingProvider(providerFor(receiver)) : undefined;
  const guardedFetch = createGuardedFetch(network, fetch);

  const client = new Client(
    { name: 'warden-conformance', version: '0.1.0' },
    { capabilities: { elicitation: { form: { applyDefaults: true } } } },
  );
  // The Elicitor stand-in: a person who accepts the form as offered, so defaults apply.
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    log('elicitation from server', request.params.message);
    return { action: 'accept', content: {} };
  });

  let transport = new StreamableHTTPClientTransport(new URL(serverUrl), {
    fetch: guardedFetch,
    ...(authProvider ? { authProvider: authProvider.proxy } : {}),
  });

  /** Completes one sign-in: waits for the redirect, exchanges the code, arms a fresh receiver. */
  const signIn = async (t: StreamableHTTPClientTransport): Promise<void> => {
    const { code } = await receiver.result;
    await t.finishAuth(code);
    await receiver.close();
    receiver = await startLoopbackCallback({ timeoutMs: 20_000 });
    authProvider!.use(providerFor(receiver));
  };

  /** Runs `op`, signing in and retrying when the server demands authorization (bounded). */
  const withSignIn = async <T>(what: string, op: () => Promise<T>): Promise<T> => {
    for (let round = 0; ; round++) {
      try {
        return await op();
      } catch (error) {
        if (!(error instanceof UnauthorizedError) || !authProvider || round >= MAX_AUTH_ROUNDS) throw error;
        log(`${what}: authorization required, signing in (round ${round + 1})`);
        await signIn(transport);
      }
    }
  };

  try {
    await withSignIn('connect', async () => {
      try {
        await client.connect(transport);
      } catch (error) {
        if (error instanceof UnauthorizedError) {
          // The failed transport cannot be restarted: finish sign-in on it, then use a new one.
          await signIn(transport);
          transport = new StreamableHTTPClientTransport(new URL(serverUrl), { fetch: guardedFetch, authProvider: authProvider!.proxy });
          await client.connect(transport);
          return;
        }
        throw error;
      }
    });
    const { tools } = await withSignIn('tools/list', () => client.listTools());
    log('tools', tools.map((t) => t.name));

    const policy = testPolicy(tools, allowed, serverUrl);
    for (const tool of tools) {
      const args = exampleArguments(tool);
      const decision = decide(
        { serverId: SERVER_ID, accountId: ACCOUNT_ID, toolName: tool.name, conversationId: null, arguments: args },
        policy,
        { tool: { contractHash: contractHash(tool), endpointHash: endpointHash({ kind: 'http', url: serverUrl }) }, paths: 'posix' },
      );
      log('policy', tool.name, decision.decision, decision.reason);
      if (decision.decision !== 'allow') continue;
      const result = await withSignIn(`tools/call ${tool.name}`, () => client.callTool({ name: tool.name, arguments: args }));
      log('result', tool.name, result);
    }
  } finally {
    await transport.close().catch(() => {});
    await receiver.close();
    await browser.settle();
    await network.close();
  }
}

/**
 * The test policy: Always Allow exactly `allowed` tools, pinned to their current contract and
 * endpoint — the connection layer's pinned hash where the tool came from it (that hash also covers
 * the server's instructions), else the contract hash of the SDK's tool.
 */
function testPolicy(
  tools: ReadonlyArray<Pick<Tool, 'name'> & Parameters<typeof contractHash>[0] & { contractHash?: string }>,
  allowed: readonly string[],
  serverUrl: string,
): PolicyState {
  return {
    organization: [],
    conversation: [],
    safeMode: false,
    user: tools
      .filter((t) => allowed.includes(t.name))
      .map((t) => ({
        id: `allow-${t.name}`,
        scope: { kind: 'tool' as const, serverId: SERVER_ID, accountId: ACCOUNT_ID, toolName: t.name },
        mode: 'allow',
        pin: { contractHash: typeof t.contractHash === 'string' ? t.contractHash : contractHash(t), endpointHash: endpointHash({ kind: 'http', url: serverUrl }) },
      })),
  };
}

/** initialize / tools_call / sse-retry through ConnectionManager, each call decided by the policy first. */
async function runThroughConnectionLayer(serverUrl: string, allowed: readonly string[]): Promise<void> {
  const definition = {
    id: SERVER_ID,
    name: 'Conformance server',
    transport: 'http',
    url: serverUrl,
    headers: [],
    auth: { kind: 'none' },
  } as ServerDefinition;
  const manager = new ConnectionManager({
    directory: { server: (id) => (id === SERVER_ID ? definition : undefined), accountLabel: (_s, a) => (a === ACCOUNT_ID ? 'Default' : undefined), endpointHash: serverEndpointHash },
    secrets: new MemorySecretStore(),
    clientInfo: { name: 'warden-conformance', version: '0.1.0' },
    reconnect: { maxAttempts: 0 },
    // The person stand-in accepts a form as offered: Warden's handler fills in the schema's defaults.
    elicitation: {
      elicitor: {
        form: async (question) => {
          log('elicitation from server', question.message);
          return { action: 'accept', content: {} };
        },
        url: async () => 'cancel',
      },
      browser: { open: async () => undefined },
    },
  });
  try {
    const status = await manager.connect(SERVER_ID, ACCOUNT_ID);
    if (status.state !== 'connected') throw new Error(`connection layer: ${JSON.stringify(status)}`);
    const tools = manager.discoveredTools(SERVER_ID, ACCOUNT_ID);
    log('tools', tools.map((t) => t.name));
    const policy = testPolicy(tools, allowed, serverUrl);
    for (const tool of tools) {
      const args = exampleArguments(tool as unknown as Tool);
      const decision = decide(
        { serverId: SERVER_ID, accountId: ACCOUNT_ID, toolName: tool.name, conversationId: null, arguments: args },
        policy,
        { tool: { contractHash: tool.contractHash, endpointHash: endpointHash({ kind: 'http', url: serverUrl }) }, paths: 'posix' },
      );
      log('policy', tool.name, decision.decision, decision.reason);
      if (decision.decision !== 'allow') continue;
      const result = await manager.call({ serverId: SERVER_ID, accountId: ACCOUNT_ID, toolName: tool.name }, args, {
        signal: new AbortController().signal,
        operationId: `conformance-${tool.name}`,
      });
      log('result', tool.name, result);
    }
  } finally {
    await manager.close();
  }
}

/**
 * One provider identity for the transport whose redirect URI and state follow the current
 * receiver (each sign-in gets a fresh single-use receiver); storage is shared through the vault.
 */
class SwitchingProvider {
  readonly proxy: WardenOAuthProvider;
  constructor(private current: WardenOAuthProvider) {
    this.proxy = new Proxy({} as WardenOAuthProvider, {
      get: (_target, prop) => {
        const value = Reflect.get(this.current, prop, this.current) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(this.current) : value;
      },
      has: (_target, prop) => prop in this.current,
    });
  }
  use(next: WardenOAuthProvider): void {
    this.current = next;
  }
}

/** Arguments that satisfy a tool's input schema: 2, 3, … for numbers, "warden" for strings. */
function exampleArguments(tool: Tool): Record<string, unknown> {
  const props = (tool.inputSchema.properties ?? {}) as Record<string, { type?: string; default?: unknown }>;
  const args: Record<string, unknown> = {};
  let n = 2;
  for (const [name, schema] of Object.entries(props)) {
    if (schema.default !== undefined) args[name] = schema.default;
    else if (schema.type === 'number' || schema.type === 'integer') args[name] = n++;
    else if (schema.type === 'boolean') args[name] = true;
    else if (schema.type === 'string') args[name] = 'warden';
  }
  return args;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log('failed:', error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    process.exit(1);
  },
);
