/**
 * Import from other apps, assembled for the core: the importer over the server service, its two
 * channels (`servers:import-preview`, `servers:import`), and the person's confirmation of an
 * import in the same native dialog as every other server change.
 *
 * Why a module of its own: import builds on the server service and its confirmation words, never
 * the other way round, so the settings module can be read (and changed) without knowing that
 * import exists.
 */
import { homedir } from 'node:os';
import { WardenError } from '../../../shared/result';
import type { Handlers } from '../dispatch';
import { refusingFileDialogs, type Clock, type FileDialogs } from '../ports';
import { describeDraft, refusingServerConfirmer, visible, type ServerChangeConfirmer } from '../settings/server-confirmation';
import type { ServerService } from '../settings/server-service';
import type { LocationContext } from './config-locations';
import { ImportService, type ImportPlan } from './import-service';

type ImportChannel = 'servers:import-preview' | 'servers:import';

/** What a host may pass in; everything has a safe default. */
export interface ImportModuleOptions {
  /** Platform/env/home for default import locations. Default: this process's. */
  importLocation?: Omit<LocationContext, 'workspaceFolder'>;
  /** Main's native file choosers (import reads only a file chosen there). Default: refuses, so a headless core opens no file. */
  fileDialogs?: FileDialogs;
  /** Main's native confirmation of what an import saves. Default: refuses, so nothing is imported unconfirmed. */
  confirmChange?: ServerChangeConfirmer;
}

/** Builds the importer and its contract handlers (an import confirmed first). */
export function createImportModule(options: ImportModuleOptions & { servers: ServerService; clock: Clock }) {
  const importer = new ImportService({
    servers: options.servers,
    clock: options.clock,
    location: options.importLocation ?? { platform: process.platform, env: process.env, home: homedir() },
    fileDialogs: options.fileDialogs ?? refusingFileDialogs,
  });
  const plain: Pick<Handlers, ImportChannel> = {
    'servers:import-preview': (r) => importer.chooseAndPreview(r),
    'servers:import': async (r) => ({ servers: await importer.import(r) }),
  };
  const confirm = options.confirmChange ?? refusingServerConfirmer;
  const handlers: Pick<Handlers, ImportChannel> = {
    ...plain,
    // Built from the final definitions after the per-value decisions. A value the renderer asked to
    // keep in plain settings stays plain only if the person chose exactly that in the dialog.
    'servers:import': async (request) => {
      const plan = importer.plan(request);
      const plainValues = plan.values.filter((v) => v.action === 'plain').map((v) => `${visible(v.name)} of "${visible(v.server)}"`);
      const n = plan.items.length;
      const answer = await confirm({ action: 'import', title: `Import ${n} server${n === 1 ? '' : 's'}?`, detail: describeImport(plan), ...(plainValues.length ? { plainValues } : {}) });
      if (!answer) throw new WardenError('NOT_CONFIRMED', 'The import was not confirmed in the dialog; nothing was saved');
      if (answer === 'keep-plain' && plainValues.length > 0) return plain['servers:import'](request);
      return plain['servers:import']({ ...request, decisions: request.decisions.map((d) => (d.action === 'plain' ? { ...d, action: 'keychain' as const } : d)) });
    },
  };
  return { importer, handlers };
}

/**
 * The import confirmation, from the final definitions the import would save: each server in full,
 * then where every secret-looking value goes. Values whose place the person decides in the dialog
 * are described (with their length) as if in the keychain, never shown.
 */
export function describeImport(plan: ImportPlan): string {
  const servers = plan.items.map(({ definition, secrets }, item) => {
    const mine = plan.values.filter((v) => v.item === item);
    const plainChoice = new Map(mine.filter((v) => v.action === 'plain').map((v) => [v.secretName, v.length]));
    // Described as the default keeps them: secrets whose value goes to the keychain.
    const shown = structuredClone(definition);
    const list = shown.transport === 'stdio' ? shown.env : shown.transport === 'http' ? shown.headers : [];
    const key = (name: string) => (shown.transport === 'stdio' ? `env:${name}` : `header:${name.toLowerCase()}`);
    for (const e of list) {
      if (!plainChoice.has(key(e.name))) continue;
      e.secret = true;
      delete e.value;
    }
    const written = new Set(secrets.map((s) => s.name));
    const unsetSecrets = new Set(list.filter((e) => e.secret).map((e) => key(e.name)).filter((n) => !written.has(n) && !plainChoice.has(n)));
    return describeDraft(shown, { newSecrets: written, unsetSecrets, plainChoice });
  });
  const label = (v: ImportPlan['values'][number]) => `${visible(v.name)} of "${visible(v.server)}"`;
  const where = (action: string) => plan.values.filter((v) => v.action === action).map(label);
  const destinations = [
    ...(where('keychain').length ? [`  OS keychain: ${where('keychain').join(', ')}`] : []),
    ...(where('plain').length
      ? [`  Plain settings, only if you choose that below (settings.json: readable by programs running as you, and shown in Warden's window): ${where('plain').join(', ')}`]
      : []),
    ...(where('omit').length ? [`  Left out (not stored anywhere): ${where('omit').join(', ')}`] : []),
  ];
  const placement = destinations.length ? `\n\nWhere the secret-looking values go:\n${destinations.join('\n')}` : '';
  return `${servers.join('\n\n')}${placement}`;
}
