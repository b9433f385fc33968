import { describe, expect, it } from 'vitest';
import { judgeForm } from '../../../electron/core/elicitation/secret-fields';
import { sanitizeForDisplay } from '../../../electron/core/text/sanitize';

const one = (name: string, spec: Record<string, unknown> = { type: 'string' }) => {
  const verdict = judgeForm('', { [name]: spec });
  return verdict.kind === 'refuse' ? { field: verdict.field, why: verdict.why } : null;
};

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

  it('text is judged as the person reads it: look-alike letters, invisible characters, fullwidth forms and spelled-out letters', () => {
    for (const title of ['p\u0430ssword', 'pass\u200bword', '\uff30\uff41\uff53\uff53\uff57\uff4f\uff52\uff44', 'p a s s w o r d', 'Passw\u00f6rd', 'Contrase\u00f1a', 'mot de passe', 'Ihr Kennwort', '\u043f\u0430\u0440\u043e\u043b\u044c', '\u5bc6\u7801']) {
      expect(one('answer', { type: 'string', title }), title).not.toBeNull();
    }
  });

  it('a message asking for a secret makes a neutral field that secret; a message only naming one warns', () => {
    expect(judgeForm('Paste your API token below', { value: { type: 'string' } })).toEqual({ kind: 'refuse', field: 'value', why: 'the form\'s message asks for a secret (“api token”)' });
    expect(judgeForm('Choose a name for your new API key', { name: { type: 'string' } })).toMatchObject({ kind: 'warn' });
    // A form of choices only cannot carry a secret typed in.
    expect(judgeForm('Paste your API token below', { ok: { type: 'boolean' } })).toEqual({ kind: 'show' });
  });

  it('a doubtful field warns; a negation that is not about giving something does not excuse the request', () => {
    expect(judgeForm('', { code: { type: 'string' } })).toMatchObject({ kind: 'warn', warning: expect.stringContaining('“code”') });
    expect(judgeForm('', { x: { type: 'string', title: "Don't worry, enter your password" } })).toMatchObject({ kind: 'refuse' });
    expect(judgeForm('', { x: { type: 'string', title: 'Your user\u200bname' } })).toMatchObject({ kind: 'warn', warning: expect.stringContaining('invisible') });
    expect(judgeForm('', { x: { type: 'string', title: 'Your n\u0430me' } })).toMatchObject({ kind: 'warn', warning: expect.stringContaining('look-alike') });
    expect(judgeForm('What should I call you?', { name: { type: 'string', title: 'Your name' } })).toEqual({ kind: 'show' });
  });

  it('every character the display removes, placed inside "password", still reads as "password" to the judge', () => {
    // Generated from the sanitizer itself, not listed by hand: a character the person never sees
    // must never split the word the judge looks for.
    const removed: number[] = [];
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const c = String.fromCodePoint(code);
      if (c === '\n' || c === '\t' || c === '\r') continue;
      if (sanitizeForDisplay(`a${c}b`) === 'ab') removed.push(code);
    }
    expect(removed.length).toBeGreaterThan(100);
    const passed = removed.filter((code) => {
      const title = `Enter your pass${String.fromCodePoint(code)}word`;
      return judgeForm(title, { answer: { type: 'string' } }).kind !== 'refuse';
    });
    expect(passed.map((code) => code.toString(16))).toEqual([]);
  });

  it('an unassigned or unpaired code point does not split a secret word either', () => {
    for (const c of ['\u2065', '\u{e0000}', '\u{e0002}', '\u{e001f}', '\ud800', '\udfff', '\u{10ffff}']) {
      expect(judgeForm(`Enter your pass${c}word`, { answer: { type: 'string' } }).kind, c.codePointAt(0)!.toString(16)).toBe('refuse');
    }
  });
});
