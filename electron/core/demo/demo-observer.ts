/**
 * The demo's observer: what a call to the built-in demo really did to its notes, read from the
 * notes store itself (the demo runs inside Warden, so its store is Warden's to read), never from
 * what the demo's tool answered.
 *
 * It opens each demo connection's transport (so it knows which store belongs to which server and
 * account) and watches the calls that change notes: `notes_add` should leave exactly one new note
 * holding the approved text, `notes_delete` the approved note gone; every other note is compared
 * too, so the scope can say the whole list was checked. Reading tools are not watched: they
 * change nothing to observe.
 */
import { createHash } from 'node:crypto';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ObservedTarget, OpObservation, PathFacts } from '../../../shared/domain/observation';
import type { CallObserver, CallWatch, ObservedCall } from '../gate/ports';
import { openDemoTransport, type DemoNote, type DemoState } from './demo-server';

const WATCHED = new Set(['notes_add', 'notes_delete']);

/** Opens the demo's transports and observes its note-changing calls. */
export class DemoNotesObserver implements CallObserver {
  private readonly stores = new Map<string, DemoState>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Opens a built-in server's transport, remembering whose notes store it serves. */
  async open(builtin: 'demo', where: { serverId: string; accountId: string }): Promise<Transport> {
    switch (builtin) {
      case 'demo': {
        const opened = await openDemoTransport();
        this.stores.set(storeKey(where.serverId, where.accountId), opened.state);
        return opened.transport;
      }
    }
  }

  watch(call: ObservedCall): CallWatch | null {
    if (call.tool?.serverKind !== 'demo' || !WATCHED.has(call.toolName)) return null;
    const state = this.stores.get(storeKey(call.serverId, call.accountId));
    if (!state) return null;
    let before: DemoNote[] = [];
    const began = { ms: 0 };
    return {
      before: async () => {
        const t = performance.now();
        before = state.notes.map((n) => ({ ...n }));
        began.ms += performance.now() - t;
      },
      after: async (ending) => {
        const t = performance.now();
        const after = state.notes.map((n) => ({ ...n }));
        const observation = judgeNotes(call, before, after, ending === 'outcome_unknown', this.now());
        observation.tookMs = Math.round((began.ms + performance.now() - t) * 100) / 100;
        return observation;
      },
    };
  }
}

function storeKey(serverId: string, accountId: string): string {
  return `${serverId}\u0000${accountId}`;
}

function judgeNotes(call: ObservedCall, before: readonly DemoNote[], after: readonly DemoNote[], unanswered: boolean, at: number): OpObservation {
  const was = new Map(before.map((n) => [n.id, n]));
  const now = new Map(after.map((n) => [n.id, n]));
  const added = after.filter((n) => !was.has(n.id));
  const removed = before.filter((n) => !now.has(n.id));
  const edited = after.filter((n) => was.has(n.id) && was.get(n.id)!.text !== n.text);
  const targets: ObservedTarget[] = [];
  const words: string[] = unanswered ? ['The demo never answered.'] : [];
  let mine: number | null = null;
  if (call.toolName === 'notes_add') {
    const text = typeof call.args.text === 'string' ? call.args.text : '';
    const match = added.find((n) => n.text === text);
    mine = match?.id ?? null;
    targets.push({
      field: 'text',
      path: 'a new note in the demo notes list',
      before: noteFacts(null),
      after: noteFacts(match ?? added[0] ?? null),
      expected: 'content',
      expectedSha256: sha256(text),
      matches: match !== undefined,
      changed: added.length > 0,
      retargeted: false,
      words: match ? `Note #${match.id} was added with exactly the approved text.` : added.length ? 'A note was added, but not with the approved text.' : 'No note was added.',
    });
  } else {
    const id = typeof call.args.id === 'number' ? call.args.id : null;
    mine = id;
    const had = id !== null ? (was.get(id) ?? null) : null;
    const has = id !== null ? (now.get(id) ?? null) : null;
    targets.push({
      field: 'id',
      path: `note #${id ?? '?'} in the demo notes list`,
      before: noteFacts(had),
      after: noteFacts(has),
      expected: 'absent',
      expectedSha256: null,
      matches: has === null,
      changed: (had === null) !== (has === null),
      retargeted: false,
      words: has === null ? (had ? `Note #${id} is gone.` : `There was no note #${id} before the call, and there is none now.`) : `Note #${id} is still there.`,
    });
  }
  const others = [
    ...added.filter((n) => n.id !== mine).map((n) => `note #${n.id} added`),
    ...removed.filter((n) => n.id !== mine).map((n) => `note #${n.id} removed`),
    ...edited.map((n) => `note #${n.id} changed`),
  ];
  words.push(...targets.map((t) => t.words));
  words.push(others.length ? `Other notes changed while the call ran: ${others.join(', ')}.` : 'No other note changed.');
  return {
    operationId: call.operationId,
    observer: 'demo-notes',
    source: "Warden read the demo's notes store itself, not the demo's answer",
    scope: 'every note in this demo account (the demo keeps nothing else that a call can change)',
    targets,
    otherChanges: others,
    foldersChecked: true,
    summary: words.join(' '),
    tookMs: 0,
    at,
  };
}

function noteFacts(note: DemoNote | null): PathFacts {
  return note
    ? { exists: true, type: 'other', resolved: null, size: Buffer.byteLength(note.text, 'utf8'), sha256: sha256(note.text), mtimeMs: Date.parse(note.createdAt) || null, unreadable: null }
    : { exists: false, type: null, resolved: null, size: null, sha256: null, mtimeMs: null, unreadable: null };
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
