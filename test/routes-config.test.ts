// check-config on routes (routes/*.yaml): every refusal at its own file:line:col, and a sound route built.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/compile/load-config.js';
import { displayPath } from '../src/config/yaml-source.js';
import { ConfigError } from '../src/base/errors.js';
import { repoRoot } from './kit/gateway.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const models = `  - id: alpha
    kind: chat
    price: { inputPerMillion: 1, outputPerMillion: 2 }
  - id: beta
    kind: chat
    price: { inputPerMillion: 3, outputPerMillion: 4 }
  - id: pic
    kind: image
    price: { perImage: 0.04 }
`;

/** A config folder with one channel and one route file holding `routes`; the config file and the route file as messages name it. */
function configWith(routes: string, extra = ''): { file: string; routes: string } {
  const dir = mkdtempSync(join(tmpdir(), 'routes-config-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'channels'));
  mkdirSync(join(dir, extra ? 'elsewhere' : 'routes'));
  cpSync(join(repoRoot, 'channels', 'protocols'), join(dir, 'channels', 'protocols'), { recursive: true });
  writeFileSync(join(dir, 'channels', 'vendor.yaml'), `id: vendor\nprotocol: openai-chat\nbaseUrl: https://vendor.example/v1\nmodels:\n${models}`);
  // A channel that serves only the non-streaming operation of its protocol: its chat model cannot continue a stream.
  writeFileSync(join(dir, 'channels', 'plain.yaml'), `id: plain\nprotocol: openai-chat\noperations: [embeddings]\nbaseUrl: https://plain.example/v1\nmodels:\n  - id: stiff\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n`);
  const file = join(dir, extra ? 'elsewhere' : 'routes', 'main.yaml');
  writeFileSync(file, routes);
  writeFileSync(join(dir, 'config.yaml'), `server:\n  logLevel: silent\nchannels:\n  dir: ./channels\n${extra}`);
  return { file: join(dir, 'config.yaml'), routes: displayPath(file) };
}

async function problemsOf(file: string): Promise<string[]> {
  const error = await loadConfig(file, { env: {} }).catch((err: unknown) => err);
  if (error instanceof ConfigError) return error.problems;
  throw new Error('the config loaded without errors');
}

describe('check-config on routes', () => {
  it('builds a stream-failover route with its idle bound', async () => {
    const { file } = configWith(`- id: steady\n  failover: { streamAfterFirstByte: true, streamIdleMs: 1500 }\n  targets: [{ model: alpha }, { model: beta }]\n`);
    expect((await loadConfig(file, { env: {} })).routes.get('steady')!.streamFailover).toEqual({ idleMs: 1500 });
  });

  it('builds a route of channel models and routes, from the folder routes.dir names', async () => {
    const { file } = configWith(
      `- id: smart\n  strategy: weighted\n  targets:\n    - { model: vendor/alpha, weight: 3 }\n    - { route: backup }\n- id: backup\n  targets: [{ model: beta }]\n`,
      'routes:\n  dir: ./elsewhere\n',
    );
    const config = await loadConfig(file, { env: {} });
    const smart = config.routes.get('smart')!;
    expect(smart.reachable.map((r) => r.via!.target)).toEqual(['vendor/alpha', 'vendor/beta']);
    expect(smart.reachable[1].via!.route.id).toBe('backup');
  });

  it('refuses an unknown model, an unknown route, a cycle and a name a model already has', async () => {
    const { file, routes } = configWith(
      `- id: one\n  targets:\n    - { model: nope }\n    - { route: missing }\n- id: two\n  targets: [{ route: three }]\n- id: three\n  targets: [{ route: two }]\n- id: alpha\n  targets: [{ model: beta }]\n`,
    );
    expect(await problemsOf(file)).toEqual([
      `${routes}:3:16 /0/targets/0/model no channel serves model "nope" (a model id or alias, or channel/model)`,
      `${routes}:4:16 /0/targets/1/route no route "missing"`,
      `${routes}:6:22 /1/targets/0/route routes form a cycle: two -> three -> two`,
      `${routes}:8:22 /2/targets/0/route routes form a cycle: three -> two -> three`,
      `${routes}:9:7 /3/id "alpha" is a model id or alias a channel serves; a route needs a name of its own`,
    ]);
  });

  it("refuses a cache family no catalogue entry sends, naming the nearest (and builds the route's families and entry bound)", async () => {
    const { file, routes } = configWith(`- id: c\n  cache: { ttlSeconds: 60, families: [chat, embedings] }\n  targets: [{ model: alpha }]\n`);
    const [problem, ...rest] = await problemsOf(file);
    expect(rest).toEqual([]);
    expect(problem).toMatch(new RegExp(`^${routes.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:45 /0/cache/families/1 no catalogue entry sends "embedings" \\(the families are the catalogue's pipeline.operation names: .*embeddings.*\\); did you mean "embeddings"\\?$`));
    const sound = configWith(`- id: c\n  cache: { ttlSeconds: 60, families: [chat, embeddings], maxEntryBytes: 4096 }\n  targets: [{ model: alpha }]\n`);
    const cache = (await loadConfig(sound.file, { env: {} })).routes.get('c')!.cache!;
    expect([[...cache.families!], cache.maxEntryBytes]).toEqual([['chat', 'embeddings'], 4096]);
  });

  it('refuses weights that are not positive and a field the schema does not know', async () => {
    const { file, routes } = configWith(`- id: w\n  strategy: weighted\n  targets: [{ model: alpha, weight: 0 }]\n- id: c\n  cached: { ttlSeconds: 60 }\n  targets: [{ model: alpha }]\n`);
    const problems = await problemsOf(file);
    expect(problems[0]).toBe(`${routes}:3:37 /0/targets/0/weight must be > 0`);
    expect(problems[1]).toMatch(new RegExp(`^${routes.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:5:3 /1/cached unknown field "cached"`));
    expect(problems).toHaveLength(2);
  });

  it('refuses sticky without a key, stream failover on a target that cannot continue a stream, and targets of two kinds', async () => {
    const { file, routes } = configWith(
      `- id: s\n  strategy: sticky\n  targets: [{ model: alpha }]\n- id: f\n  failover: { streamAfterFirstByte: true }\n  targets: [{ model: alpha }, { model: stiff }]\n- id: k\n  targets: [{ model: alpha }, { model: pic }]\n`,
    );
    expect(await problemsOf(file)).toEqual([
      `${routes}:2:13 /0/strategy a sticky route needs a stickyKey (key, user or header:<name>)`,
      `${routes}:5:37 /1/failover/streamAfterFirstByte target plain/stiff cannot continue a stream (a chat model on a protocol that streams answers); only a chat route's text streams are continued`,
      `${routes}:8:12 /2/targets targets serve different kinds of model (chat, image); a route serves one`,
    ]);
  });

  it('knows content_filter: built on a chat route, refused on an image route and when misspelt', async () => {
    const { file: sound } = configWith(`- id: careful\n  failover: { on: [connect, 5xx, content_filter] }\n  targets: [{ model: alpha }, { model: beta }]\n`);
    const config = await loadConfig(sound, { env: {} });
    expect(config.routes.get('careful')!.contentFilter).toBe(true);
    const { file, routes } = configWith(`- id: pics\n  failover: { on: [5xx, content_filter] }\n  targets: [{ model: pic }]\n- id: slip\n  failover: { on: [content-filter] }\n  targets: [{ model: alpha }]\n`);
    expect(await problemsOf(file)).toEqual([
      `${routes}:5:20 /1/failover/on/0 "content-filter" is not a failover name: a content filter's answer is content_filter`,
      `${routes}:2:25 /0/failover/on/1 content_filter moves on from a chat answer a content filter stopped; this route serves image models`,
    ]);
  });

  it('refuses hitsPastCap on a route whose hits are not free', async () => {
    const { file, routes } = configWith(`- id: h\n  cache: { ttlSeconds: 60, hitPrice: 0.5, hitsPastCap: true }\n  targets: [{ model: alpha }]\n`);
    expect(await problemsOf(file)).toEqual([`${routes}:2:56 /0/cache/hitsPastCap hitsPastCap serves hits past a spent cap, so only free ones: set hitPrice: free or drop it`]);
  });
});
