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

/**
 * Token shapes, found anywhere in a value, not only at its start: a key is as secret after
 * `https://api.example.com/?key=` or "my token is " as it is alone. `(?<![A-Za-z0-9])` keeps a
 * prefix from matching inside a longer word (`desk-ant-…` is not an Anthropic key).
 */
const SECRET_VALUE_PATTERNS: Array<[RegExp, string]> = [
  [/(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{10,}/, 'value looks like an Anthropic API key'],
  [/(?<![A-Za-z0-9])sk-(?:proj-)?[A-Za-z0-9_-]{16,}/, 'value looks like an OpenAI-style API key'],
  [/(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{20,}/, 'value looks like a GitHub token'],
  [/(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{20,}/, 'value looks like a GitHub token'],
  [/(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{16,}/, 'value looks like a GitLab token'],
  [/(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}/, 'value looks like a Slack token'],
  [/(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])/, 'value looks like an AWS access key id'],
  [/(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{30,}/, 'value looks like a Google API key'],
  [/^(?:Bearer|Basic|Token)\s+\S{8,}|(?<![A-Za-z0-9])(?:Bearer|Basic)\s+\S{8,}/i, 'value is an authorization credential'],
  [/(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/, 'value looks like a JWT'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'value is a private key'],
  [/(?<![A-Za-z0-9])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}/, 'value looks like a Stripe key'],
  [/:\/\/[^/\s:@]+:[^/\s@]+@/, 'value is a URL with a password in it'],
  [URL_QUERY_CREDENTIAL(), 'value is a URL with a credential in its query'],
];

/** `?key=…`, `&access_token=…` and the like: a query parameter named for a credential, with a value of 8 characters or more. */
function URL_QUERY_CREDENTIAL(): RegExp {
  return /[?&;](?:[a-z0-9_-]*[_-])?(?:api[_-]?key|key|token|access[_-]?token|auth|secret|password|passwd|pwd|sig|signature|credential|code)=[^&\s#]{8,}/i;
}

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
 * token prefixes such as sk-, ghp_, xoxb-, AKIA, JWTs, credentials in a URL, and long
 * high-entropy strings), anywhere in it. Variable references (`${input:x}`) are not values: a
 * value made only of references and words around them is not a secret, but what stands beside a
 * reference is still judged (`${env:HOME}/x?token=…` is).
 */
export function secretReasons(name: string, value: string): string[] {
  const reasons: string[] = [];
  if (value.length === 0) return reasons;
  const referenced = isVariableReference(value);
  const rest = referenced ? value.replace(/\$\{[^}]+\}/g, ' ') : value;
  if (!referenced) {
    for (const [re, why] of SECRET_NAME_PATTERNS) {
      if (re.test(name)) {
        reasons.push(why);
        break;
      }
    }
  }
  for (const [re, why] of SECRET_VALUE_PATTERNS) {
    if (re.test(rest)) {
      reasons.push(why);
      break;
    }
  }
  if (reasons.length === 0 && (looksHighEntropy(rest) || rest.split(/[\s?&=;,:]+/).some(looksHighEntropy))) reasons.push('value is a long random-looking string');
  return reasons;
}

/**
 * Why a server address carries a credential (a password, or a query parameter that looks like a
 * key), or null. Addresses are kept in plain settings, so such an address cannot be imported as is.
 */
export function urlCredentialReason(url: string): string | null {
  if (/:\/\/[^/\s:@]+:[^/\s@]+@/.test(url)) return 'it has a password in it';
  if (URL_QUERY_CREDENTIAL().test(url)) return 'a query parameter holds what looks like a key or token';
  for (const [re, why] of SECRET_VALUE_PATTERNS) if (re.test(url)) return why.replace(/^value /, 'it ');
  return null;
}

function looksHighEntropy(value: string): boolean {
  if (value.length < 24 || /\s/.test(value)) return false;
  // Paths, URLs and package names are long but not secret.
  if (/^(?:\/|~|\.{1,2}\/|[A-Za-z]:\\|https?:\/\/|@)/.test(value) || /[\\/]/.test(value)) return false;
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((re) => re.test(value)).length;
  return classes >= 2 && entropyBitsPerChar(value) >= 3.5;
}
