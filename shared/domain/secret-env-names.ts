/**
 * Which environment variables of a local server may be secret (kept in the OS keychain, never
 * shown in the save dialog).
 *
 * A secret's value is the one thing the person cannot see before a server is saved, so it must
 * be something that cannot change what runs. A deny list of dangerous names can never be
 * complete (`GIT_DIR`, `AWS_CONFIG_FILE`, `KUBECONFIG` all point a tool at a file that runs
 * commands), so the rule is turned around: only a variable whose name says it holds a credential
 * may be secret, and every other variable is a plain setting shown in full.
 *
 * A name says it holds a credential when one of its words (split at `_`, `-`, `.` and camelCase)
 * is a credential word (token, key, secret, password, passwd, pwd, pass, passphrase, credential,
 * creds, auth, bearer, pat, apikey), or it is one of a few well-known one-word names
 * (`PGPASSWORD`). Whole words only, so `KEYBOARD_LAYOUT` or `TOKENIZER_THREADS` are settings.
 * A credential word is not enough when another word says the value is a place or a program
 * (`GIT_CONFIG_KEY_0`, `AWS_SHARED_CREDENTIALS_FILE`, `SSH_AUTH_SOCK`, `AUTH_URL`), when the
 * name is one that loads code (see code-loading-env.ts), or when it is a well-known variable
 * naming a credentials file (`GOOGLE_APPLICATION_CREDENTIALS`): those name where a program reads
 * its configuration, and a hidden one is exactly what the save dialog must not hide. Under a
 * prefix a tool maps to its configuration (`CARGO_`, `PIP_`, `UV_`, `NPM_CONFIG_`…) the name must
 * also end in a credential word: `CARGO_CREDENTIAL_ALIAS_X` names a program cargo runs.
 *
 * Names are compared case-insensitively, because Windows environment names are.
 * Pure: no node:*, so the schemas in shared/ and the renderer can use it.
 */
import { isCodeLoadingEnvName } from './code-loading-env';

/** Words that, on their own, say a variable holds a credential. */
const CREDENTIAL_WORDS = new Set([
  'TOKEN', 'TOKENS', 'KEY', 'KEYS', 'APIKEY', 'SECRET', 'SECRETS', 'PASSWORD', 'PASSWORDS', 'PASSWD', 'PWD', 'PASS',
  'PASSPHRASE', 'CREDENTIAL', 'CREDENTIALS', 'CREDS', 'AUTH', 'AUTHTOKEN', 'BEARER', 'PAT',
]);

/** Well-known credential variables whose name is one word. */
const WELL_KNOWN = new Set(['PGPASSWORD', 'APIKEY', 'AUTHTOKEN', 'ACCESSTOKEN', 'SECRETKEY']);

/**
 * Words that say the value is a place, an address or a program rather than the credential itself:
 * a file or folder the program reads, a socket, an address it talks to, a command it runs.
 */
const PLACE_WORDS = new Set([
  'FILE', 'FILENAME', 'PATH', 'PATHS', 'DIR', 'DIRS', 'DIRECTORY', 'FOLDER', 'LOCATION',
  'SOCK', 'SOCKET', 'PIPE', 'CONFIG', 'CONF', 'CFG', 'INI', 'PROFILE', 'COMMAND', 'CMD', 'EXEC', 'EXECUTABLE', 'PROGRAM',
  'HELPER', 'PROCESS', 'SCRIPT', 'HOOK', 'HOOKS', 'PLUGIN', 'PLUGINS', 'MODULE', 'MODULES', 'LIB', 'LIBS', 'LIBRARY',
  'OPTIONS', 'OPTS', 'ARGS', 'FLAGS', 'URL', 'URI', 'HOST', 'ENDPOINT', 'PROXY', 'REGISTRY', 'INDEX', 'CA',
  'CERT', 'CERTS', 'CACHE', 'PREFIX', 'SHELL', 'EDITOR', 'ASKPASS', 'PRELOAD', 'INCLUDE', 'IMPORT', 'LOADER', 'TEMPLATE',
  // A program to run for the credential (cargo's `credential-provider` and `credential-alias`).
  'PROVIDER', 'PROVIDERS', 'ALIAS', 'ALIASES', 'REGISTRIES', 'COMMANDS', 'CMDS', 'EXE', 'BIN', 'BINARY', 'SCRIPTS',
  'RUNNER', 'WRAPPER', 'LAUNCHER', 'INTERPRETER', 'HANDLER',
]);

/**
 * Prefixes under which a tool reads any variable as one of its configuration keys (`CARGO_X_Y` is
 * cargo's `x.y`): what such a key does is the tool's business and changes between versions, so
 * only a key that ends in a credential word holds one (`CARGO_REGISTRY_TOKEN`); the words before
 * it name only where in the configuration it goes, so a registry or an index there is no place.
 */
const CONFIG_PREFIXES = ['CARGO_', 'POETRY_', 'PIP_', 'UV_', 'NPM_CONFIG_', 'YARN_', 'BUNDLE_', 'GRADLE_', 'ORG_GRADLE_PROJECT_', 'CONDA_', 'PDM_', 'HATCH_'];
/** Words that, under a configuration prefix, name a section of the configuration rather than a place. */
const CONFIG_SECTIONS = new Set(['REGISTRY', 'REGISTRIES', 'INDEX']);
/** Configuration keys whose last part is a name chosen by the person: poetry's `pypi-token.<repository>`. */
const NAMED_CREDENTIAL_KEYS = ['POETRY_PYPI_TOKEN_'];

/** Well-known variables that name a credentials FILE (which can run commands) despite their name. */
const CREDENTIAL_FILES = new Set(['GOOGLE_APPLICATION_CREDENTIALS', 'GOOGLE_GHA_CREDS_PATH', 'CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE']);

/** The words of a variable name: `GITHUB_TOKEN` → GITHUB, TOKEN; `apiKey` → API, KEY. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter(Boolean);
}

/** True if an environment variable of this name may be kept secret: its name says it holds a credential, and nothing about it says it is a place or loads code. */
export function mayBeSecretEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  if (isCodeLoadingEnvName(name) || CREDENTIAL_FILES.has(upper)) return false;
  // `PWD` alone is the shell's working folder, not a password.
  if (upper === 'PWD' || upper === 'OLDPWD') return false;
  const words = nameWords(name);
  if (CONFIG_PREFIXES.some((p) => upper.startsWith(p))) {
    if (words.some((w) => PLACE_WORDS.has(w) && !CONFIG_SECTIONS.has(w))) return false;
    return CREDENTIAL_WORDS.has(words[words.length - 1]!) || NAMED_CREDENTIAL_KEYS.some((p) => upper.startsWith(p) && upper.length > p.length);
  }
  if (words.some((w) => PLACE_WORDS.has(w))) return false;
  return WELL_KNOWN.has(upper) || words.some((w) => CREDENTIAL_WORDS.has(w));
}

/** Why `name` cannot be secret, in plain words naming it, or null when it may be. */
export function envSecretProblem(name: string): string | null {
  if (mayBeSecretEnvName(name)) return null;
  if (isCodeLoadingEnvName(name)) {
    return `${name} changes which code the program loads or where it finds it, so it can never be secret: enter its value as a plain setting so the confirmation shows it in full`;
  }
  return `${name} can't be secret: only a variable whose name says it holds a credential (a token, key, secret, password or auth value, such as GITHUB_TOKEN or OPENAI_API_KEY) may be kept hidden in the keychain; ${name} is a setting, so enter its value as plain text and the confirmation shows it in full`;
}
