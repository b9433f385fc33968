/**
 * Whether a form a server sends asks for a secret: a password, a token, a key, a one-time code.
 *
 * The MCP spec says servers must not ask for sensitive information through form elicitation; a
 * form that does is how a hostile server phishes a person (it looks like Warden asking). Such a
 * form is refused before the person sees it, and the person is warned instead.
 *
 * What is looked at: each field's name (split into words: `apiKey`, `api_key`, `API-KEY`), its
 * title and description, and `format: "password"` / `writeOnly`. A description that only warns
 * against giving a secret ("do not give us your PIN") does not count: clauses with a negation
 * are skipped, so a careful server is not punished for its caution.
 */

/** Words of a field name that ask for a secret on their own. */
const SECRET_NAME_WORDS = new Set(['password', 'passwd', 'passphrase', 'passcode', 'pwd', 'secret', 'token', 'credential', 'credentials', 'otp', 'totp', 'pin', 'cvv', 'cvc', 'ssn', 'mnemonic', 'apikey', 'privatekey', 'secretkey']);
/** Words that make `key` (or `code`, `phrase`) in a name a secret: `api key`, `ssh key`, `recovery phrase`. */
const KEY_QUALIFIERS = new Set(['api', 'access', 'private', 'secret', 'ssh', 'signing', 'encryption', 'license', 'licence', 'auth', 'recovery', 'seed', 'mfa', 'verification', 'security']);

/** The same in a title or description, as phrases. */
const SECRET_TEXT =
  /\b(?:pass(?:word|phrase|code)s?|passwd|secrets?|api[\s_-]?keys?|access[\s_-]?keys?|private[\s_-]?keys?|secret[\s_-]?keys?|ssh[\s_-]?keys?|signing[\s_-]?keys?|license[\s_-]?keys?|tokens?|credentials?|pin(?:\s+(?:code|number))?|one[\s-]time\s+(?:code|password)|otp|2fa\s+code|mfa\s+code|verification\s+code|security\s+code|cvv|cvc|card\s+number|credit\s+card|social\s+security(?:\s+number)?|seed\s+phrase|recovery\s+(?:phrase|code)s?|mnemonic)\b/i;
/** A clause that warns against giving something rather than asking for it. */
const NEGATION = /\b(?:do\s+not|don't|dont|never|not|no|without)\b/i;

/** Words of a field name: `apiKey` → api, key; `ACCESS_TOKEN` → access, token. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** What in `name` asks for a secret, or null. */
function secretInName(name: string): string | null {
  const words = nameWords(name);
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (SECRET_NAME_WORDS.has(w)) return w;
    if ((w === 'key' || w === 'keys' || w === 'code' || w === 'phrase') && (words.length === 1 ? w === 'key' : words.some((o, j) => j !== i && KEY_QUALIFIERS.has(o)))) {
      return words.join(' ');
    }
  }
  return null;
}

/** The secret a text asks for (outside clauses that warn against giving one), or null. */
function secretInText(text: string): string | null {
  for (const clause of text.split(/[.;:!?()\n[\]]+/)) {
    const found = SECRET_TEXT.exec(clause);
    if (found && !NEGATION.test(clause)) return found[0].toLowerCase();
  }
  return null;
}

/** A field of the requested form that asks for a secret: its name and, in words, why. */
export interface SecretField {
  field: string;
  why: string;
}

/** The first field of `properties` that asks for a secret, or null when none does. */
export function secretFieldOf(properties: Record<string, unknown>): SecretField | null {
  for (const [field, raw] of Object.entries(properties)) {
    const spec = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
    const inName = secretInName(field);
    if (inName) return { field, why: `its name asks for a secret (“${inName}”)` };
    if (spec.format === 'password') return { field, why: 'it is marked as a password field' };
    if (spec.writeOnly === true) return { field, why: 'it is marked write-only, as secrets are' };
    for (const key of ['title', 'description'] as const) {
      const text = spec[key];
      if (typeof text !== 'string') continue;
      const found = secretInText(text.slice(0, 4096));
      if (found) return { field, why: `its ${key} asks for a secret (“${found}”)` };
    }
  }
  return null;
}
