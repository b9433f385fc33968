/**
 * Parses JSON with comments and trailing commas (VS Code's mcp.json is JSONC).
 */

/** Removes `//` and `/* *\/` comments and trailing commas outside strings, then JSON.parse. */
export function parseJsonc(text: string): unknown {
  // Twice: the first pass removes comments, so the second also sees commas that a comment hid.
  return JSON.parse(strip(strip(text.replace(/^\uFEFF/, ''))));
}

function strip(text: string): string {
  let out = '';
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < n && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
    } else if (c === ',') {
      let j = i + 1;
      while (j < n && /\s/.test(text[j]!)) j++;
      if (text[j] === '}' || text[j] === ']') {
        i++;
        continue;
      }
      out += c;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
