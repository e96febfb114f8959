// compose.yaml brought up with podman-compose on the stand-ins (PostgreSQL, Redis, s3rver as minio/minio), as written but
// for the network: every service on the host's (scripts/container/podman-host-net), each at a port of the test's own
// (the fleet's ${VAR} settings, and an override giving each replica its PORT and a priced channel on a fake upstream).
// Both replicas serve the first key, and one spending cap holds across them. The priced channel is the operator's own,
// added the way docs/guide.md says ("Add your own channel in a container"): a file in the mounted overlay folder, its
// key in the overlay's gateway.env, neither baked into the image.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../kit/fake-upstream.js';
import { chatChannel, repoRoot, testModels } from '../kit/gateway.js';
import { chat, exec, firstKey, freePort, podman, waitForLog, waitUntil } from './podman.js';

const project = `relay-ci-${process.pid}`;
const container = (service: string) => `${project}_${service}_1`;
let fake: FakeUpstream;
let dir: string;
let ports: Record<'a' | 'b' | 'postgres' | 'redis' | 's3', number>;
let files: string[];
/** The operator's own upstream key: only the overlay's gateway.env has it. */
const TEAM_KEY = `team-key-${process.pid}`;

function compose(...args: string[]) {
  const env = {
    ...process.env,
    POSTGRES_HOST: '127.0.0.1', POSTGRES_PORT: String(ports.postgres),
    REDIS_HOST: '127.0.0.1', REDIS_PORT: String(ports.redis),
    S3_HOST: '127.0.0.1', S3_PORT: String(ports.s3),
    GATEWAY_A_PORT: String(ports.a), GATEWAY_B_PORT: String(ports.b),
    // s3rver takes only its own credentials.
    S3_ACCESS_KEY: 'S3RVER', S3_SECRET_KEY: 'S3RVER',
  };
  const wrapper = join(repoRoot, 'scripts', 'container', 'podman-host-net');
  return exec('podman-compose', ['--podman-path', wrapper, '-p', project, ...files.flatMap((f) => ['-f', f]), ...args], { env, cwd: repoRoot, timeoutMs: 280_000 });
}

const healthy = async (name: string) => (await podman('healthcheck', 'run', name)).code === 0;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  ports = { a: await freePort(), b: await freePort(), postgres: await freePort(), redis: await freePort(), s3: await freePort() };
  dir = mkdtempSync(join(tmpdir(), 'relay-compose-'));
  mkdirSync(join(dir, 'overlay', 'channels'), { recursive: true });
  writeFileSync(join(dir, 'overlay', 'channels', 'team.yaml'), chatChannel('team', `${fake.url}/v1`, { models: testModels.flatChat, credentialEnv: 'TEAM_UPSTREAM_KEY' }));
  writeFileSync(join(dir, 'overlay', 'gateway.env'), `# the operator's secrets, beside their channels\nTEAM_UPSTREAM_KEY=${TEAM_KEY}\n`);
  // The repository's ./overlay is the operator's folder in production; the test points the same setting at its own.
  const gateway = (port: number) => ({
    environment: { PORT: String(port), GATEWAY_OVERLAY_DIR: '/etc/gateway/overlay' },
    volumes: [`${join(dir, 'overlay')}:/etc/gateway/overlay:ro`],
  });
  const override = {
    services: {
      'gateway-a': gateway(ports.a),
      'gateway-b': gateway(ports.b),
    },
  };
  writeFileSync(join(dir, 'compose.override.json'), JSON.stringify(override));
  files = [join(repoRoot, 'compose.yaml'), join(dir, 'compose.override.json')];
});

afterAll(async () => {
  if (files) {
    const down = await compose('down', '-v', '-t', '5');
    if (down.code) console.error(down.stdout + down.stderr);
  }
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('compose.yaml', () => {
  it('brings up two replicas on PostgreSQL, Redis and S3 that share keys and hold one cap across both', async () => {
    // In dependency order (podman-compose 1.0 does not wait on service_healthy): stores, then A (first start), then B.
    const stores = await compose('up', '-d', '--no-build', 'postgres', 'redis', 'minio');
    expect(stores.code, stores.stdout + stores.stderr).toBe(0);
    for (const service of ['postgres', 'redis', 'minio']) await waitUntil(`${service} healthy`, () => healthy(container(service)));
    const a = await compose('up', '-d', '--no-build', '--no-deps', 'gateway-a');
    expect(a.code, a.stdout + a.stderr).toBe(0);
    const text = await waitForLog(container('gateway-a'), /listening at http/i);
    const owner = firstKey(text)!;
    expect(owner).toMatch(/^sk-gw-/);
    const b = await compose('up', '-d', '--no-build', '--no-deps', 'gateway-b');
    expect(b.code, b.stdout + b.stderr).toBe(0);
    expect(firstKey(await waitForLog(container('gateway-b'), /listening at http/i))).toBeUndefined();
    const bases = [`http://127.0.0.1:${ports.a}`, `http://127.0.0.1:${ports.b}`];
    for (const base of bases) expect((await chat(base, owner, 'flat-chat')).status).toBe(200);
    // The overlay's channel, with the key its gateway.env holds, on both replicas.
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${TEAM_KEY}`, `Bearer ${TEAM_KEY}`]);

    // One cent a request: a 0.10 cap admits exactly 10 of 30 concurrent requests spread over both replicas.
    const created = await exec('podman', ['exec', container('gateway-a'), 'node', 'dist/cli/admin.js', 'key', 'create', '--workspace', 'default', '--spend-cap', '0.10', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const capped = (JSON.parse(created.stdout.trim().split('\n').pop()!) as { key: string }).key;
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(bases[i % 2], capped, 'flat-chat').then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(20);
  });
});
