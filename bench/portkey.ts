// Portkey's open-source gateway (@portkey-ai/gateway, the npm registry), the peer the issues measure against, run
// beside this gateway on the same mock. A bench-only dependency: installed on first use into bench/.peers (ignored by
// git), never into the project's own node_modules, so `npm ci` and the tests never fetch it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, repoRoot, spawnCommand, type Proc } from './harness.js';

export const portkeyVersion = process.env.BENCH_PORTKEY_VERSION ?? '1.15.2';
const prefix = join(repoRoot, 'bench', '.peers', `portkey-${portkeyVersion}`);
const server = join(prefix, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');

/** Installs the pinned version once (npm, into bench/.peers); throws with npm's message when the registry is out of reach. */
function ensureInstalled(): void {
  if (existsSync(server)) return;
  mkdirSync(prefix, { recursive: true });
  const manifest = { private: true, dependencies: { '@portkey-ai/gateway': portkeyVersion } };
  writeFileSync(join(prefix, 'package.json'), JSON.stringify(manifest, null, 2));
  execFileSync('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-package-lock'], { stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * Why Portkey has no first-token figure: on Node it answers every streamed chat completion 500 ("TypeError: immutable":
 * it appends headers to the upstream's fetch Response; Portkey-AI/gateway#1389 and #1550, open), seen with 1.15.2 here.
 */
export const portkeyStreams = 'n/a: Portkey answers streams 500 on Node (Portkey-AI/gateway#1389)';

export interface Portkey extends Proc {
  url: string;
  /** What a client sends Portkey for an OpenAI-compatible upstream at the mock: provider, custom host, a key. */
  headers: Record<string, string>;
  pid: number;
}

/** Portkey in one process (as `npx @portkey-ai/gateway` runs it, headless, production mode) in front of `upstreamUrl`. */
export async function startPortkey(upstreamUrl: string): Promise<Portkey> {
  ensureInstalled();
  const port = await freePort();
  const proc = await spawnCommand(process.execPath, [server, `--port=${port}`, '--headless'], { NODE_ENV: 'production' }, /Ready for connections|running at/i, prefix);
  const headers = { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${upstreamUrl}/v1`, authorization: 'Bearer sk-bench' };
  return { ...proc, url: `http://127.0.0.1:${port}`, headers, pid: proc.child.pid! };
}
