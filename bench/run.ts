// npm run bench [-- SCENARIO...]: runs every bench/scenarios/*.ts (or those named), each in a fresh process so one
// scenario's memory cannot blur another's RSS figures; prints the figures and writes them as JSON.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import os from 'node:os';

interface Scenario {
  name: string;
  run(): Promise<Record<string, number | string>>;
}

type Figures = Record<string, number | string>;

const dir = join(import.meta.dirname, 'scenarios');
const marker = 'BENCH_RESULT ';

/** In the child: run one scenario file and print its figures on one marked line. */
async function runOne(file: string): Promise<void> {
  const scenario = (await import(pathToFileURL(join(dir, file)).href)) as Scenario;
  let figures: Figures;
  try {
    figures = await scenario.run();
  } catch (err) {
    figures = { error: (err as Error).message };
  }
  process.stdout.write(`${marker}${JSON.stringify({ name: scenario.name, figures })}\n`);
  process.exit(0);
}

/** In the parent: a scenario in a child process of its own (tsx, like this one). */
function runIsolated(file: string): Promise<{ name: string; figures: Figures }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, import.meta.filename, '--one', file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith(marker));
      resolve(line ? JSON.parse(line.slice(marker.length)) : { name: file, figures: { error: `the scenario process exited ${code} without figures` } });
    });
  });
}

if (process.argv[2] === '--one') {
  await runOne(process.argv[3]);
} else {
  const only = process.argv.slice(2);
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && (!only.length || only.some((o) => f.startsWith(o)))).sort();
  const results: Record<string, Figures> = {};
  for (const file of files) {
    process.stdout.write(`\n== ${file}\n`);
    const { name, figures } = await runIsolated(file);
    results[name] = figures;
    for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(56)} ${v}`);
  }
  const report = { date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model, results };
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
  const out = join(import.meta.dirname, 'results', only.length ? 'partial.json' : 'latest.json');
  writeFileSync(out, JSON.stringify(report, null, 2));
  console.log(`\nwritten to ${out}`);
}
