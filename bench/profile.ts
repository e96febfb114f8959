// npm run bench:profile: the gateway under load (non-streaming chat pass-through, c=32) with --cpu-prof, its CPU time
// split into the parts of a request (fastify, auth, Ajv, spend store, undici, JSON, pino, prom-client, mappings, ...).
// Prints a markdown table for bench/README.md; PROFILE_SECONDS sets the length of the run (default 15).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatBody, startBenchGateway, startMock, throughput } from './harness.js';
import { breakdown, type CpuProfile } from './profile-parts.js';

const seconds = Number(process.env.PROFILE_SECONDS ?? 15);
const dir = mkdtempSync(join(tmpdir(), 'gateway-profile-'));
const mock = await startMock();
process.env.BENCH_GATEWAY_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${dir}`;
const gateway = await startBenchGateway(mock.url);
delete process.env.BENCH_GATEWAY_NODE_ARGS;
const url = `${gateway.url}/v1/chat/completions`;
const auth = { authorization: `Bearer ${gateway.key}` };
await throughput(url, auth, chatBody(), 32, 3); // warm-up
const rps = await throughput(url, auth, chatBody(), 32, seconds);
await gateway.stop();
await mock.stop();
// tsx writes a profile for its own launcher too: the gateway's is the largest.
const file = readdirSync(dir).map((f) => join(dir, f)).sort((a, b) => statSync(b).size - statSync(a).size)[0];
const rows = breakdown(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
rmSync(dir, { recursive: true, force: true });
console.log(`gateway at c=32: ${Math.round(rps)} req/s over ${seconds} s (the profile includes the start-up and warm-up)\n`);
console.log('| part of the gateway process | share of its samples |\n|---|---|');
for (const { part, share } of rows) console.log(`| ${part} | ${(share * 100).toFixed(1)} % |`);
