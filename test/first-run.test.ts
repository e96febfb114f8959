// The first run cannot go wrong (issue 49): a gateway or a demo started on a port another process holds says so in one
// line naming the port and what to do, and exits 1, instead of a stack trace or "worker exited (1) before it listened".
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from './kit/paths.js';

let holder: Server;
let port = 0;
const dir = mkdtempSync(join(tmpdir(), 'gateway-first-run-'));

beforeAll(async () => {
  // The port a running gateway holds.
  holder = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => holder.once('listening', resolve));
  port = (holder.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => holder.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** Runs a command to its end; its exit code and everything it printed. */
function runToEnd(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: repoRoot, env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

const oneLine = (command: string) => [`port ${port} on 127.0.0.1 is already in use (another gateway, or npm run demo?): stop that one, or start this one on another port: PORT=${port + 1} ${command}`];

describe.concurrent('a port another process holds', () => {
  it.each([2, 1])('stops npm start (server.workers: %i) with one line naming the port, exit 1, before touching its data folder', async (workers) => {
    const data = join(dir, `data-${workers}`);
    writeFileSync(join(dir, `config-${workers}.yaml`), `server:\n  workers: ${workers}\nstorage:\n  dataDir: ${data}\nchannels:\n  dir: ${repoRoot}/channels\n`);
    // What npm start runs (its own "npm error" lines after a failed script are npm's, not the gateway's).
    const { code, output } = await runToEnd(['dist/main.js'], { GATEWAY_CONFIG: join(dir, `config-${workers}.yaml`), PORT: String(port), HOST: '127.0.0.1' });
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual(oneLine('npm start'));
    expect(existsSync(join(data, 'gateway.pid'))).toBe(false);
  });

  it('stops npm run demo with the same line, naming npm run demo', async () => {
    const { code, output } = await runToEnd(['--import', 'tsx', 'src/cli/demo.ts'], { PORT: String(port), HOST: '127.0.0.1', DEMO_DATA_DIR: join(dir, 'demo') });
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual(oneLine('npm run demo'));
  });
});
