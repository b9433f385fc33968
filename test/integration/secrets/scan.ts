/** Byte scans used by the secret tests: proof that a value was written nowhere on disk. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every file under `dir` whose bytes contain `needle` (UTF-8), recursively. */
export function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const bytes = Buffer.from(needle, 'utf8');
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && readFileSync(p).includes(bytes)) hits.push(p);
    }
  };
  walk(dir);
  return hits;
}
