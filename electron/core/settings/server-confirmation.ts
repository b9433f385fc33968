/**
 * A person confirms, in a dialog the renderer does not own, every server definition before it is
 * saved: adding or editing a local server decides what program runs on this machine with the
 * person's rights, and editing a remote one decides where credentials are sent. The renderer may
 * propose a definition; only main's native dialog (through this port) lets it be saved.
 */
import { isCodeLoadingEnvName } from '../../../shared/domain/code-loading-env';
import { displayCommandLine, settableSecretNames, type ServerDefinition, type ServerDraft } from '../../../shared/domain/servers';
import { WardenError } from '../../../shared/result';
import { makeHiddenVisible } from '../../../shared/display';
import type { Handlers } from '../dispatch';
import type { ImportService } from '../import/import-service';
import { endsOAuthSignIn } from './identity';
import type { ServerService } from './server-service';

/** What the confirmation shows: one line per server, plus the exact details. */
export interface ServerChangeSummary {
  /** add/edit/import a server definition; `secret`: a new env secret value; `account`: a new account bringing env secrets. */
  action: 'add' | 'edit' | 'import' | 'secret' | 'account';
  title: string;
  detail: string;
}

/** Shows a summary in a native dialog; resolves true only if the person chose to save. */
export type ServerChangeConfirmer = (summary: ServerChangeSummary) => Promise<boolean>;

// Bidi controls and invisible characters would let a name or value display as something else.
const visible = (text: string) => makeHiddenVisible(text).replace(/\n/g, '\\n');

/** How to show the values of a definition: which secrets this change gives a new value. */
export interface DescribeOptions {
  /** Secret names (`env:API_KEY`, `header:x-api-key`) that this change sets to a new value. */
  newSecrets?: ReadonlySet<string>;
}

/** The exact, untruncated description of one server definition. */
export function describeDraft(draft: ServerDraft, options: DescribeOptions = {}): string {
  const secretText = (name: string) =>
    options.newSecrets?.has(name) ? '(secret, from the keychain; a new value is set by this change, not shown)' : '(secret, from the keychain)';
  if (draft.transport === 'stdio') {
    const env = draft.env.map((e) => {
      if (e.secret) return `  ${visible(e.name)} = ${secretText(`env:${e.name}`)}`;
      // Shown in full (they can never be secret) and named for what they do.
      const note = isCodeLoadingEnvName(e.name) ? ' (changes which code the program loads)' : '';
      return `  ${visible(e.name)} = ${visible(e.value ?? '')}${note}`;
    });
    return [
      `"${visible(draft.name)}" runs this program on your computer, with your permissions:`,
      `  ${visible(displayCommandLine(draft.command, draft.args))}`,
      `  in folder: ${draft.cwd ? visible(draft.cwd) : '(Warden\'s working folder)'}`,
      env.length ? 'Environment:' : 'Environment: (none added)',
      ...env,
    ].join('\n');
  }
  if (draft.transport === 'http') {
    const headers = draft.headers.map((h) => `  ${visible(h.name)}${h.secret ? ` ${secretText(`header:${h.name.toLowerCase()}`)}` : `: ${visible(h.value ?? '')}`}`);
    return [`"${visible(draft.name)}" is contacted at ${visible(draft.url)}`, `Authentication: ${draft.auth.kind}`, ...(headers.length ? ['Headers:', ...headers] : [])].join('\n');
  }
  return `"${visible(draft.name)}" is Warden's built-in ${draft.transport} server`;
}

/** The env variable names a list of secret names gives values to (`env:API_KEY` → `API_KEY`). */
function envNames(secretNames: readonly string[]): string[] {
  return secretNames.filter((n) => n.startsWith('env:')).map((n) => n.slice('env:'.length));
}

/** What a local server runs, for the secret and account confirmations. */
function runsLine(def: ServerDefinition & { transport: 'stdio' }): string[] {
  return [
    `"${visible(def.name)}" runs this program on your computer, with your permissions:`,
    `  ${visible(displayCommandLine(def.command, def.args))}`,
    `  in folder: ${def.cwd ? visible(def.cwd) : '(Warden\'s working folder)'}`,
  ];
}

/** What the confirmation wrapper reads: stored definitions and accounts, and the importer's held previews. */
export interface ServerConfirmationDeps {
  servers: Pick<ServerService, 'getServer' | 'accountsOf'>;
  importer: Pick<ImportService, 'drafts'>;
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
 * Wraps the channels that decide what a local program runs with, or where a remote server is
 * reached, so nothing changes unless the confirmer says yes: servers:add / servers:edit /
 * servers:import, a new value for an env secret of a local server (secrets:set), and a new account
 * that brings env secret values (accounts:add). A refusal is a DENIED error and changes nothing.
 */
export function requireServerConfirmation(handlers: Handlers, deps: ServerConfirmationDeps, confirm: ServerChangeConfirmer): void {
  const { servers, importer } = deps;
  const ask = async (summary: ServerChangeSummary, refused = 'The server was not confirmed in the dialog; nothing was saved') => {
    if (!(await confirm(summary))) throw new WardenError('DENIED', refused);
  };
  const newSecrets = (secrets: ReadonlyArray<{ name: string }> | undefined) => new Set((secrets ?? []).map((s) => s.name));
  const add = handlers['servers:add'];
  handlers['servers:add'] = async (request) => {
    await ask({ action: 'add', title: `Add the server "${visible(request.definition.name)}"?`, detail: describeDraft(request.definition, { newSecrets: newSecrets(request.secrets) }) });
    return add(request);
  };
  const edit = handlers['servers:edit'];
  handlers['servers:edit'] = async (request) => {
    const before = servers.getServer(request.serverId);
    const signInEnd = before ? describeSignInEnd(before, request.definition) : '';
    await ask({ action: 'edit', title: `Save changes to the server "${visible(request.definition.name)}"?`, detail: describeDraft(request.definition, { newSecrets: newSecrets(request.secrets) }) + signInEnd });
    return edit(request);
  };
  const importChosen = handlers['servers:import'];
  handlers['servers:import'] = async (request) => {
    const drafts = importer.drafts(request.previewId, request.entryIds);
    if (drafts.length > 0) {
      await ask({ action: 'import', title: `Import ${drafts.length} server${drafts.length === 1 ? '' : 's'}?`, detail: drafts.map((d) => describeDraft(d)).join('\n\n') });
    }
    return importChosen(request);
  };
  // An env value is part of what a local program runs with: swapping it is confirmed like an edit.
  // Unknown servers, accounts and names are left to the handler, which refuses them with no dialog.
  const setSecret = handlers['secrets:set'];
  handlers['secrets:set'] = async (request) => {
    const def = servers.getServer(request.serverId);
    const account = def && servers.accountsOf(def.id).find((a) => a.id === request.accountId);
    const [envName] = envNames([request.name]);
    if (def?.transport === 'stdio' && account && envName !== undefined && settableSecretNames(def).includes(request.name)) {
      await ask(
        {
          action: 'secret',
          title: `Set a new value for ${visible(envName)} of "${visible(def.name)}" (${visible(account.label)})?`,
          detail: [
            ...runsLine(def),
            `Account: ${visible(account.label)}`,
            '',
            `This gives its environment variable ${visible(envName)} a new value, kept in the OS keychain and not shown here. The program runs with it the next time it starts for this account.`,
          ].join('\n'),
        },
        'The new value was not confirmed in the dialog; nothing was changed',
      );
    }
    return setSecret(request);
  };
  const addAccount = handlers['accounts:add'];
  handlers['accounts:add'] = async (request) => {
    const def = servers.getServer(request.serverId);
    const names = envNames((request.secrets ?? []).map((s) => s.name));
    if (def?.transport === 'stdio' && names.length > 0) {
      await ask(
        {
          action: 'account',
          title: `Add the account "${visible(request.label)}" to "${visible(def.name)}"?`,
          detail: [
            ...runsLine(def),
            '',
            `For the account "${visible(request.label)}" it runs with new values (kept in the OS keychain, not shown here) for these environment variables:`,
            ...names.map((n) => `  ${visible(n)}`),
          ].join('\n'),
        },
        'The account was not confirmed in the dialog; nothing was added',
      );
    }
    return addAccount(request);
  };
}
