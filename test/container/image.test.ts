// The image (built by scripts/test-container.sh from the Dockerfile) run as shipped: embedded config, non-root,
// health check, first key on stdout, a chat call to a fake upstream on the host, SIGTERM, data kept on the volume.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../kit/fake-upstream.js';
import { chat, firstKey, freePort, IMAGE, logs, podman, waitForLog } from './podman.js';

const tag = `${process.pid}`;
const volume = `relay-ci-data-${tag}`;
const names = [`relay-ci-gw-${tag}-a`, `relay-ci-gw-${tag}-b`];
let fake: FakeUpstream;
let port: number;
let key: string;

/** The image with nothing but a port (the host's network is shared) and the shipped Ollama channel aimed at the fake. */
async function runGateway(name: string): Promise<void> {
  const run = await podman('run', '-d', '--name', name, '-e', `PORT=${port}`, '-e', 'OLLAMA_ENABLED=true', '-e', `OLLAMA_BASE_URL=${fake.url}/v1`, '-v', `${volume}:/data`, IMAGE);
  expect(run.code, run.stderr).toBe(0);
}

beforeAll(async () => {
  fake = await FakeUpstream.start();
  port = await freePort();
  await podman('volume', 'create', volume);
});

afterAll(async () => {
  await podman('rm', '-f', '-t', '0', ...names);
  await podman('volume', 'rm', '-f', volume);
  await fake?.close();
});

describe('the gateway image', () => {
  it('declares a non-root user, /data, port 8080 on every address, a node health check and no --config', async () => {
    const config = JSON.parse((await podman('image', 'inspect', IMAGE, '--format', '{{json .Config}}')).stdout) as Record<string, unknown>;
    expect(config.User).toBe('node');
    expect(Object.keys(config.Volumes as object)).toEqual(['/data']);
    expect(config.Env).toEqual(expect.arrayContaining(['HOST=0.0.0.0', 'PORT=8080', 'GATEWAY_DATA_DIR=/data']));
    expect((await podman('image', 'inspect', IMAGE)).stdout.replace(/\s+/g, '')).toMatch(/"Healthcheck":\{"Test":\["CMD","node","-e","[^"]*\/healthz/);
    expect(JSON.stringify([config.Entrypoint, config.Cmd])).not.toContain('--config');
  });

  it('starts with the embedded config: first key on stdout, healthy, non-root, serves chat, drains on SIGTERM', async () => {
    const name = names[0];
    await runGateway(name);
    const text = await waitForLog(name, /listening at http/i);
    key = firstKey(text)!;
    expect(key).toMatch(/^sk-gw-/);
    expect(text).toMatch(/dashboard\/setup\?token=/);
    expect((await podman('exec', name, 'id', '-u')).stdout.trim()).toBe('1000');
    expect((await podman('exec', name, 'sh', '-c', 'ls -ln /data/gateway.db')).stdout).toMatch(/ 1000 +1000 /);

    const health = await podman('healthcheck', 'run', name);
    expect(health.code, health.stdout + health.stderr).toBe(0);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

    const res = await chat(`http://127.0.0.1:${port}`, key, 'qwen3');
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0].message.content).toBe(fake.chat.text);
    expect(fake.requests.some((r) => r.path === '/v1/chat/completions')).toBe(true);
    // The gateway's own allocations go to jemalloc (the image preloads it): its process maps the library.
    const allocator = await podman('exec', name, 'sh', '-c', 'for p in /proc/[0-9]*; do if tr "\\0" " " < $p/cmdline | grep -q "dist/main.js" && grep -q libjemalloc $p/maps; then echo jemalloc; fi; done');
    expect(allocator.stdout).toContain('jemalloc');

    const started = Date.now();
    await podman('stop', '-t', '10', name);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await podman('inspect', name, '--format', '{{.State.ExitCode}}')).stdout.trim()).toBe('0');
    expect(await logs(name)).toMatch(/SIGTERM: draining/);
  });

  it('keeps its database on the volume: a new container on it prints no new key and takes the old one', async () => {
    expect(key).toBeDefined();
    const name = names[1];
    await runGateway(name);
    const text = await waitForLog(name, /listening at http/i);
    expect(firstKey(text)).toBeUndefined();
    const res = await chat(`http://127.0.0.1:${port}`, key, 'qwen3');
    expect(res.status, await res.clone().text()).toBe(200);
    await podman('stop', '-t', '10', name);
    expect((await podman('inspect', name, '--format', '{{.State.ExitCode}}')).stdout.trim()).toBe('0');
  });
});
