/**
 * RFC 6570 URI templates as resource templates use them: their variable names (for a form) and
 * a simple expansion of filled-in values. Pure, shared by the core (listing) and the window (form).
 */

/** The longest template read (as the contract's URI bound). */
const MAX_TEMPLATE_CHARS = 2048;

/**
 * The variable names of an RFC 6570 template, in order, once each: `{name}`, `{+path}`,
 * `{?a,b*}`, `{name:3}` → name, path, a, b. Names that are not plain identifiers are skipped.
 */
export function templateVariables(template: string): string[] {
  const out: string[] = [];
  for (const m of template.slice(0, MAX_TEMPLATE_CHARS).matchAll(/\{([^{}]{1,200})\}/g)) {
    for (const raw of m[1]!.replace(/^[+#./;?&]/, '').split(',')) {
      const name = raw.replace(/(\*|:\d+)$/, '');
      if (/^[A-Za-z0-9_.%-]{1,100}$/.test(name) && !out.includes(name)) out.push(name);
    }
  }
  return out.slice(0, 50);
}

/** A template with its variables filled in (simple string expansion, values percent-encoded). */
export function expandTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{([+#./;?&]?)([^{}]{1,200})\}/g, (_all, op: string, names: string) => {
    const parts = names.split(',').map((n) => n.replace(/(\*|:\d+)$/, ''));
    const given = parts.filter((n) => values[n] !== undefined);
    if (op === '?' || op === '&') return given.length ? `${op}${given.map((n) => `${n}=${encodeURIComponent(values[n]!)}`).join('&')}` : '';
    const encode = op === '+' || op === '#' ? encodeURI : encodeURIComponent;
    return `${op === '+' ? '' : op}${given.map((n) => encode(values[n]!)).join(',')}`;
  });
}

