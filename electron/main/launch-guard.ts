/**
 * The launch guard: an installed (packaged) Warden refuses to start with a command-line switch
 * that would let another program debug it, run code inside it, or switch off its sandbox.
 *
 * Why: Warden holds the person's keychain access and is the only thing that can approve a tool
 * call. `--remote-debugging-port` hands the window (and its `window.warden` bridge) to whatever
 * connects to the port; `--inspect` does the same for the main process; `--js-flags`,
 * `--renderer-cmd-prefix`, `--zygote-cmd-prefix` and friends run or alter code; `--no-sandbox`,
 * `--single-process` and `--disable-web-security` remove the walls the rest of the shell relies
 * on. Anything that can edit a shortcut or a launcher script could add them, so the installed app
 * names them in a plain message and exits before it opens a window, reads a setting or touches
 * the keychain.
 *
 * The guard is an allow list: Chromium has hundreds of switches and adds more every release, so
 * a list of the dangerous ones is never complete. A packaged Warden accepts only the few switches
 * in {@link ALLOWED_SWITCHES} (language, logging, display) and refuses every other one; the
 * known-dangerous names in {@link REFUSED_SWITCHES} carry a reason in the message and are also
 * looked up in Chromium's own parse of the command line. (The
 * Electron fuses flipped in build/after-pack.cjs already make the binary ignore `--inspect` and
 * NODE_OPTIONS; this guard covers Chromium's switches too, and says why Warden did not start.)
 *
 * A developer run (`npm start`, unpackaged) keeps every switch: debugging is its purpose.
 */
import type { App, Dialog } from 'electron';

/**
 * Switch names (without dashes) a packaged Warden refuses, with what each one would allow.
 * Node's aliases are here too (`--debug*`), and names are compared after the normalisation
 * below, so `--inspect_brk` and `--INSPECT-BRK` on Windows are caught as well.
 */
export const REFUSED_SWITCHES: ReadonlyMap<string, string> = new Map([
  ['remote-debugging-port', 'lets any program on this computer control Warden through a debugging port'],
  ['remote-debugging-pipe', 'lets the program that started Warden control it'],
  ['remote-debugging-address', 'exposes the debugging port to other computers'],
  ['remote-debugging-io-pipes', 'lets the program that started Warden control it'],
  ['remote-allow-origins', 'lets web pages connect to the debugging port'],
  ['inspect', 'opens the Node.js debugger on the main process'],
  ['inspect-brk', 'opens the Node.js debugger on the main process'],
  ['inspect-brk-node', 'opens the Node.js debugger on the main process'],
  ['inspect-port', 'opens the Node.js debugger on the main process'],
  ['inspect-publish-uid', 'publishes the Node.js debugger address'],
  ['debug', 'opens the Node.js debugger on the main process'],
  ['debug-brk', 'opens the Node.js debugger on the main process'],
  ['debug-port', 'opens the Node.js debugger on the main process'],
  ['experimental-network-inspection', 'shows the main process network traffic to a debugger'],
  ['auto-open-devtools-for-tabs', 'opens developer tools on every page'],
  ['js-flags', 'changes how the JavaScript engine runs Warden code'],
  ['renderer-cmd-prefix', 'runs another program around every Warden page'],
  ['utility-cmd-prefix', 'runs another program around Warden helper processes'],
  ['gpu-launcher', 'runs another program in place of the graphics process'],
  ['browser-subprocess-path', 'runs another program in place of Warden helper processes'],
  ['no-sandbox', 'switches off the sandbox that contains Warden pages'],
  ['disable-gpu-sandbox', 'switches off the sandbox of the graphics process'],
  ['disable-setuid-sandbox', 'switches off the Linux sandbox'],
  ['disable-namespace-sandbox', 'switches off the Linux sandbox'],
  ['disable-seccomp-filter-sandbox', 'switches off the Linux sandbox'],
  ['disable-web-security', 'switches off the same-origin rules that keep pages apart'],
  ['disable-site-isolation-trials', 'switches off site isolation'],
  ['ignore-certificate-errors', 'accepts forged HTTPS certificates'],
  ['ignore-certificate-errors-spki-list', 'accepts forged HTTPS certificates'],
  ['allow-running-insecure-content', 'lets pages load insecure scripts'],
  ['zygote-cmd-prefix', 'runs another program around every Warden helper process'],
  ['ppapi-plugin-launcher', 'runs another program in place of the plugin process'],
  ['nacl-loader-cmd-prefix', 'runs another program around the native-client process'],
  ['single-process', 'runs Warden pages inside the main process, outside any sandbox'],
  ['in-process-gpu', 'runs the graphics process inside the main process, outside its sandbox'],
  ['no-zygote', 'starts helper processes without the Linux sandbox'],
  ['remote-debugging-targets', 'lets another program control Warden through a debugging port'],
  ['load-extension', 'loads browser extensions into Warden'],
  ['proxy-server', 'sends Warden network traffic through another computer'],
  ['proxy-pac-url', 'sends Warden network traffic through another computer'],
  ['host-resolver-rules', 'sends Warden network traffic to other computers'],
  ['host-rules', 'sends Warden network traffic to other computers'],
]);

/**
 * The only switches (names without dashes) a packaged Warden accepts: they choose a language,
 * turn on Chromium's log, or pick how the window is drawn, and none of them runs code, opens a
 * port, moves network traffic or weakens a sandbox. `psn-…` is the process serial number older
 * macOS versions add when Finder starts an app.
 */
export const ALLOWED_SWITCHES: ReadonlySet<string> = new Set([
  'lang',
  'enable-logging',
  'log-level',
  'v',
  'force-device-scale-factor',
  'high-dpi-support',
  'ozone-platform',
  'ozone-platform-hint',
  'enable-wayland-ime',
  'disable-gpu',
  'disable-gpu-compositing',
  'force-dark-mode',
]);

/** Whether a packaged Warden accepts this normalised switch name. */
function isAllowedSwitch(name: string): boolean {
  return ALLOWED_SWITCHES.has(name) || /^psn-\d/.test(name);
}

/**
 * The refused switches in `argv` (its first entry, the executable, is skipped), each named once:
 * the known-dangerous ones first, in the order of {@link REFUSED_SWITCHES}, then every other
 * switch not in {@link ALLOWED_SWITCHES}, in the order given.
 *
 * Parsed the way the attacker's target would read it: Chromium takes `--name`, `-name` and (on
 * Windows) `/name`, with `=value`, and lower-cases names on Windows; Node also accepts `_` for
 * `-`. Unlike Chromium, the scan does not stop at a `--` argument: nobody needs these switches
 * after it, and a parser that disagrees with ours must not be able to slip one past.
 */
export function refusedLaunchSwitches(argv: readonly string[], platform: NodeJS.Platform): string[] {
  const found = new Set<string>();
  for (const arg of argv.slice(1)) {
    const name = switchName(arg, platform);
    if (name !== null && !isAllowedSwitch(name)) found.add(name);
  }
  return inMessageOrder(found);
}

/** The names, known-dangerous ones first in the order of {@link REFUSED_SWITCHES}, then the rest. */
function inMessageOrder(found: ReadonlySet<string>): string[] {
  const known = [...REFUSED_SWITCHES.keys()].filter((name) => found.has(name));
  return [...known, ...[...found].filter((name) => !REFUSED_SWITCHES.has(name))];
}

/** The normalised switch name of one argument, or null when it is not a switch. */
function switchName(arg: string, platform: NodeJS.Platform): string | null {
  const prefix = arg.startsWith('--') ? 2 : arg.startsWith('-') || (platform === 'win32' && arg.startsWith('/')) ? 1 : 0;
  if (prefix === 0 || arg.length === prefix) return null;
  const body = arg.slice(prefix);
  const end = body.indexOf('=');
  return (end === -1 ? body : body.slice(0, end)).toLowerCase().replaceAll('_', '-');
}

/** The plain message shown when Warden refuses to start. */
export function refusalMessage(names: readonly string[]): string {
  const listed = names.map((n) => `--${n}`);
  const reasons = names.map((n) => `• --${n} ${REFUSED_SWITCHES.get(n) ?? 'is not one of the few switches the installed Warden accepts'}.`);
  return [
    `Warden was started with ${listed.length === 1 ? 'a switch' : 'switches'} it does not accept: ${listed.join(', ')}.`,
    '',
    ...reasons,
    '',
    'Warden keeps your keychain and decides which tool calls run, so the installed app never lets another program debug or change it.',
    '',
    'Start Warden without these switches. If you did not add them yourself, check the shortcut or script that started Warden: another program may have changed it.',
  ].join('\n');
}

/** What the guard needs from Electron. */
export interface LaunchGuardHost {
  app: Pick<App, 'commandLine' | 'exit'>;
  dialog: Pick<Dialog, 'showErrorBox'>;
}

/**
 * Refuses a launch that carries a refused switch: tells Chromium to forget the switches, shows
 * the message (a window on macOS and Windows, stderr on Linux before `ready`, as Electron's
 * `showErrorBox` does), and exits with status 1. Returns true when it refused. Call it only for a
 * packaged app, first thing, before anything else starts.
 *
 * Checks Chromium's own parse of the command line (`app.commandLine.hasSwitch`) as well as
 * `argv`, so a spelling Chromium understands and this parser does not is still caught.
 */
export function refuseDebuggingLaunch(host: LaunchGuardHost, argv: readonly string[], platform: NodeJS.Platform): boolean {
  const found = new Set(refusedLaunchSwitches(argv, platform));
  for (const name of REFUSED_SWITCHES.keys()) {
    if (host.app.commandLine.hasSwitch(name)) found.add(name);
  }
  if (found.size === 0) return false;
  const names = inMessageOrder(found);
  for (const name of names) host.app.commandLine.removeSwitch(name);
  console.error(`[warden] refused to start with ${names.map((n) => `--${n}`).join(', ')}`);
  try {
    host.dialog.showErrorBox('Warden was not started', refusalMessage(names));
  } finally {
    host.app.exit(1);
  }
  return true;
}
