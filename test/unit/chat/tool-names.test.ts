import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildToolTable, MODEL_TOOL_NAME } from '../../../electron/core/chat/tool-names';
import type { ToolDescriptor } from '../../../electron/core/gate/ports';

const tool = (serverId: string, accountId: string, name: string, serverLabel = serverId, accountLabel = accountId): ToolDescriptor => ({
  serverId, accountId, name, serverLabel, accountLabel, inputSchema: { type: 'object' }, contractHash: 'c', endpointHash: 'e',
});

describe('model-facing tool names', () => {
  it('are provider-legal and unique across servers and accounts, whatever the labels and names', () => {
    const idArb = fc.stringMatching(/^[a-z0-9-]{1,8}$/);
    fc.assert(
      fc.property(fc.array(fc.tuple(idArb, idArb, fc.string({ minLength: 1, maxLength: 90 }), fc.string({ maxLength: 40 })), { maxLength: 40 }), (rows) => {
        const tools = rows.map(([s, a, n, label]) => tool(s, a, n, label));
        const table = buildToolTable(tools);
        const unique = new Set(tools.map((t) => `${t.serverId}\u0000${t.accountId}\u0000${t.name}`));
        expect(table.entries.length).toBe(unique.size);
        for (const e of table.entries) expect(e.modelName).toMatch(MODEL_TOOL_NAME);
        expect(new Set(table.entries.map((e) => e.modelName)).size).toBe(table.entries.length);
      }),
    );
  });

  it('name two accounts of one server apart, and never depend on listing order', () => {
    const tools = [tool('gh', 'work', 'close_issue', 'GitHub', 'Work'), tool('gh', 'home', 'close_issue', 'GitHub', 'Personal'), tool('demo', 'd', 'close_issue', 'Demo')];
    const a = buildToolTable(tools).entries.map((e) => e.modelName);
    const b = buildToolTable([...tools].reverse()).entries.map((e) => e.modelName).reverse();
    expect(a).toEqual(['GitHub_Work__close_issue', 'GitHub_Personal__close_issue', 'Demo__close_issue']);
    expect(b).toEqual(a);
  });

  it('keep every tool when a server names its tool after the hashed name another tool got, in any order', () => {
    // Two servers both labelled "Notes" with a tool "add": each gets a hashed name. A third server,
    // also labelled "Notes", names its tool so that its plain name is one of those hashed names.
    const a = tool('notes-a', 'd', 'add', 'Notes');
    const b = tool('notes-b', 'd', 'add', 'Notes');
    const first = buildToolTable([a, b]).entries.map((e) => e.modelName);
    expect(first).toEqual([expect.stringMatching(/^Notes__add_[0-9a-f]{6}$/), expect.stringMatching(/^Notes__add_[0-9a-f]{6}$/)]);
    const mimic = tool('mimic', 'd', first[0]!.slice('Notes__'.length), 'Notes');
    for (const order of [[a, b, mimic], [mimic, a, b], [b, mimic, a]]) {
      const table = buildToolTable(order);
      expect(table.entries).toHaveLength(3);
      expect(new Set(table.entries.map((e) => e.modelName)).size).toBe(3);
      for (const e of table.entries) expect(e.modelName).toMatch(MODEL_TOOL_NAME);
      // Each name leads to its own tool, whatever the order.
      const byTool = Object.fromEntries(table.entries.map((e) => [e.tool.serverId, e.modelName]));
      expect(byTool).toEqual(Object.fromEntries(buildToolTable([a, b, mimic]).entries.map((e) => [e.tool.serverId, e.modelName])));
    }
  });

  it('resolve only by lookup: a name that merely looks like server__tool is not in the table', () => {
    const table = buildToolTable([tool('demo', 'd', 'notes_add', 'Demo')]);
    expect(table.byName.get('Demo__notes_add')?.tool.name).toBe('notes_add');
    expect(table.byName.get('Demo__notes_delete')).toBeUndefined();
    expect(table.byName.get('demo__notes_add')).toBeUndefined();
  });
});
