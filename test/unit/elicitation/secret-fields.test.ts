import { describe, expect, it } from 'vitest';
import { secretFieldOf } from '../../../electron/core/elicitation/secret-fields';

const one = (name: string, spec: Record<string, unknown> = { type: 'string' }) => secretFieldOf({ [name]: spec });

describe('a form field that asks for a secret', () => {
  it('is found by its name, however it is written', () => {
    for (const name of ['password', 'Password', 'apiKey', 'api_key', 'API-KEY', 'githubToken', 'ACCESS_TOKEN', 'otp', 'pin', 'privateKey', 'ssh_key', 'recoveryPhrase', 'key', 'clientSecret', 'credentials']) {
      expect(one(name), name).not.toBeNull();
    }
  });

  it('is found by its title or description, or by format password / writeOnly', () => {
    expect(one('config', { type: 'string', description: 'Paste your GitHub personal access token here' })).toEqual({ field: 'config', why: 'its description asks for a secret (“token”)' });
    expect(one('value', { type: 'string', title: 'Your PIN code' })).toEqual({ field: 'value', why: 'its title asks for a secret (“pin code”)' });
    expect(one('x', { type: 'string', format: 'password' })).toMatchObject({ why: 'it is marked as a password field' });
    expect(one('x', { type: 'string', writeOnly: true })).toMatchObject({ why: 'it is marked write-only, as secrets are' });
  });

  it('ordinary fields, and descriptions that warn against giving a secret, are not refused', () => {
    for (const name of ['name', 'email', 'sortKey', 'keyboard', 'monkey', 'homepage', 'birthdate', 'spinner', 'opinion']) expect(one(name), name).toBeNull();
    // server-everything's own form says this; a careful server is not punished for its caution.
    expect(one('integer', { type: 'integer', description: 'Your favorite integer (do not give us your phone number, pin, or other sensitive info)' })).toBeNull();
    expect(one('email', { type: 'string', description: 'Your email address (will be verified, and never shared with anyone else)' })).toBeNull();
  });
});
