/**
 * The process the crash test kills. It opens the durable ledger (running recovery), builds the
 * REAL gate on it, connects a real SDK client over stdio to the side-effect fixture server, and
 * runs a workload of tool calls until it is SIGKILLed at a random moment (or finishes its quota).
 *
 * Workload per worker, chosen by a seeded PRNG: a new Always-Allow call (`perform`), a new call
 * that asks and is approved (`perform_reviewed`), approving a call that an earlier run left
 * waiting (re-queued by recovery), or a re-submission of an operation id that already exists —
 * which the gate must answer from its record without calling the server.
 * Every call carries its operation id in its arguments, so the server's own file says which
 * operation produced each side effect.
 *
 * Env: WARDEN_LEDGER_DIR, SIDE_EFFECT_FILE, SERVER_COMMAND, SERVER_ARGS (JSON array), RUN, SEED,
 * MAX_OPS, PREALLOCATE_BYTES (optional: the ledger's preallocation chunk; small values make kills land
 * while a segment is being extended), ROTATE_BYTES (optional: small values make kills land during
 * rotations). Prints `ready <serverPid>` once connected.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { contractHash, endpointHash } from '../../../electron/core/canonical';
import { Gate } from '../../../electron/core/gate/gate';
import type { ToolCallResult, ToolDescriptor, ToolExecutor, ToolRegistry } from '../../../electron/core/gate/ports';
import { LedgerService } from '../../../electron/core/ledger/service';
import { PolicyState } from '../../../shared/domain/policy';
import { prng } from '../../helpers/prng';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`crash-child: ${name} is required`);
  return v;
};

const debug = process.env.CRASH_DEBUG ? (what: string) => process.stderr.write(`child ${Math.round(performance.now())} ms: ${what}\n`) : () => undefined;

async function main(): Promise<void> {
  debug('main');
  const run = Number(env('RUN'));
  const random = prng(Number(env('SEED')));
  const maxOps = Number(process.env.MAX_OPS ?? 80);
  const serverCommand = env('SERVER_COMMAND');
  const serverArgs = JSON.parse(env('SERVER_ARGS')) as string[];

  const transport = new StdioClientTransport({
    command: serverCommand,
    args: serverArgs,
    env: { ...process.env, SIDE_EFFECT_FILE: env('SIDE_EFFECT_FILE') } as Record<string, string>,
    stderr: 'inherit',
  });
  const client = new Client({ name: 'warden-crash-child', version: '1.0.0' });
  // The server starts while the ledger recovers: both are on the restart's critical path.
  const connected = client.connect(transport);
  const preallocateBytes = process.env.PREALLOCATE_BYTES ? Number(process.env.PREALLOCATE_BYTES) : undefined;
  const rotateBytes = Number(process.env.ROTATE_BYTES ?? 256 * 1024);
  const service = await LedgerService.open({ dir: env('WARDEN_LEDGER_DIR'), rotateBytes, ...(preallocateBytes !== undefined ? { preallocateBytes } : {}) });
  debug('ledger open');
  await connected;
  debug('connected');
  const { tools } = await client.listTools();
  const endpoint = endpointHash({ kind: 'stdio', command: 'node', args: ['side-effect-server'] });
  const descriptors = new Map<string, ToolDescriptor>(
    tools.map((t) => [
      t.name,
      {
        serverId: 'effects',
        accountId: 'work',
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema as Record<string, unknown>,
        contractHash: contractHash(t),
        endpointHash: endpoint,
        serverLabel: 'Effects',
        accountLabel: 'Work',
      },
    ]),
  );
  const registry: ToolRegistry = {
    getTool: (serverId, accountId, toolName) => (serverId === 'effects' && accountId === 'work' ? descriptors.get(toolName) : undefined),
    listTools: () => [...descriptors.values()],
  };
  const executor: ToolExecutor = {
    call: async (target, args, { signal }) => (await client.callTool({ name: target.toolName, arguments: { ...args } }, undefined, { signal })) as ToolCallResult,
  };
  const perform = descriptors.get('perform')!;
  const policyState = PolicyState.parse({
    user: [{ id: 'allow-perform', scope: { kind: 'tool', serverId: 'effects', accountId: 'work', toolName: 'perform' }, mode: 'allow', pin: { contractHash: perform.contractHash, endpointHash: perform.endpointHash } }],
  });
  const gate = new Gate({
    journal: service.ledger,
    history: service.history,
    executor,
    registry,
    policy: { current: () => (service.ledger.safeMode ? { ...policyState, safeMode: true } : policyState) },
    scheduleExpiry: false,
  });
  debug('tools listed');
  await service.recoverOperations(gate);
  debug('recovered');

  process.stdout.write(`ready ${transport.pid ?? 0}\n`);

  let next = 0;
  const known = (await service.history.operations({ limit: 1000 })).map((o) => o.operationId);
  const worker = async (): Promise<void> => {
    while (next < maxOps) {
      const i = next++;
      const roll = random();
      if (roll < 0.1 && known.length > 0) {
        // Idempotency: the same id again must return the recorded operation, never a second call.
        const id = known[Math.floor(random() * known.length)]!;
        await gate.submit({ source: 'user', serverId: 'effects', accountId: 'work', toolName: 'perform', arguments: { operationId: id }, operationId: id });
        continue;
      }
      if (roll < 0.16) {
        // A call that was waiting for approval when an earlier run died was re-queued by
        // recovery; approving it now must send it exactly once.
        const pending = gate.pending();
        if (pending.length > 0) {
          const id = pending[Math.floor(random() * pending.length)]!.operationId;
          try {
            await gate.approve(id);
          } catch (error) {
            // Another worker approved it first: approval is single-use.
            if ((error as { code?: string }).code !== 'CONFLICT') throw error;
          }
          await gate.settled(id);
          continue;
        }
      }
      const id = `r${run}-${i}`;
      known.push(id);
      if (roll < 0.3) {
        const pending = await gate.submit({ source: 'user', conversationId: `conv-${run}`, serverId: 'effects', accountId: 'work', toolName: 'perform_reviewed', arguments: { operationId: id }, operationId: id });
        if (pending.state === 'awaiting_approval') {
          try {
            await gate.approve(id);
          } catch (error) {
            // Another worker picked it from the pending queue and approved it first (single use).
            if ((error as { code?: string }).code !== 'CONFLICT') throw error;
          }
        }
        await gate.settled(id);
      } else {
        await gate.request({ source: 'user', conversationId: `conv-${run}`, serverId: 'effects', accountId: 'work', toolName: 'perform', arguments: { operationId: id }, operationId: id });
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  gate.close();
  await service.close();
  await client.close();
  process.stdout.write('done\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`crash-child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
