/**
 * Contract entries for roots: the folders a person gives a server (per account) to work in.
 *
 * There is no channel that takes a path to add: `roots:choose` opens the native folder chooser
 * and adds only what the person picked there. Removing names a path (it only narrows).
 * `roots:enforce` turns a server's folders into a wall; turning the wall off is confirmed natively.
 */
import { z } from 'zod';
import { defineChannels } from '../contract-kit';

const Key = { serverId: z.string().min(1).max(200), accountId: z.string().min(1).max(200) };
export const RootFolderView = z.object({ path: z.string(), name: z.string() });

export const rootsChannels = defineChannels({
  'roots:list': {
    doc: 'The folders given to one server and account as its roots.',
    request: z.object(Key).strict(),
    /** `enforced`: whether the server is kept inside its folders (calls with a path outside them ask). */
    response: z.object({ roots: z.array(RootFolderView), enforced: z.boolean() }),
  },
  'roots:enforce': {
    doc: "Keeps a server's tools inside the folders of each account (a call with a path outside them asks first), or stops doing so; stopping is confirmed in a native dialog.",
    request: z.object({ serverId: Key.serverId, enforced: z.boolean() }).strict(),
    response: z.object({ enforced: z.boolean() }),
  },
  'roots:choose': {
    doc: "Opens the native folder chooser and gives the chosen folder to the server and account as a root; added is null if the person cancelled.",
    request: z.object(Key).strict(),
    response: z.object({ added: RootFolderView.nullable(), roots: z.array(RootFolderView) }),
  },
  'roots:remove': {
    doc: 'Takes a folder away from the roots of one server and account.',
    request: z.object({ ...Key, path: z.string().min(1).max(4096) }).strict(),
    response: z.object({ removed: z.boolean(), roots: z.array(RootFolderView) }),
  },
});
