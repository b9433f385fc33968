/**
 * Import reads a file from disk, so which file is read must never be the renderer's choice: a
 * compromised renderer naming `\\attacker\share\mcp.json` would make Windows authenticate to a
 * remote SMB host, and naming any local file would turn import into a file probe. The renderer
 * only says which kind of config it wants; main's native open dialog (the FileDialogs port)
 * lets the person choose the file, starting at the known location. Network and device paths are
 * refused wherever they arrive: from the chooser, or through a symbolic link.
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore, type WardenCore } from '../../../electron/core/app-core';
import { dispatch } from '../../../electron/core/dispatch';
import type { FileDialogs, OpenFileRequest } from '../../../electron/core/ports';
import { confirmEveryServerChange } from '../../host/standin-server-confirmer';

let core: WardenCore | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await core?.close();
  core = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A config file with one local server, in a fresh temp folder. */
function configFile(name = 'claude_desktop_config.json'): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'warden-import-dialog-'));
  dirs.push(dir);
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ mcpServers: { notes: { command: 'npx', args: ['-y', 'notes-server'] } } }));
  return { dir, path };
}

/** main's open dialog as the test drives it: records what it was asked and answers with `answer`. */
function chooser(answer: string | null): FileDialogs & { requests: OpenFileRequest[] } {
  const requests: OpenFileRequest[] = [];
  return {
    requests,
    openFile: async (request) => {
      requests.push(request);
      return answer;
    },
    saveFile: async () => null,
  };
}

const home = '/home/someone';
function start(fileDialogs?: FileDialogs) {
  core = createCore({ confirmServerChange: confirmEveryServerChange, version: 'test', servers: { importLocation: { platform: 'linux', env: {}, home } }, ...(fileDialogs ? { fileDialogs } : {}) });
}
const run = (channel: string, request: unknown) => dispatch(core!.handlers, channel, request, () => {});

describe('import reads only a file the person chose in main\'s open dialog', () => {
  it('a renderer cannot name the file: a path or folder in the request is refused and nothing is read', async () => {
    const { path, dir } = configFile();
    const dialogs = chooser(path);
    start(dialogs);
    for (const request of [
      { source: 'file', path },
      { source: 'claude-desktop', path },
      { source: 'vscode-workspace', workspaceFolder: dir },
      { source: 'file', path: '\\\\attacker.example\\share\\mcp.json' },
    ]) {
      const r = await run('servers:import-preview', request);
      expect(r, JSON.stringify(request)).toMatchObject({ ok: false, error: { code: 'INVALID_REQUEST' } });
    }
    expect(dialogs.requests).toEqual([]);
  });

  it('the open dialog starts at the known location, and only the chosen file is read', async () => {
    const { path } = configFile();
    const dialogs = chooser(path);
    start(dialogs);
    const r = await run('servers:import-preview', { source: 'claude-desktop' });
    expect(r, JSON.stringify(r)).toMatchObject({ ok: true, value: { path, format: 'claude-desktop', entries: [{ sourceName: 'notes', commandLine: 'npx -y notes-server' }] } });
    expect(dialogs.requests).toHaveLength(1);
    expect(dialogs.requests[0]!.defaultPath).toBe(join(home, '.config', 'Claude', 'claude_desktop_config.json'));
    expect(dialogs.requests[0]!.title).toMatch(/Claude Desktop/);
  });

  it('cancelling the dialog reads and imports nothing', async () => {
    start(chooser(null));
    expect(await run('servers:import-preview', { source: 'cursor' })).toMatchObject({ ok: false, error: { code: 'CANCELLED', message: expect.stringMatching(/No file was chosen/) } });
  });

  it('a core without a file chooser (headless) opens no file at all', async () => {
    start();
    expect(await run('servers:import-preview', { source: 'file' })).toMatchObject({ ok: false, error: { code: 'UNSUPPORTED' } });
  });

  it.each(['\\\\attacker.example\\share\\mcp.json', '//attacker.example/share/mcp.json', '\\\\?\\UNC\\attacker.example\\share\\mcp.json', '\\\\.\\pipe\\warden.json', '\\??\\C:\\mcp.json'])(
    'a network or device path from the chooser is refused with a plain error: %s',
    async (chosen) => {
      start(chooser(chosen));
      const r = await run('servers:import-preview', { source: 'file' });
      expect(r).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED', message: expect.stringMatching(/is a network or device path; Warden reads config files only from this computer/) } });
    },
  );

  it('a chosen file that is a link to a network path is refused before anything follows the link', async () => {
    const { dir } = configFile();
    const link = join(dir, 'mcp.json');
    symlinkSync('//attacker.example/share/mcp.json', link);
    start(chooser(link));
    const r = await run('servers:import-preview', { source: 'cursor' });
    expect(r).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED', message: expect.stringMatching(/links to \/\/attacker\.example\/share\/mcp\.json, a network or device path/) } });
  });

  it('a chosen file that is not a regular file (a FIFO, a device) is refused without reading it', async () => {
    const { dir } = configFile();
    const link = join(dir, 'zero.json');
    symlinkSync('/dev/zero', link);
    start(chooser(link));
    const r = await run('servers:import-preview', { source: 'file' });
    expect(r).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED', message: expect.stringMatching(/is not a regular file/) } });
  });
});
