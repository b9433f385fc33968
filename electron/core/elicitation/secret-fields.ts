/**
 * Whether a form a server sends asks for a secret: a password, a token, a key, a one-time code.
 *
 * The MCP spec says servers must not ask for sensitive information through form elicitation; a
 * form that does is how a hostile server phishes a person (it looks like Warden asking). A form
 * that clearly asks for one is refused before the person sees it, and the person is warned
 * instead; a form that only might (a bare "code" field, a message that names a key without asking
 * for it, text disguised with look-alike letters) is shown with a warning, and its answer is sent
 * only after the person confirms it again in a native step.
 *
 * What is judged: the message and every field's name (split into words: `apiKey`, `api_key`,
 * `API-KEY`), title and description, and `format: "password"` / `writeOnly`, all read as
 * judging-text.ts folds them (NFKC, invisible characters removed, look-alike letters folded to
 * Latin, accents dropped), in several languages. A clause that only warns against giving a secret
 * ("do not give us your PIN") does not count, so a careful server is not punished for its caution;
 * any other mention does.
 */
import { disguisedText, foldForJudging, visibleForJudging } from './judging-text';

/** Words of a field name that ask for a secret on their own. */
const SECRET_NAME_WORDS = new Set([
  'password', 'passwd', 'passphrase', 'passcode', 'pwd', 'secret', 'token', 'credential', 'credentials', 'otp', 'totp', 'pin', 'cvv', 'cvc', 'ssn',
  'mnemonic', 'apikey', 'privatekey', 'secretkey', 'auth', 'cookie', 'cookies', 'sk', 'bearer', 'jwt', 'passwort', 'kennwort', 'contrasena', 'clave',
  'senha', 'wachtwoord', 'motdepasse', 'haslo', 'salasana', 'losenord', 'jelszo', 'heslo', 'sifre', 'authtoken', 'accesstoken', 'sessiontoken',
]);
/** Words that make `key` (or `code`, `phrase`) in a name a secret: `api key`, `ssh key`, `recovery phrase`. */
const KEY_QUALIFIERS = new Set(['api', 'access', 'private', 'secret', 'ssh', 'signing', 'encryption', 'license', 'licence', 'auth', 'recovery', 'seed', 'mfa', 'verification', 'security', 'sms', 'otp', 'login']);
/** Words of a field name that might ask for a secret: shown, with a warning. */
const DOUBT_NAME_WORDS = new Set(['code', 'codes', 'pass', 'login', 'signin', 'logon', 'session', 'sms', 'verify', 'verification', 'iban', 'tan']);

/** A request for a secret in text (already folded and lowercased), in the languages people are phished in most. */
const SECRET_TEXT = new RegExp(
  [
    String.raw`\b(?:pass(?:word|phrase|code)s?|passwd|passw(?:ort|ord)\w*|kennwort\w*|contrasenas?|mot\s+de\s+passe|senhas?|wachtwoord|haslo|lozinka|salasana|adgangskode|losenord|jelszo|heslo|sifre`,
    String.raw`|secrets?|api[\s_-]?(?:keys?|tokens?)|(?:access|private|secret|ssh|signing|license|licence)[\s_-]?keys?|(?:clave|cle|chiave|schlussel)(?:\s+de|\s+d')?[\s_-]?api|api[\s_-]?schlussel`,
    String.raw`|tokens?|jetons?|bearer|credentials?|cookies?|session[\s_-]?(?:ids?|tokens?|cookies?)`,
    String.raw`|pin(?:[\s-]+(?:code|number))?|one[\s-]time\s+(?:code|password|pin)|otp|totp|2fa(?:\s+code)?|mfa(?:\s+code)?`,
    String.raw`|(?:verification|security|confirmation|authentication|authenticator|login|sign[\s-]?in|access|auth|sms|backup|recovery)\s+codes?`,
    String.raw`|codes?\s+(?:from|in|sent\s+to)\s+(?:the\s+|your\s+|an?\s+)?(?:sms|texts?|text\s+message|e-?mail|phone|authenticator(?:\s+app)?|app)`,
    String.raw`|codes?\s+(?:that\s+)?we\s+(?:sent|texted|emailed)`,
    String.raw`|codigos?\s+de\s+(?:verificacion|seguridad|acceso|confirmacion|verificacao|seguranca)|codes?\s+de\s+(?:verification|securite|confirmation)`,
    String.raw`|bestatigungscode|verifizierungscode|sicherheitscode|codice\s+di\s+(?:verifica|sicurezza)`,
    String.raw`|cvv|cvc|card\s+number|credit\s+card|social\s+security(?:\s+number)?|seed\s+phrase|recovery\s+phrases?|mnemonic)\b`,
  ].join(''),
  'i',
);
/** The same in scripts that folding to Latin would break (judged on the unfolded text). */
const SECRET_TEXT_OTHER_SCRIPTS =
  /пароль|парол[яеию]|токен|код\s+(?:из|с|в)\s+смс|смс[\s-]*код|код\s+подтверждения|секретн\S*|ключ\s+api|api[\s-]*ключ|密码|密碼|口令|验证码|驗證碼|令牌|パスワード|暗証番号|認証コード|비밀번호|암호|인증\s*번호|인증\s*코드|كلمة\s+المرور|كلمة\s+السر|رمز\s+التحقق|पासवर्ड|סיסמה|รหัสผ่าน|κωδικ/i;
/** Words in text that might ask for a secret. */
const DOUBT_TEXT = /\b(?:codes?|log\s*in|sign\s*in|log\s*on|verify|session|iban|account\s+number)\b/i;
/** A clause that warns against giving something rather than asking for it: a negation right before a verb of giving. */
const NEGATED_ASK =
  /\b(?:do\s+not|don't|dont|never|not|no\s+need\s+to|without)\s+(?:[a-z']+\s+){0,2}?(?:give|giving|share|sharing|enter|type|send|provide|paste|tell|reveal|disclose|include|ask|asks|asking|store|stores|need|needs|require|requires|want|put|write)\b/i;
/** A verb asking the person to hand something over, in the message. */
const ASK_VERB =
  /\b(?:enter|paste|type|provide|give|input|share|send|submit|fill|copy|tell|confirm|verify|geben|eingeben|ingrese|introduzca|introduce|escribe|entrez|saisissez|saisir|indiquez|digite|insira|informe)\b|введите|укажите|输入|入力|입력/i;

/** Most of a text that is judged: the display shows no more of a message than this either. */
const JUDGED_CHARS = 4096;

/** The ways a text can be read: folded to Latin, and in its own script. */
function readings(text: string): { folded: string; visible: string } {
  const cut = text.slice(0, JUDGED_CHARS);
  return { folded: foldForJudging(cut).toLowerCase(), visible: visibleForJudging(cut).toLowerCase() };
}

/** The clauses of a text: a negation in one does not excuse another. */
const clauses = (text: string) => text.split(/[.;:!?()\n[\]。！？]+/);

/** The secret a text mentions, outside clauses that only warn against giving one, and the clause it is in; or null. */
function secretInText(text: string): { found: string; clause: string } | null {
  const { folded, visible } = readings(text);
  for (const [reading, pattern] of [[folded, SECRET_TEXT], [visible, SECRET_TEXT_OTHER_SCRIPTS]] as const) {
    for (const clause of clauses(reading)) {
      const found = pattern.exec(clause);
      if (!found) continue;
      // Negated only when the warning comes before the secret it is about ("never share your PIN").
      const negation = NEGATED_ASK.exec(clause);
      if (negation && negation.index < found.index) continue;
      return { found: found[0].replace(/\s+/g, ' '), clause };
    }
  }
  return null;
}

/** Words of a field name: `apiKey` → api, key; `ACCESS_TOKEN` → access, token; folded first, so look-alikes split the same. */
function nameWords(name: string): string[] {
  return foldForJudging(name.slice(0, JUDGED_CHARS))
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** What in `name` asks for a secret, or null. A name is also read as text, so `mot_de_passe` or a name in another script counts. */
function secretInName(name: string): string | null {
  const words = nameWords(name);
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (SECRET_NAME_WORDS.has(w)) return w;
    if ((w === 'key' || w === 'keys' || w === 'code' || w === 'phrase') && (words.length === 1 ? w === 'key' : words.some((o, j) => j !== i && KEY_QUALIFIERS.has(o)))) {
      return words.join(' ');
    }
  }
  return secretInText(name.replace(/[_-]+/g, ' '))?.found ?? null;
}

/** A field of the requested form that asks for a secret: its name and, in words, why. */
export interface SecretField {
  field: string;
  why: string;
}

/** What Warden does with a form: refuse it unseen, show it with a warning (and confirm its answer natively), or show it. */
export type FormVerdict = { kind: 'refuse'; field: string; why: string } | { kind: 'warn'; warning: string } | { kind: 'show' };

type FieldSpec = Record<string, unknown>;
const specOf = (raw: unknown): FieldSpec => (raw && typeof raw === 'object' ? (raw as FieldSpec) : {});

/** Whether a person could type a secret into the field: free text or a number (a PIN), not a choice or a yes/no. */
function couldHoldSecret(spec: FieldSpec): boolean {
  if (spec.enum !== undefined || spec.oneOf !== undefined || spec.anyOf !== undefined) return false;
  if (spec.type === 'number' || spec.type === 'integer') return true;
  return spec.type === 'string' && !['email', 'uri', 'date', 'date-time'].includes(String(spec.format ?? ''));
}

/** The first field of `properties` that asks for a secret, or null when none does. */
function secretFieldOf(properties: Record<string, unknown>): SecretField | null {
  for (const [field, raw] of Object.entries(properties)) {
    const spec = specOf(raw);
    const inName = secretInName(field);
    if (inName) return { field, why: `its name asks for a secret (“${inName}”)` };
    if (spec.format === 'password') return { field, why: 'it is marked as a password field' };
    if (spec.writeOnly === true) return { field, why: 'it is marked write-only, as secrets are' };
    for (const key of ['title', 'description'] as const) {
      const text = spec[key];
      if (typeof text !== 'string') continue;
      const found = secretInText(text);
      if (found) return { field, why: `its ${key} asks for a secret (“${found.found}”)` };
    }
  }
  return null;
}

/** Why a form only might ask for a secret, in words, or null. */
function doubtOf(message: string, properties: Record<string, unknown>, openField: string | undefined): string | null {
  for (const [field, raw] of Object.entries(properties)) {
    const spec = specOf(raw);
    if (!couldHoldSecret(spec)) continue;
    const word = nameWords(field).find((w) => DOUBT_NAME_WORDS.has(w)) ?? [spec.title, spec.description].map((t) => (typeof t === 'string' ? DOUBT_TEXT.exec(readings(t).folded)?.[0] : undefined)).find(Boolean);
    if (word) return `the field “${field}” might ask for a one-time code, a password or another secret (“${word}”)`;
  }
  if (openField !== undefined) {
    const doubt = DOUBT_TEXT.exec(readings(message).folded);
    if (doubt) return `the form's message might be asking for a one-time code, a password or another secret (“${doubt[0]}”)`;
  }
  for (const [field, raw] of Object.entries(properties)) {
    const spec = specOf(raw);
    for (const text of [message, field, spec.title, spec.description]) {
      if (typeof text !== 'string') continue;
      const disguise = disguisedText(text.slice(0, JUDGED_CHARS));
      if (disguise === 'mixed-script') return `the form's text mixes look-alike letters from another alphabet into words, as text written to slip past a check does`;
      if (disguise === 'invisible') return `the form's text hides invisible characters inside words, as text written to slip past a check does`;
    }
  }
  return null;
}

/**
 * How Warden treats a form: `refuse` when the message or a field clearly asks for a secret,
 * `warn` when it only might, `show` otherwise. The one judge of every form a server sends.
 */
export function judgeForm(message: string, properties: Record<string, unknown>): FormVerdict {
  const field = secretFieldOf(properties);
  if (field) return { kind: 'refuse', ...field };
  // A neutral field under a message asking for a secret is that secret.
  const openField = Object.entries(properties).find(([, raw]) => couldHoldSecret(specOf(raw)))?.[0];
  const inMessage = secretInText(message);
  if (inMessage && openField !== undefined) {
    if (ASK_VERB.test(inMessage.clause)) return { kind: 'refuse', field: openField, why: `the form's message asks for a secret (“${inMessage.found}”)` };
    return { kind: 'warn', warning: `the form's message mentions a secret (“${inMessage.found}”)` };
  }
  const doubt = doubtOf(message, properties, openField);
  return doubt ? { kind: 'warn', warning: doubt } : { kind: 'show' };
}
