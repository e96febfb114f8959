// Podman for the container tests: runc, the host's network and bounded ulimits come from the containers.conf that
// scripts/container/base-images.sh writes (CONTAINERS_CONF), so every call here and podman-compose's agree.
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';

export const IMAGE = process.env.GATEWAY_IMAGE ?? 'localhost/relay-gateway:latest';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (never throws on a non-zero exit: the caller asserts). */
export function exec(cmd: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024, env: options.env, cwd: options.cwd }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

export const podman = (...args: string[]) => exec('podman', ['--runtime', 'runc', ...args]);

/** Everything a container has printed so far (stdout and stderr). */
export async function logs(name: string): Promise<string> {
  const run = await podman('logs', name);
  return run.stdout + run.stderr;
}

/** Waits until the container's output matches `pattern`; fails early when it exits. Polls its logs (no fixed sleep). */
export async function waitForLog(name: string, pattern: RegExp, timeoutMs = 120_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await logs(name);
    if (pattern.test(text)) return text;
    const state = (await podman('inspect', name, '--format', '{{.State.Status}}')).stdout.trim();
    if (state === 'exited' || state === 'stopped') throw new Error(`${name} exited before printing ${pattern}:\n${text}`);
    if (Date.now() > deadline) throw new Error(`${name} printed no ${pattern} in ${timeoutMs} ms:\n${text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Polls `check` until it resolves true (each try bounded by the caller), or fails after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A TCP port free on 127.0.0.1 right now (containers share the host's network). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A chat completion through the gateway at `base` with `key`. */
export async function chat(base: string, key: string, model: string): Promise<Response> {
  return fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }], max_tokens: 16 }),
  });
}

/** The one-time API key a first start prints. */
export function firstKey(text: string): string | undefined {
  return /\bsk-gw-[\w-]+/.exec(text)?.[0];
}
