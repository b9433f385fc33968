/**
 * A person confirms, in a dialog the renderer does not own, every server definition before it is
 * saved: adding or editing a local server decides what program runs on this machine with the
 * person's rights, and editing a remote one decides where credentials are sent. The renderer may
 * propose a definition; only main's native dialog (through this port) lets it be saved.
 */
import { displayCommandLine, type ServerDefinition, type ServerDraft } from '../../../shared/domain/servers';
import { WardenError } from '../../../shared/result';
import { makeHiddenVisible } from '../../../shared/display';
import type { Handlers } from '../dispatch';
import type { ImportService } from '../import/import-service';
import { endsOAuthSignIn } from './identity';

/** What the confirmation shows: one line per server, plus the exact details. */
export interface ServerChangeSummary {
  action: 'add' | 'edit' | 'import';
  title: string;
  detail: string;
}

/** Shows a summary in a native dialog; resolves true only if the person chose to save. */
export type ServerChangeConfirmer = (summary: ServerChangeSummary) => Promise<boolean>;

// Bidi controls and invisible characters would let a name or value display as something else.
const visible = (text: string) => makeHiddenVisible(text).replace(/\n/g, '\\n');

/** The exact, untruncated description of one server definition. */
export function describeDraft(draft: ServerDraft): string {
  if (draft.transport === 'stdio') {
    const env = draft.env.map((e) => (e.secret ? `  ${visible(e.name)} = (secret, from the keychain)` : `  ${visible(e.name)} = ${visible(e.value ?? '')}`));
    return [
      `"${visible(draft.name)}" runs this program on your computer, with your permissions:`,
      `  ${visible(displayCommandLine(draft.command, draft.args))}`,
      `  in folder: ${draft.cwd ? visible(draft.cwd) : '(Warden\'s working folder)'}`,
      env.length ? 'Environment:' : 'Environment: (none added)',
      ...env,
    ].join('\n');
  }
  if (draft.transport === 'http') {
    const headers = draft.headers.map((h) => `  ${visible(h.name)}${h.secret ? ' (secret, from the keychain)' : `: ${visible(h.value ?? '')}`}`);
    return [`"${visible(draft.name)}" is contacted at ${visible(draft.url)}`, `Authentication: ${draft.auth.kind}`, ...(headers.length ? ['Headers:', ...headers] : [])].join('\n');
  }
  return `"${visible(draft.name)}" is Warden's built-in ${draft.transport} server`;
}

/**
 * What saving `next` over `old` does to the OAuth sign-in, for the confirmation (empty when it
 * keeps it): a new address or another sign-in method signs every account out.
 */
export function describeSignInEnd(old: ServerDefinition, next: ServerDraft): string {
  if (!endsOAuthSignIn(old, next)) return '';
  const why =
    next.transport === 'http' && next.auth.kind === 'oauth'
      ? `its address changes from ${visible(old.transport === 'http' ? old.url : '')} to ${visible(next.url)}`
      : 'it no longer signs in with OAuth';
  return `\n\nSaving signs every account out of this server: ${why}, so Warden revokes and deletes its OAuth sign-in (tokens and client registration, and a stored client secret) for every account. You will need to sign in again.`;
}

/**
 * Wraps the servers:add / servers:edit / servers:import handlers so nothing is saved unless the
 * confirmer says yes. A refusal is a DENIED error and changes nothing. `current` gives the saved
 * definition of a server being edited, so the dialog can say what the edit ends.
 */
export function requireServerConfirmation(
  handlers: Handlers,
  importer: Pick<ImportService, 'drafts'>,
  confirm: ServerChangeConfirmer,
  current?: (serverId: string) => ServerDefinition | undefined,
): void {
  const ask = async (summary: ServerChangeSummary) => {
    if (!(await confirm(summary))) throw new WardenError('DENIED', 'The server was not confirmed in the dialog; nothing was saved');
  };
  const add = handlers['servers:add'];
  handlers['servers:add'] = async (request) => {
    await ask({ action: 'add', title: `Add the server "${visible(request.definition.name)}"?`, detail: describeDraft(request.definition) });
    return add(request);
  };
  const edit = handlers['servers:edit'];
  handlers['servers:edit'] = async (request) => {
    const before = current?.(request.serverId);
    const signInEnd = before ? describeSignInEnd(before, request.definition) : '';
    await ask({ action: 'edit', title: `Save changes to the server "${visible(request.definition.name)}"?`, detail: describeDraft(request.definition) + signInEnd });
    return edit(request);
  };
  const importChosen = handlers['servers:import'];
  handlers['servers:import'] = async (request) => {
    const drafts = importer.drafts(request.previewId, request.entryIds);
    if (drafts.length > 0) {
      await ask({ action: 'import', title: `Import ${drafts.length} server${drafts.length === 1 ? '' : 's'}?`, detail: drafts.map(describeDraft).join('\n\n') });
    }
    return importChosen(request);
  };
}
