/**
 * Which imported env values and headers look like secrets.
 *
 * Errs on the side of asking: a false positive costs one extra question in the import preview; a
 * false negative leaves a token in a plain settings file. Detection never decides on its own —
 * the person confirms, per value, what moves to the keychain.
 */

const SECRET_NAME_PATTERNS: Array<[RegExp, string]> = [
  [/(?:^|[_-])(?:API_?)?KEY$/i, 'name ends with KEY'],
  [/(?:^|[_-])TOKEN$/i, 'name ends with TOKEN'],
  [/SECRET/i, 'name contains SECRET'],
  [/PASS(?:WORD|WD)?$|PASSWORD|PASSPHRASE/i, 'name looks like a password'],
  [/(?:^|[_-])PWD$/i, 'name looks like a password'],
  [/CREDENTIAL/i, 'name contains CREDENTIAL'],
  [/(?:^|[_-])AUTH(?:ORIZATION)?$/i, 'name looks like an authorization value'],
  [/^(?:authorization|proxy-authorization|cookie|x-api-key|api-key|x-auth-token)$/i, 'header carries credentials'],
  [/(?:^|[_-])PAT$/i, 'name ends with PAT (personal access token)'],
  [/PRIVATE/i, 'name contains PRIVATE'],
];

const SECRET_VALUE_PATTERNS: Array<[RegExp, string]> = [
  [/^sk-ant-[A-Za-z0-9_-]{10,}/, 'value looks like an Anthropic API key'],
  [/^sk-(?:proj-)?[A-Za-z0-9_-]{16,}/, 'value looks like an OpenAI-style API key'],
  [/^gh[pousr]_[A-Za-z0-9]{20,}/, 'value looks like a GitHub token'],
  [/^github_pat_[A-Za-z0-9_]{20,}/, 'value looks like a GitHub token'],
  [/^glpat-[A-Za-z0-9_-]{16,}/, 'value looks like a GitLab token'],
  [/^xox[abposr]-[A-Za-z0-9-]{10,}/, 'value looks like a Slack token'],
  [/^(?:AKIA|ASIA)[0-9A-Z]{16}$/, 'value looks like an AWS access key id'],
  [/^AIza[0-9A-Za-z_-]{30,}/, 'value looks like a Google API key'],
  [/^(?:Bearer|Basic|Token)\s+\S{8,}/i, 'value is an authorization credential'],
  [/^eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/, 'value looks like a JWT'],
  [/^-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'value is a private key'],
  [/^(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}/, 'value looks like a Stripe key'],
  [/:\/\/[^/\s:@]+:[^/\s@]+@/, 'value is a URL with a password in it'],
];

/** Shannon entropy of a string, in bits per character. */
export function entropyBitsPerChar(s: string): number {
  if (!s) return 0;
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** True for `${input:x}`, `${env:X}`, `${workspaceFolder}`: a reference, not a value. */
export function isVariableReference(value: string): boolean {
  return /\$\{[^}]+\}/.test(value);
}

/**
 * Why a name/value pair looks secret, or [] when it does not.
 *
 * Looks at the name (…_KEY, …_TOKEN, …SECRET…, PASSWORD, Authorization) and the value (known
 * token prefixes such as sk-, ghp_, xoxb-, AKIA, JWTs, and long high-entropy strings).
 */
export function secretReasons(name: string, value: string): string[] {
  const reasons: string[] = [];
  if (value.length === 0 || isVariableReference(value)) return reasons;
  for (const [re, why] of SECRET_NAME_PATTERNS) {
    if (re.test(name)) {
      reasons.push(why);
      break;
    }
  }
  for (const [re, why] of SECRET_VALUE_PATTERNS) {
    if (re.test(value)) {
      reasons.push(why);
      break;
    }
  }
  if (reasons.length === 0 && looksHighEntropy(value)) reasons.push('value is a long random-looking string');
  return reasons;
}

function looksHighEntropy(value: string): boolean {
  if (value.length < 24 || /\s/.test(value)) return false;
  // Paths, URLs and package names are long but not secret.
  if (/^(?:\/|~|\.{1,2}\/|[A-Za-z]:\\|https?:\/\/|@)/.test(value) || /[\\/]/.test(value)) return false;
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((re) => re.test(value)).length;
  return classes >= 2 && entropyBitsPerChar(value) >= 3.5;
}
