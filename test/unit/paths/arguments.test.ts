/**
 * The one definition of what counts as a path in a tool call (electron/core/paths/arguments.ts):
 * what it judges as a path and why, and that every part of Warden that needs the answer asks it
 * — the policy's normalization, the folder wall, the trusted preview and the permission matrix —
 * with no second list of "path names" anywhere in the core.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { argumentPathsOf, isPathName, isPathShaped, MAX_PATH_DEPTH, pathsIn, schemaPaths } from '../../../electron/core/paths/arguments';

const ROOT = path.resolve(import.meta.dirname, '../../..');

describe('what counts as a path', () => {
  it('by name, case and separators ignored', () => {
    for (const name of ['path', 'paths', 'src', 'dst', 'targetPath', 'target_path', 'TARGET-PATH', 'outputFile', 'output_file', 'OUTPUTFILE', 'workingDirectory', 'location', 'files', 'source', 'destination', 'cwd', 'root', 'folder', 'file_name']) {
      expect(isPathName(name), name).toBe(true);
    }
    for (const name of ['content', 'message', 'query', 'profile', 'xpath', 'url', 'uri']) expect(isPathName(name), name).toBe(false);
  });

  it('by value, wherever it appears: absolute, ~, file:, a Windows drive or UNC prefix', () => {
    for (const v of ['/etc/passwd', '~/x', '~', 'file:///etc/passwd', 'FILE:/x', 'C:\\Windows', 'c:/x', 'C:secrets', '\\\\server\\share', '//server/share', '\\\\?\\C:\\x', '\\rooted', ' /etc/passwd ']) {
      expect(isPathShaped(v), v).toBe(true);
    }
    for (const v of ['hello', 'notes.txt', 'Q: what is it', 'https://example.com/x', '/* a comment */\nconst x = 1;', '']) expect(isPathShaped(v), v).toBe(false);
  });

  it('in a call: every name, schema and value shape at any depth, each named by its dotted field', () => {
    const schema = {
      type: 'object',
      properties: {
        link: { type: 'string', format: 'uri' },
        site: { type: 'string', format: 'uri-reference' },
        ref: { $ref: '#/$defs/where' },
        files: { type: 'array', items: { type: 'string' } },
      },
      $defs: { where: { anyOf: [{ type: 'string', format: 'uri-reference' }, { type: 'number' }] } },
    };
    const found = pathsIn(
      {
        src: 'a.txt',
        link: 'https://example.com',
        site: '../secret',
        ref: 'docs/x',
        files: ['a', 'b'],
        options: { target: { value: 'relative/x' } },
        deep: [{ note: '~/.ssh/id_rsa' }],
        uri: 'file:///etc/passwd',
        url: 'https://example.com',
        message: 'hello',
        count: 3,
      },
      schema,
    ).paths;
    expect(found.map((p) => [p.field, p.by])).toEqual([
      ['src', 'name'],
      ['site', 'schema'],
      ['ref', 'schema'],
      ['files.0', 'name'],
      ['files.1', 'name'],
      ['options.target.value', 'name'],
      ['deep.0.note', 'value'],
      ['uri', 'value'],
    ]);
  });

  it('a relative path in a field no name or schema marks is a path by its value; prose and other schemes are not', () => {
    const byValue = (note: string) => pathsIn({ note }).paths.map((p) => p.by);
    for (const note of ['./x', '../../outside/secret.txt', '.\\x', '..\\x', '..', 'docs/link/key', 'a\\b', 'x /../../etc/passwd', 'and/or']) {
      expect(byValue(note), note).toEqual(['value']);
    }
    for (const note of ['hello', 'see /etc/passwd', 'https://example.com/a/b', 'mailto:a@b.c', 'a/b\nc/d', '...']) {
      expect(byValue(note), note).toEqual([]);
    }
  });

  it('a path Warden cannot place, or cannot reach, is reported as one whose place is unknown', () => {
    const opts = { semantics: 'posix' as const, fs: null, workingFolder: '/w' };
    const placed = (args: Record<string, unknown>) => argumentPathsOf(args, undefined, opts);
    expect(placed({ path: ' /etc/passwd' })).toMatchObject([{ field: 'path', opened: null, why: expect.stringMatching(/spaces/) }]);
    expect(placed({ note: 'file://otherhost/etc/passwd' })).toMatchObject([{ field: 'note', opened: null, why: expect.stringMatching(/another computer/) }]);
    expect(placed({ note: 'file:///etc/%70asswd' })).toEqual([{ field: 'note', written: 'file:///etc/%70asswd', opened: '/etc/passwd' }]);
    let deep: Record<string, unknown> = { path: '/etc/passwd' };
    for (let i = 0; i < MAX_PATH_DEPTH + 2; i++) deep = { a: deep };
    expect(placed(deep).at(-1)).toMatchObject({ opened: null, why: expect.stringMatching(/nested more than/) });
  });

  it('a tool’s schema says which inputs are paths and whether it takes text that may hold one (the matrix)', () => {
    const schema = {
      type: 'object',
      properties: {
        dst: { type: 'string' },
        files: { type: 'array', items: { type: 'string' } },
        link: { type: 'string', format: 'uri' },
        options: { type: 'object', properties: { target: { type: 'object', properties: { value: { type: 'string' } } } } },
        count: { type: 'number' },
      },
    };
    expect(schemaPaths(schema)).toEqual({ fields: ['dst', 'files', 'link', 'options.target.value'], freeText: false });
    expect(schemaPaths({ type: 'object', properties: { message: { type: 'string' } } })).toEqual({ fields: [], freeText: true });
    expect(schemaPaths({ type: 'object', properties: { n: { type: 'integer' } } })).toEqual({ fields: [], freeText: false });
  });
});

/** Every source file of the core, relative to the repository. */
function coreFiles(dir = 'electron/core'): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    return statSync(path.join(ROOT, rel)).isDirectory() ? coreFiles(rel) : /\.tsx?$/.test(name) ? [rel] : [];
  });
}

describe('one definition, every caller', () => {
  it('the policy, the folder wall, the trusted preview and the permission matrix all ask paths/arguments.ts', () => {
    const callers: Record<string, RegExp> = {
      'electron/core/policy/normalize.ts': /import \{[^}]*\bpathsIn\b[^}]*\} from '\.\.\/paths\/arguments'/,
      'electron/core/gate/decisions.ts': /import \{[^}]*\bargumentPathsOf\b[^}]*\} from '\.\.\/paths\/arguments'/,
      'electron/core/preview/trusted-preview.ts': /import \{[^}]*\bpathsIn\b[^}]*\} from '\.\.\/paths\/arguments'/,
      'electron/core/permissions/matrix.ts': /import \{[^}]*\bschemaPaths\b[^}]*\} from '\.\.\/paths\/arguments'/,
    };
    for (const [file, imports] of Object.entries(callers)) expect(readFileSync(path.join(ROOT, file), 'utf8'), file).toMatch(imports);
  });

  it('no other file of the core keeps its own list of path-like names', () => {
    // A regular expression or list naming two or more of these words is a second definition.
    const words = ['path', 'paths', 'file', 'files', 'filename', 'filepath', 'dir', 'directory', 'folder', 'source', 'destination', 'dest', 'src', 'dst', 'target', 'targetPath', 'cwd', 'location'];
    const alternation = new RegExp(`(?:^|[(|/^'"])(?:${words.join('|')})\\|(?:${words.join('|')})(?:[|)$'"]|$)`, 'i');
    const offenders = coreFiles()
      .filter((f) => f !== 'electron/core/paths/arguments.ts')
      .filter((f) => readFileSync(path.join(ROOT, f), 'utf8').split('\n').some((line) => alternation.test(line) && !line.trim().startsWith('*') && !line.trim().startsWith('//')));
    expect(offenders).toEqual([]);
  });
});
