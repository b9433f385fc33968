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

  it('the refusal names the variable and says what to do', () => {
    expect(envSecretProblem('GITHUB_TOKEN')).toBeNull();
    expect(envSecretProblem('KUBECONFIG')).toMatch(/^KUBECONFIG can't be secret: only a variable whose name says it holds a credential .* enter its value as plain text/);
    expect(envSecretProblem('NODE_OPTIONS')).toMatch(/^NODE_OPTIONS changes which code the program loads/);
  });
});
