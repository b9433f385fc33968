import { describe, expect, it } from 'vitest';
import { envSecretProblem, mayBeSecretEnvName } from '../../../shared/domain/secret-env-names';

describe('which environment variables may be secret', () => {
  it('a name that says it holds a credential may be, in any case or spelling', () => {
    for (const name of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GITHUB_TOKEN', 'GH_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'AWS_ACCESS_KEY_ID', 'HF_TOKEN', 'NODE_AUTH_TOKEN', 'DB_PASS', 'MYSQL_PWD', 'PGPASSWORD', 'SSH_PASSPHRASE', 'azure_client_secret', 'apiKey', 'FILES_TOKEN', 'MYSQL_ROOT_PASSWORD']) {
      expect(mayBeSecretEnvName(name), name).toBe(true);
    }
  });

  it('a setting never is: whole words only, and a word for a place, an address or a program wins over a credential word', () => {
    for (const name of ['KEYBOARD_LAYOUT', 'TOKENIZERS_PARALLELISM', 'PASSENGER_APP_ENV', 'MONKEY', 'PWD', 'OLDPWD', 'GIT_DIR', 'KUBECONFIG', 'AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_WEB_IDENTITY_TOKEN_FILE', 'GOOGLE_APPLICATION_CREDENTIALS', 'GIT_CONFIG_KEY_0', 'SSH_AUTH_SOCK', 'TOKEN_URL', 'AUTH_HOST', 'API_KEY_PATH', 'NPM_CONFIG__AUTH', 'NODE_OPTIONS', 'LD_PRELOAD', 'SECRET_HELPER_COMMAND']) {
      expect(mayBeSecretEnvName(name), name).toBe(false);
    }
  });

  it('a word saying the value names a program wins over a credential word: cargo runs a credential provider', () => {
    for (const name of ['CARGO_REGISTRIES_CRATES_IO_CREDENTIAL_PROVIDER', 'CARGO_REGISTRY_CREDENTIAL_PROVIDER', 'CARGO_CREDENTIAL_ALIAS_X', 'AUTH_PROVIDERS', 'TOKEN_RUNNER', 'SECRET_WRAPPER', 'KEY_BIN']) {
      expect(mayBeSecretEnvName(name), name).toBe(false);
    }
  });

  it('under a prefix its tool maps to configuration, only a name ending in a credential word may be secret', () => {
    // Each becomes a configuration key of cargo, poetry, pip, uv, npm, yarn, bundler or gradle;
    // what the key does is the tool's business, so only a key that ends in a credential is one.
    for (const name of ['CARGO_REGISTRIES_X_TOKEN_PROCESS', 'CARGO_HTTP_CAINFO_KEY_ALIAS', 'CARGO_TOKEN_X', 'CARGO_SECRET_SAUCE', 'POETRY_HTTP_BASIC_PYPI_PASSWORD_CMD', 'PIP_KEYRING_PROVIDER', 'PIP_AUTH_X', 'UV_KEYRING_PROVIDER', 'UV_TOKEN_X', 'npm_config_token_helper', 'YARN_NPM_AUTH_IDENT_X', 'BUNDLE_TOKEN_X', 'GRADLE_KEY_X', 'ORG_GRADLE_PROJECT_SIGNING_KEY_ID']) {
      expect(mayBeSecretEnvName(name), name).toBe(false);
    }
    for (const name of ['CARGO_REGISTRY_TOKEN', 'CARGO_REGISTRIES_CRATES_IO_TOKEN', 'POETRY_HTTP_BASIC_PYPI_PASSWORD', 'POETRY_PYPI_TOKEN_PYPI', 'UV_INDEX_PRIVATE_PASSWORD', 'UV_PUBLISH_TOKEN', 'PIP_PASSWORD', 'YARN_NPM_AUTH_TOKEN', 'ORG_GRADLE_PROJECT_SIGNING_PASSWORD']) {
      expect(mayBeSecretEnvName(name), name).toBe(true);
    }
  });

  it('the refusal names the variable and says what to do', () => {
    expect(envSecretProblem('GITHUB_TOKEN')).toBeNull();
    expect(envSecretProblem('KUBECONFIG')).toMatch(/^KUBECONFIG can't be secret: only a variable whose name says it holds a credential .* enter its value as plain text/);
    expect(envSecretProblem('NODE_OPTIONS')).toMatch(/^NODE_OPTIONS changes which code the program loads/);
  });
});
