// Benchmark harness: `npm run bench` runs every scenario, `npm run bench -- NAME [NAME ...]` the
// named ones. A scenario is bench/NAME.ts exporting `run(): Promise<void>`; it prints one JSON
// line per figure on stdout ({"scenario","name","value","unit",...}) and progress on stderr.
import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'index.ts' && f !== 'report.ts')
  .map((f) => f.slice(0, -3))
  .sort();

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(`Usage: npm run bench [-- NAME ...]\n\nScenarios: ${available.join(', ')}\n`);
  process.exit(0);
}
// A NAME also runs its parts, bench/NAME-*.ts (`fuzz` runs fuzz-api, ...); a NAME with parts needs no file of its own.
const parts = (w: string) => available.filter((a) => a.startsWith(`${w}-`));
const wanted = args.length > 0 ? [...new Set(args.flatMap((w) => [...(available.includes(w) || parts(w).length === 0 ? [w] : []), ...parts(w)]))] : available;
const unknown = wanted.filter((w) => !available.includes(w));
if (unknown.length > 0) {
  process.stderr.write(`bench: unknown scenario(s): ${unknown.join(', ')} (available: ${available.join(', ')})\n`);
  process.exit(2);
}
for (const name of wanted) {
  process.stderr.write(`bench: ${name}\n`);
  const mod = (await import(pathToFileURL(`${here}/${name}.ts`).href)) as { run(): Promise<void> };
  await mod.run();
}
