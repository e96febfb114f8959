// npm run bench [-- SCENARIO...]: runs every bench/scenarios/*.ts (or those named), prints the figures and writes them as JSON.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import os from 'node:os';

interface Scenario {
  name: string;
  run(): Promise<Record<string, number | string>>;
}

const dir = join(import.meta.dirname, 'scenarios');
const only = process.argv.slice(2);
const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && (!only.length || only.some((o) => f.startsWith(o)))).sort();
const results: Record<string, Record<string, number | string>> = {};
for (const file of files) {
  const scenario = (await import(pathToFileURL(join(dir, file)).href)) as Scenario;
  process.stdout.write(`\n== ${scenario.name} (${file})\n`);
  try {
    results[scenario.name] = await scenario.run();
  } catch (err) {
    results[scenario.name] = { error: (err as Error).message };
  }
  for (const [k, v] of Object.entries(results[scenario.name])) console.log(`  ${k.padEnd(52)} ${v}`);
}
const report = { date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model, results };
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
const out = join(import.meta.dirname, 'results', 'latest.json');
writeFileSync(out, JSON.stringify(report, null, 2));
console.log(`\nwritten to ${out}`);
