/**
 * Every error code a person can meet has a plain sentence with the fix, in the one table the
 * renderer uses (renderer/src/errors.ts). The lists of codes come from where the codes are
 * defined — the contract's ErrorCode enum, the ModelProblem enum, the ConnectFailure union, and the
 * error codes the core's code actually records on operations — so adding a code anywhere without
 * a sentence fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelErrorCode } from '../../../electron/core/models/provider';
import { ModelProblem } from '../../../shared/contract/models';
import { ConnectFailure, type ConnectFailureKind } from '../../../shared/domain/connect-failure';
import { ErrorCode } from '../../../shared/result';
import {
  argumentsProblem,
  CONNECT_FAILURE_SENTENCES,
  CONTRACT_ERROR_SENTENCES,
  MODEL_PROBLEM_SENTENCES,
  OPERATION_ERROR_CODES,
  OPERATION_ERROR_SENTENCES,
  explainConnectFailure,
  explainConnection,
  explainError,
  fieldSentence,
  plainIssue,
} from '../../../renderer/src/errors';

const root = path.resolve(import.meta.dirname, '../../..');

/** A sentence a person can act on: words, not a code; ends like a sentence; long enough to say a fix. */
function expectSentence(text: string, code: string): void {
  expect(text, code).toMatch(/[.!?)”]$/);
  expect(text.length, code).toBeGreaterThan(12);
  if (code.length > 3 && /^[A-Z_]+$/.test(code)) expect(text, code).not.toContain(code);
}

// The core's ModelErrorCode and the contract's ModelProblem codes are one vocabulary.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const modelCodesMatch: Same<ModelErrorCode, ModelProblem['code']> = true;

/** Every operation error code the core's source records: `error: { code: 'X', …}` (also `code: c ? 'X' : 'Y'`). */
function recordedOperationCodes(): Set<string> {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) {
        const text = readFileSync(full, 'utf8');
        for (const m of text.matchAll(/error:\s*\{\s*code:\s*([^,}]+)/g)) for (const c of m[1]!.matchAll(/'([A-Z_]+)'/g)) found.add(c[1]!);
      }
    }
  };
  walk(path.join(root, 'electron/core'));
  return found;
}

describe('every error code maps to a sentence with the fix', () => {
  it('every contract ErrorCode has its own sentence, and explainError uses it', () => {
    expect(modelCodesMatch).toBe(true);
    for (const code of ErrorCode.options) {
      const sentence = CONTRACT_ERROR_SENTENCES[code];
      expect(sentence, `no sentence for ${code}`).toBeTypeOf('string');
      expectSentence(sentence, code);
      expect(explainError({ code, message: 'm' }).sentence).toBe(sentence);
    }
    expect(new Set(Object.values(CONTRACT_ERROR_SENTENCES)).size).toBe(ErrorCode.options.length);
  });

  it('every model problem code has its own sentence', () => {
    const codes = ModelProblem.shape.code.options;
    expect(Object.keys(MODEL_PROBLEM_SENTENCES).sort()).toEqual([...codes].sort());
    for (const code of codes) {
      expectSentence(MODEL_PROBLEM_SENTENCES[code], code);
      expect(explainError({ code, message: 'api.example.com said no', source: 'model' })).toEqual({ sentence: MODEL_PROBLEM_SENTENCES[code], detail: code === 'CANCELLED' ? null : 'api.example.com said no' });
    }
  });

  it('every error code the core records on an operation has a sentence', () => {
    const recorded = recordedOperationCodes();
    // The scan finds the gate's and the ledger's codes (it would find none if the pattern broke).
    expect(recorded.size).toBeGreaterThanOrEqual(5);
    for (const code of recorded) expect(OPERATION_ERROR_CODES, `the core records ${code} on operations but errors.ts has no sentence for it`).toContain(code);
    for (const code of OPERATION_ERROR_CODES) {
      expectSentence(OPERATION_ERROR_SENTENCES[code], code);
      expect(explainError({ code, message: 'why', source: 'operation' }).sentence).toBe(OPERATION_ERROR_SENTENCES[code]);
    }
  });

  it('a model provider that could not be reached is explained by the kind of failure, with the same sentences as a server', () => {
    const failure = { kind: 'refused' as const, host: '127.0.0.1', port: 11434 };
    expect(explainError({ code: 'NETWORK', message: 'Could not reach 127.0.0.1:11434 (ECONNREFUSED)', source: 'model', failure }).sentence).toBe(explainConnectFailure(failure));
    expect(explainError({ code: 'NETWORK', message: 'x', source: 'model' }).sentence).toBe(MODEL_PROBLEM_SENTENCES.NETWORK);
  });

  it('an unknown code still reads as a sentence, never a bare code', () => {
    const e = explainError({ code: 'SOMETHING_NEW', message: 'details' });
    expect(e.sentence).toBe(CONTRACT_ERROR_SENTENCES.INTERNAL);
    expect(e.detail).toBe('details');
  });

  it('input errors name each field in words instead of repeating the raw message', () => {
    const e = explainError({ code: 'INVALID_REQUEST', message: 'servers:add: definition.url: plain http…', fields: [{ path: ['definition', 'url'], message: 'plain http is only allowed on loopback' }] });
    expect(e).toEqual({ sentence: CONTRACT_ERROR_SENTENCES.INVALID_REQUEST, detail: null });
    const name = (p: readonly (string | number)[]) => (p.join('.') === 'definition.url' ? 'URL' : null);
    expect(fieldSentence({ path: ['definition', 'url'], message: 'plain http is only allowed on loopback' }, name)).toBe('URL: plain http is only allowed on loopback');
    expect(fieldSentence({ path: ['definition', 'name'], message: 'Invalid input: expected string, received undefined' }, name)).toBe('definition › name: this is required');
    expect(plainIssue('Invalid input: expected number, received string')).toBe('expected a number');
    expect(plainIssue('Too small: expected string to have >=1 characters')).toBe('this is required');
  });
});

describe("the gate's refusal of a tool's arguments names the field and says what to do", () => {
  it('each JSON Schema keyword the gate reports reads as an instruction, at the field it is about', () => {
    const cases: Array<[string, { path: string; words: string }]> = [
      ['arguments.priority: must be <= 5', { path: '/priority', words: 'Enter 5 or less.' }],
      ['arguments.amount: must be > 0', { path: '/amount', words: 'Enter more than 0.' }],
      ['arguments.assignee.login: must NOT have fewer than 2 characters', { path: '/assignee/login', words: 'Enter at least 2 characters.' }],
      ['arguments.labels: must NOT have more than 3 items', { path: '/labels', words: 'Use at most 3 items.' }],
      ['arguments.labels.0: must be equal to one of the allowed values', { path: '/labels/0', words: 'Choose one of the allowed values.' }],
      ['arguments.repo: must match pattern "^[a-z]+/[a-z]+$"', { path: '/repo', words: "This isn't in the form the tool expects: see the field's description." }],
      ['arguments.title: required', { path: '/title', words: 'This is required.' }],
      ['arguments.color: not allowed by the tool schema', { path: '/color', words: "The tool doesn't accept this field: remove it." }],
      ['arguments.draft: must be boolean', { path: '/draft', words: 'Expected yes or no.' }],
      ['arguments: must be object', { path: '', words: 'Expected a group of values.' }],
      ['arguments.when: must match format "date-time"', { path: '/when', words: 'Enter a valid date-time.' }],
    ];
    for (const [message, expected] of cases) expect(argumentsProblem(message), message).toEqual(expected);
  });

  it('a message of another shape is left to the error note', () => {
    expect(argumentsProblem("the tool's inputSchema is not a valid JSON Schema (x)")).toBeNull();
  });
});

describe('every kind of connection failure maps to a sentence with the fix', () => {
  const samples: { [K in ConnectFailureKind]: Extract<ConnectFailure, { kind: K }> } = {
    'command-not-found': { kind: 'command-not-found', command: 'uvx' },
    'working-folder-missing': { kind: 'working-folder-missing', command: 'node', cwd: '/srv/mcp' },
    'permission-denied': { kind: 'permission-denied', command: '/opt/tools/server.sh' },
    'process-exited': { kind: 'process-exited', command: 'npx', atStart: true, exitCode: 1, signal: null, lastStderr: 'Error: GITHUB_TOKEN is not set' },
    dns: { kind: 'dns', host: 'mcp.exampel.com' },
    refused: { kind: 'refused', host: '127.0.0.1', port: 8931 },
    network: { kind: 'network', host: 'mcp.example.com', code: 'ECONNRESET' },
    tls: { kind: 'tls', host: 'mcp.example.com', problem: 'self-signed', code: 'DEPTH_ZERO_SELF_SIGNED_CERT' },
    'http-status': { kind: 'http-status', host: 'mcp.example.com', status: 401 },
    timeout: { kind: 'timeout', ms: 30_000 },
    'missing-secret': { kind: 'missing-secret', name: 'env:API_TOKEN' },
    'not-mcp': { kind: 'not-mcp', detail: 'Server listening on port 3000' },
    other: { kind: 'other', detail: 'something odd' },
  };

  it('the sample list covers every kind the contract defines, and each sample is a valid failure', () => {
    const kinds = ConnectFailure.options.map((o) => o.shape.kind.value).sort();
    expect(Object.keys(samples).sort()).toEqual(kinds);
    expect(Object.keys(CONNECT_FAILURE_SENTENCES).sort()).toEqual(kinds);
    for (const sample of Object.values(samples)) expect(ConnectFailure.safeParse(sample).success).toBe(true);
  });

  it('each kind has its own sentence that carries what the core found', () => {
    const texts = new Set<string>();
    for (const sample of Object.values(samples)) {
      const text = explainConnectFailure(sample);
      expectSentence(text, sample.kind);
      texts.add(text);
    }
    expect(texts.size).toBe(Object.keys(samples).length);
    expect(explainConnectFailure(samples['command-not-found'])).toBe("Warden could not start `uvx`: no such program. Check the command in the server's settings.");
    expect(explainConnectFailure(samples['process-exited'])).toContain('“Error: GITHUB_TOKEN is not set”');
    expect(explainConnectFailure(samples['process-exited'])).toContain('exited with code 1');
    expect(explainConnectFailure(samples.dns)).toContain("couldn't find mcp.exampel.com");
    expect(explainConnectFailure(samples.refused)).toContain('127.0.0.1:8931');
    expect(explainConnectFailure(samples.tls)).toContain('self-signed');
    expect(explainConnectFailure(samples.timeout)).toContain('30 seconds');
    expect(explainConnectFailure(samples['missing-secret'])).toContain('API_TOKEN');
  });

  it('HTTP statuses are told apart in words (401, 403, 404, 5xx)', () => {
    const say = (status: number) => explainConnectFailure({ kind: 'http-status', host: 'h.example', status });
    expect(say(401)).toMatch(/refused Warden's credentials \(HTTP 401, unauthorized\)/);
    expect(say(403)).toMatch(/isn't allowed .*HTTP 403, forbidden/);
    expect(say(404)).toMatch(/nothing at this address \(HTTP 404, not found\)/);
    expect(say(500)).toMatch(/failed on its side \(HTTP 500, server error\)/);
    expect(say(503)).toMatch(/HTTP 503, server error/);
    expect(new Set([401, 403, 404, 500, 429, 302, 418].map(say)).size).toBe(7);
  });

  it('a connection state reads as words, with the retry countdown', () => {
    expect(explainConnection({ state: 'error', reason: 'x', failure: samples.refused, retryInMs: 2000, attempt: 1 })).toMatch(/refused\..* Retrying in 2 s\.$/);
    expect(explainConnection({ state: 'error', reason: 'the server went away' })).toBe("Couldn't connect: the server went away.");
    expect(explainConnection({ state: 'connected', transport: 'stdio' })).toBe('Connected');
    expect(explainConnection(undefined)).toBe('Disconnected');
  });
});
