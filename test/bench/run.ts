/**
 * `npm run bench`: runs every `test/bench/*.bench.ts` (or those named on the command line),
 * prints each result and writes them to bench-results.json. A run of some benches replaces only
 * their entries, so the file always holds the latest measurement of every target.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchModule, BenchResult } from './harness';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const results: BenchResult[] = [];
for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { default: BenchModule };
  console.log(`\n## ${mod.default.title} (${file})`);
  await mod.default.run((r) => {
    results.push(r);
    const extra = r.ratio !== undefined ? `  ratio ${r.ratio.toFixed(3)} vs ${r.baseline}` : '';
    const verdict = r.target ? `  [target ${r.target}: ${r.met ? 'met' : 'NOT met'}]` : '';
    console.log(`${r.name}: ${r.value.toFixed(r.value < 10 ? 3 : 1)} ${r.unit}${extra}${verdict}`);
  });
}
const out = resolve(here, '../../bench-results.json');
const fresh = new Set(results.map((r) => r.name));
const kept = only.length > 0 && existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as BenchResult[]).filter((r) => !fresh.has(r.name)) : [];
writeFileSync(out, JSON.stringify([...kept, ...results], null, 2) + '\n');
console.log(`\nwrote ${results.length} results to ${out}${kept.length ? ` (kept ${kept.length} from earlier runs)` : ''}`);
