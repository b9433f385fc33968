/**
 * Environment variables that change which code a program loads, or where it finds it.
 *
 * A local server's environment is part of what runs: `NODE_OPTIONS=--import=data:…` or
 * `LD_PRELOAD=/tmp/x.so` runs code inside a harmless-looking `node server.js`. Such a variable may
 * therefore never be a keychain secret (whose value the save dialog cannot show): its value is
 * stored in plain settings and shown in full before the server is saved.
 *
 * The list errs on the side of including a variable: marking a harmless variable "can't be secret"
 * costs nothing, while missing one lets a hidden value run code. Names are compared
 * case-insensitively, because Windows environment names are.
 *
 * Pure: no node:*, so the schemas in shared/ and the renderer can use it.
 */

const NAMES = new Set(
  [
    // Program search and shells that run start-up files.
    'PATH', 'PATHEXT', 'COMSPEC', 'SHELL', 'BASH_ENV', 'ENV', 'SHELLOPTS', 'BASHOPTS', 'PS4', 'PROMPT_COMMAND', 'ZDOTDIR',
    // Home and config folders: where npm, pip, git, shells… read their configuration (and hooks).
    'HOME', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME',
    // Node, npm and Electron.
    'NODE_OPTIONS', 'NODE_PATH', 'NODE_REPL_EXTERNAL_MODULE', 'ELECTRON_RUN_AS_NODE',
    'NPM_CONFIG_REGISTRY', 'NPM_CONFIG_NODE_OPTIONS', 'NPM_CONFIG_SCRIPT_SHELL', 'NPM_CONFIG_USERCONFIG', 'NPM_CONFIG_GLOBALCONFIG',
    'NPM_CONFIG_PREFIX', 'NPM_CONFIG_CACHE', 'NPM_CONFIG_IGNORE_SCRIPTS',
    // Python, pip and uv.
    'PYTHONPATH', 'PYTHONSTARTUP', 'PYTHONHOME', 'PYTHONUSERBASE', 'PYTHONPLATLIBDIR', 'PYTHONEXECUTABLE', 'PYTHONBREAKPOINT',
    'PYTHONWARNINGS', 'PYTHONINSPECT', 'PYTHONPYCACHEPREFIX', 'VIRTUAL_ENV',
    'PIP_INDEX_URL', 'PIP_EXTRA_INDEX_URL', 'PIP_FIND_LINKS', 'UV_INDEX', 'UV_INDEX_URL', 'UV_EXTRA_INDEX_URL', 'UV_DEFAULT_INDEX', 'UV_FIND_LINKS', 'UV_PYTHON',
    // Perl, Ruby, PHP, R, Tcl.
    'PERL5OPT', 'PERL5LIB', 'PERLLIB', 'PERL5DB', 'PERLIO',
    'RUBYOPT', 'RUBYLIB', 'GEM_HOME', 'GEM_PATH', 'BUNDLE_GEMFILE',
    'PHPRC', 'PHP_INI_SCAN_DIR',
    'R_PROFILE', 'R_PROFILE_USER', 'R_ENVIRON', 'R_ENVIRON_USER', 'R_LIBS', 'R_LIBS_USER',
    'TCLLIBPATH',
    // Java and .NET.
    'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'CLASSPATH', 'JAVA_HOME',
    'DOTNET_STARTUP_HOOKS', 'DOTNET_ADDITIONAL_DEPS', 'DOTNET_SHARED_STORE', 'DOTNET_ROOT',
    // Go.
    'GOFLAGS', 'GOPROXY', 'GOPATH', 'GOROOT', 'GOTOOLCHAIN',
    // Programs other tools start.
    'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_EXEC_PATH', 'GIT_EXTERNAL_DIFF', 'GIT_ASKPASS', 'SSH_ASKPASS', 'GIT_TEMPLATE_DIR',
    'GIT_EDITOR', 'GIT_PAGER', 'EDITOR', 'VISUAL', 'PAGER', 'BROWSER',
    // Libraries and plug-ins loaded by the C library, OpenSSL and GUI toolkits.
    'GLIBC_TUNABLES', 'GCONV_PATH', 'OPENSSL_CONF', 'OPENSSL_ENGINES', 'OPENSSL_MODULES',
    'GTK_MODULES', 'GTK_PATH', 'QT_PLUGIN_PATH', 'GIO_MODULE_DIR',
    // PowerShell module search.
    'PSMODULEPATH',
  ].map((n) => n.toUpperCase()),
);

/** Families: the dynamic loaders (LD_*, DYLD_*), exported shell functions, git config, .NET profilers, Lua. */
const PREFIXES = ['LD_', 'DYLD_', 'BASH_FUNC_', 'GIT_CONFIG', 'CORECLR_', 'COR_', 'LUA_INIT', 'LUA_PATH', 'LUA_CPATH'];

/** True if an environment variable of this name can change which code a program loads or where it finds it. */
export function isCodeLoadingEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  return NAMES.has(upper) || PREFIXES.some((p) => upper.startsWith(p));
}

/** The plain-words reason a code-loading variable cannot be secret (used in validation errors). */
export function codeLoadingSecretProblem(name: string): string {
  return `${name} changes which code the program loads or where it finds it, so it can never be secret: enter its value as a plain setting so the confirmation shows it in full`;
}
