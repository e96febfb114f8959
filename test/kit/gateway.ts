// Builds a gateway for tests: a temp config pointing at fake upstreams, an in-memory or temp SQLite store, a key per scope set.
import { mkdtempSync, mkdirSync, writeFileSync, cpSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/compile/load-config.js';
import { createServices, type ServiceOverrides, type Services } from '../../src/services.js';
import { buildApp } from '../../src/app.js';
import { createWorkspace } from '../../src/store/workspaces.js';
import { issueApiKey, type IssueKeyOptions } from '../../src/auth/keys.js';
import { openSqlite } from '../../src/store/database.js';
import type { Workspace } from '../../src/store/workspaces.js';
import { repoRoot } from './paths.js';

export { repoRoot } from './paths.js';

/** The metadata database test gateways use: sqlite (default) or postgres (needs DATABASE_URL). */
export const testDatabase = process.env.GATEWAY_TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite';
if (testDatabase === 'postgres' && !process.env.DATABASE_URL) throw new Error('GATEWAY_TEST_DATABASE=postgres needs DATABASE_URL');

async function dropSchema(schema: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await client.end();
  }
}

/**
 * createServices, tried again when PostgreSQL says another gateway's schema or table is gone: kysely's migrator looks at
 * every schema of the database, and suites running in parallel drop theirs as they end (or rename a table, as
 * admin-api's audit test does). Migrations run in one transaction on PostgreSQL, so a failed one leaves nothing half done.
 */
async function createServicesOnSharedDatabase(config: Awaited<ReturnType<typeof loadConfig>>, overrides?: ServiceOverrides): Promise<Services> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await createServices(config, overrides);
    } catch (err) {
      const dropped = testDatabase === 'postgres' && /(schema "gw_[0-9a-f]+"|relation "[\w.]+"|column "\w+" of relation "\w+") does not exist/.test((err as Error).message);
      if (!dropped || attempt === 3) throw err;
    }
  }
}

/**
 * A SQLite database every migration has run on, made once per test process and kept in memory (its file removed at
 * once: a test process is stopped, not exited, so nothing left on disk would be cleaned up): a test gateway on the
 * default database path starts from a copy of it, and its own migrator finds nothing left to do (running all of them
 * was about a tenth of a test gateway's start). The migrations themselves still run: here, on the PostgreSQL suites'
 * fresh schemas, and in the process suites' gateways.
 */
let migrated: Promise<Buffer> | undefined;
function migratedSqlite(): Promise<Buffer> {
  return (migrated ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-migrated-'));
    try {
      const opened = await openSqlite(join(dir, 'gateway.db'), { checkpointer: false });
      const bytes = opened.sqlite!.serialize();
      await opened.close();
      return bytes;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })());
}

export interface TestGatewayOptions {
  /** Channel files: name -> YAML text. */
  channels: Record<string, string>;
  /** Protocol files besides the shipped ones: file name -> YAML text (an operator's protocol under test). */
  protocols?: Record<string, string>;
  /** Other files of the config's folder: relative path -> text (an operator's catalogue entries and request schemas). */
  files?: Record<string, string>;
  /** Extra top-level config YAML appended to the generated config. */
  extraConfig?: string;
  /** Extra YAML lines inside the `storage:` section (indented two spaces), e.g. a `blobs:` block. */
  storageConfig?: string;
  /** Extra YAML lines inside the `server:` section (indented two spaces). */
  serverConfig?: string;
  env?: NodeJS.ProcessEnv;
  /** Listen on a port (for SDK conformance tests). */
  listen?: boolean;
  /** pino options for the gateway's log (default: no log). */
  logger?: Record<string, unknown>;
  /** Services to use instead of the configured ones (a clock, a meter). */
  overrides?: ServiceOverrides;
}

export interface TestGateway {
  app: FastifyInstance;
  services: Services;
  dir: string;
  workspace: Workspace;
  /** An all-scope key of the default test workspace. */
  key: string;
  /** Base URL when listening, e.g. http://127.0.0.1:1234 */
  url: string;
  newKey(options?: IssueKeyOptions & { workspace?: Workspace }): Promise<string>;
  newWorkspace(name: string): Promise<Workspace>;
  close(): Promise<void>;
}

export async function startGateway(options: TestGatewayOptions): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-test-'));
  mkdirSync(join(dir, 'channels'));
  // The shipped protocols: linked, not copied (the copy and its removal were a tenth of a gateway's start), unless the
  // test writes a file of its own there (`protocols`, or a `channels` or `files` path into channels/protocols/): through
  // the link, that would write into the repository's.
  const protocols = Object.entries(options.protocols ?? {});
  const written = [...Object.keys(options.channels).map((name) => `channels/${name}`), ...Object.keys(options.files ?? {})];
  if (protocols.length || written.some((path) => path.replace(/^\.\//, '').startsWith('channels/protocols/'))) {
    cpSync(join(repoRoot, 'channels', 'protocols'), join(dir, 'channels', 'protocols'), { recursive: true });
  } else symlinkSync(join(repoRoot, 'channels', 'protocols'), join(dir, 'channels', 'protocols'), 'dir');
  for (const [name, text] of protocols) writeFileSync(join(dir, 'channels', 'protocols', name), text);
  for (const [path, text] of Object.entries(options.files ?? {})) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  for (const [name, text] of Object.entries(options.channels)) writeFileSync(join(dir, 'channels', name.endsWith('.yaml') ? name : `${name}.yaml`), text);
  // GATEWAY_TEST_DATABASE=postgres runs the suite's storage on PostgreSQL (DATABASE_URL), one fresh schema per gateway.
  const schema = testDatabase === 'postgres' ? `gw_${randomUUID().replace(/-/g, '').slice(0, 16)}` : undefined;
  const database = schema ? `  database:\n    driver: postgres\n    schema: ${schema}\n` : '';
  writeFileSync(
    join(dir, 'config.yaml'),
    `server:\n  logLevel: silent\n${options.serverConfig ?? ''}storage:\n  dataDir: ./data\n${database}${options.storageConfig ?? ''}channels:\n  dir: ./channels\n${options.extraConfig ?? ''}`,
  );
  // A config the test expects refused leaves no folder behind (three a run did: a short metrics token, a bad time zone).
  const config = await loadConfig(join(dir, 'config.yaml'), { env: { ...process.env, ...options.env } }).catch((err: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  if (!schema && !options.storageConfig?.includes('database:')) {
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'data', 'gateway.db'), await migratedSqlite());
  }
  const services = await createServicesOnSharedDatabase(config, options.overrides);
  const app = await buildApp(services, { logger: options.logger ?? false });
  const workspace = await createWorkspace(services.db, 'test');
  const key = (await issueApiKey(services.db, workspace)).key;
  let url = '';
  if (options.listen) url = await app.listen({ host: '127.0.0.1', port: 0 });
  else await app.ready();
  return {
    app,
    services,
    dir,
    workspace,
    key,
    url,
    newKey: async (o = {}) => (await issueApiKey(services.db, o.workspace ?? workspace, o)).key,
    newWorkspace: (name) => createWorkspace(services.db, name),
    async close() {
      await app.close();
      if (schema) await dropSchema(schema);
      await removeFolder(dir);
    },
  };
}

/**
 * Removes a closed gateway's folder. Something can still add a file while it is removed (ENOTEMPTY): the removal is
 * tried again, and what was in the way is reported (warned when a retry cleared it, thrown when none did).
 */
async function removeFolder(dir: string): Promise<void> {
  let inTheWay: string[] = [];
  for (let attempt = 0; attempt < 40; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true });
      if (inTheWay.length) console.warn(`test gateway folder: removed on try ${attempt + 1}; in the way before: ${inTheWay.join(', ')}`);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOTEMPTY') throw err;
      try {
        inTheWay = readdirSync(dir, { recursive: true }).map(String);
      } catch {
        // Gone meanwhile: the next try finds nothing to remove.
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error(`test gateway folder ${dir} could not be removed: still in it after 2 s: ${inTheWay.join(', ')}`);
}

/** A chat channel YAML pointing at a fake upstream. */
export function chatChannel(id: string, baseUrl: string, opts: { protocol?: string; models?: string; credentialEnv?: string; operations?: string[] } = {}): string {
  return `id: ${id}
protocol: ${opts.protocol ?? 'openai-chat'}
${opts.operations ? `operations: [${opts.operations.join(', ')}]\n` : ''}baseUrl: ${baseUrl}
${opts.credentialEnv ? `credential:\n  env: ${opts.credentialEnv}\n` : ''}models:
${opts.models ?? testModels.fakeChat}`;
}

/** Model entries shared by suites (YAML under a channel's `models:`). */
export const testModels = {
  /** 2.0 / 10.0 / 0.5 USD per million input / output / cached tokens. */
  fakeChat: `  - id: fake-chat
    upstream: upstream-chat
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0, cachedInputPerMillion: 0.5 }
`,
  /** An evaluation model, input-only at 1.0 USD per million. */
  fakeEval: `  - id: fake-eval
    kind: evaluation
    price: { inputPerMillion: 1.0 }
`,
  /** One cent per request and nothing per token: its worst case equals its actual cost. */
  flatChat: `  - id: flat-chat
    upstream: upstream-chat
    kind: chat
    price: { perRequest: 0.01 }
`,
  /** flat-chat and other-chat, one cent a request each on their own upstream models: for caps on one model. */
  twoFlatChats: `  - id: flat-chat
    upstream: upstream-chat
    kind: chat
    price: { perRequest: 0.01 }
  - id: other-chat
    upstream: upstream-other
    kind: chat
    price: { perRequest: 0.01 }
`,
};
