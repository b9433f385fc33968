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
import { endsOAuthSignIn } from './identity';
import type { ServerService } from './server-service';

/** What the confirmation shows: one line per server, plus the exact details. */
export interface ServerChangeSummary {
  /** add/edit/import a server definition; `secret`: a new env secret value; `account`: a new account bringing env secrets. */
  action: 'add' | 'edit' | 'import' | 'secret' | 'account';
  title: string;
  detail: string;
  /**
   * Secret-looking values the request asks to keep in plain settings (`GITHUB_TOKEN of "github"`).
   * When there are any, the dialog offers keeping them plain as a choice of its own; saving
   * without that choice puts them in the OS keychain.
   */
  plainValues?: string[];
}

/**
 * The person's answer: false = cancel (nothing is saved); true = save as shown, with every
 * secret-looking value in the OS keychain; 'keep-plain' = save, keeping the `plainValues` in plain
 * settings (only meaningful when the summary lists some).
 */
export type ServerChangeAnswer = boolean | 'keep-plain';

/** Shows a summary in a native dialog and resolves with the person's answer (false unless they chose to save). */
export type ServerChangeConfirmer = (summary: ServerChangeSummary) => Promise<ServerChangeAnswer>;

/**
 * A name or value as a confirmation shows it, on one line. Bidi controls and invisible characters
 * would let it display as something else, so they are made visible.
 */
export const visible = (text: string) => makeHiddenVisible(text).replace(/\n/g, '\\n');

/** How to show the values of a definition: which secrets this change gives a new value. */
export interface DescribeOptions {
  /** Secret names (`env:API_KEY`, `header:x-api-key`) that this change sets to a new value. */
  newSecrets?: ReadonlySet<string>;
  /** Secret names left with no value by this change (left out of an import, or to be set later). */
  unsetSecrets?: ReadonlySet<string>;
  /** Secret-looking values whose place (keychain or plain settings) the dialog decides: secret name → length. */
  plainChoice?: ReadonlyMap<string, number>;
}

/** The exact, untruncated description of one server definition. */
export function describeDraft(draft: ServerDraft, options: DescribeOptions = {}): string {
  const secretText = (name: string) => {
    const length = options.plainChoice?.get(name);
    if (length !== undefined) return `(secret-looking value, ${length} characters: the OS keychain, or plain settings only if you choose that below)`;
    if (options.unsetSecrets?.has(name)) return '(secret; no value stored: left out of this import, set it later in Servers)';
    return options.newSecrets?.has(name) ? '(secret, from the keychain; a new value is set by this change, not shown)' : '(secret, from the keychain)';
  };
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
  // Only the demo is built in: it runs inside Warden, offline, with made-up notes and nothing else.
  return `"${visible(draft.name)}" is Warden's offline demo: it runs inside Warden, reaches no network and touches none of your files (its notes and files are made up and kept in memory).`;
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

/** What the confirmation wrapper reads: stored definitions and accounts. */
export interface ServerConfirmationDeps {
  servers: Pick<ServerService, 'getServer' | 'accountsOf'>;
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

/** The channels whose change a person confirms (the others pass through unchanged). */
type ConfirmedChannel = 'servers:add' | 'servers:edit' | 'secrets:set' | 'accounts:add';

/**
 * The confirmer of a host that has no native dialog (tests, a headless core): it refuses every
 * change with a plain error, so a core built without a dialog never saves a server unconfirmed.
 */
export const refusingServerConfirmer: ServerChangeConfirmer = async () => {
  throw new WardenError('UNSUPPORTED', 'This host cannot show the confirmation dialog that adding or changing a server needs; nothing was saved. Add or change servers from the Warden app');
};

/**
 * The server handlers with the channels that decide what a local program runs with, or where a
 * remote server is reached, confirmed first, so nothing changes unless the confirmer says yes:
 * servers:add / servers:edit, a new value for an env secret of a local server
 * (secrets:set), and a new account that brings env secret values (accounts:add). A refusal is a
 * DENIED error and changes nothing. Returns a new map; `handlers` is left as it was.
 */
export function confirmServerChanges<H extends Pick<Handlers, ConfirmedChannel>>(handlers: H, deps: ServerConfirmationDeps, confirm: ServerChangeConfirmer): H {
  const { servers } = deps;
  const ask = async (summary: ServerChangeSummary, refused = 'The server was not confirmed in the dialog; nothing was saved') => {
    if (!(await confirm(summary))) throw new WardenError('NOT_CONFIRMED', refused);
  };
  const newSecrets = (secrets: ReadonlyArray<{ name: string }> | undefined) => new Set((secrets ?? []).map((s) => s.name));
  const confirmed: Pick<Handlers, ConfirmedChannel> = {
    'servers:add': async (request) => {
      await ask({ action: 'add', title: `Add the server "${visible(request.definition.name)}"?`, detail: describeDraft(request.definition, { newSecrets: newSecrets(request.secrets) }) });
      return handlers['servers:add'](request);
    },
    'servers:edit': async (request) => {
      const before = servers.getServer(request.serverId);
      const signInEnd = before ? describeSignInEnd(before, request.definition) : '';
      await ask({ action: 'edit', title: `Save changes to the server "${visible(request.definition.name)}"?`, detail: describeDraft(request.definition, { newSecrets: newSecrets(request.secrets) }) + signInEnd });
      return handlers['servers:edit'](request);
    },
    // An env value is part of what a local program runs with: swapping it is confirmed like an edit.
    // Unknown servers, accounts and names are left to the handler, which refuses them with no dialog.
    'secrets:set': async (request) => {
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
      return handlers['secrets:set'](request);
    },
    'accounts:add': async (request) => {
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
      return handlers['accounts:add'](request);
    },
  };
  return { ...handlers, ...confirmed };
}
