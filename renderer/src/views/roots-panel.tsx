/**
 * "Folders this server may work in": the roots one account of a server has been given, shown in
 * its account panel (Servers → server details), with Add folder… and Remove.
 *
 * Adding opens the native folder chooser in main (`roots:choose`); this view never names a path to
 * add, so nothing a page does can give a server a folder the person did not pick. The server
 * learns the list when it asks for it and is told whenever it changes. By default the words say
 * plainly that this is a request the server is trusted to keep; "Keep this server inside its
 * folders" (per server) makes Warden enforce it: a call with a path outside them asks first.
 * Turning that off is confirmed in a native dialog owned by main.
 */
import { useEffect, useState } from 'react';
import type { z } from 'zod';
import type { RootFolderView } from '../../../shared/contract/roots';
import { getWardenApi, toShownError, unwrap, type ShownError } from '../api';
import { ErrorNote } from '../components/common';

type Folder = z.infer<typeof RootFolderView>;

export function RootsPanel({ serverId, accountId, serverName, accountLabel, testPrefix }: { serverId: string; accountId: string; serverName: string; accountLabel: string; testPrefix: string }) {
  const [folders, setFolders] = useState<Folder[] | null>(null);
  const [enforced, setEnforced] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const run = async (work: () => Promise<void>) => {
    setError(null);
    setBusy(true);
    try {
      await work();
    } catch (e) {
      setError(toShownError(e));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    void run(async () => {
      const answer = await unwrap(getWardenApi().roots.list({ serverId, accountId }));
      setFolders(answer.roots);
      setEnforced(answer.enforced);
    });
  }, [serverId, accountId]);
  const enforce = (on: boolean) =>
    run(async () => {
      setNote(null);
      const answer = await unwrap(getWardenApi().roots.enforce({ serverId, enforced: on }));
      setEnforced(answer.enforced);
      setNote(on ? `Calls of ${serverName} with a path outside its folders now ask first.` : `${serverName} is no longer kept inside its folders by Warden.`);
    });
  const add = () =>
    run(async () => {
      setNote(null);
      const answer = await unwrap(getWardenApi().roots.choose({ serverId, accountId }));
      setFolders(answer.roots);
      setNote(answer.added ? `${serverName} may now work in ${answer.added.name}.` : 'No folder was chosen, so nothing changed.');
    });
  const remove = (folder: Folder) =>
    run(async () => {
      setNote(null);
      const answer = await unwrap(getWardenApi().roots.remove({ serverId, accountId, path: folder.path }));
      setFolders(answer.roots);
      setNote(`${serverName} was told it may no longer work in ${folder.name}.`);
    });
  const headingId = `${testPrefix}-roots-heading`;
  return (
    // Named with its account: every account of a server has this section, and each region's name must tell them apart.
    <section className="server-data-section roots" aria-label={`Folders ${serverName} may work in, for ${accountLabel}`} data-testid={`${testPrefix}-roots`}>
      <h3 id={headingId}>Folders this server may work in</h3>
      {folders === null ? null : folders.length === 0 ? (
        <div className="roots-empty" data-testid={`${testPrefix}-roots-empty`}>
          <p>
            No folders yet. You can tell {serverName} (account {accountLabel}) which folders on this computer it may work in, for example the project
            you want help with. Servers that support this read the list when they need it.
          </p>
          {enforced ? (
            <p className="roots-wall-note">
              You chose to keep {serverName} inside its folders, and this account has none: every call of its tools with a path asks first.
            </p>
          ) : (
            <p className="muted">
              This is a request to the server, not a wall: Warden tells the server which folders you chose, but does not stop its tools from reaching
              other places unless you turn on “Keep this server inside its folders” below.
            </p>
          )}
        </div>
      ) : (
        <>
          {enforced ? (
            <p className="roots-wall-note">
              {serverName} is told about these folders, and Warden keeps it inside them: a call with a path outside them asks first, even when the tool
              is set to Always Allow.
            </p>
          ) : (
            <p className="muted">
              {serverName} is told about these folders and asked to keep its work inside them. This is a request to the server, not a wall: Warden does
              not stop its tools from reaching other places unless you turn on “Keep this server inside its folders” below.
            </p>
          )}
          <ul className="tool-list" data-testid={`${testPrefix}-roots-list`}>
            {folders.map((f) => (
              <li key={f.path} className="tool-item root-folder">
                <div className="tool-head">
                  <strong>{f.name}</strong>
                  <code className="resource-uri">{f.path}</code>
                  <button type="button" className="button button-small push-right" disabled={busy} onClick={() => void remove(f)} aria-label={`Remove the folder ${f.name}`}>
                    Remove
                  </button>
                </div>
              </li>
            ))}
          </ul>
        </>
      )}
      {folders === null ? null : (
        <label className="roots-enforce">
          <input type="checkbox" checked={enforced} disabled={busy} onChange={(e) => void enforce(e.target.checked)} data-testid={`${testPrefix}-roots-enforce`} />
          <span>
            Keep this server inside its folders <span className="muted">(for every account of {serverName}; a call with a path outside them asks first; turning this off is confirmed in a Warden dialog)</span>
          </span>
        </label>
      )}
      <div className="inline-actions">
        <button type="button" className="button button-small" disabled={busy} onClick={() => void add()} data-testid={`${testPrefix}-roots-add`}>
          Add folder…
        </button>
        {note ? (
          <span className="muted" role="status">
            {note}
          </span>
        ) : null}
      </div>
      <ErrorNote error={error} />
    </section>
  );
}
