// vitest's globalSetup for the PostgreSQL projects: the run gets a database of its own on DATABASE_URL's server, dropped
// when the run ends. Each test gateway migrates a schema of its own, and the migrator reads the tables of every schema
// of its database: schemas left behind by runs that were killed (or by other runs sharing the server) would otherwise
// slow every migration after them. A run database older than a day (its run was killed) is dropped at the next start.
import pg from 'pg';

const PREFIX = 'gateway_test_run_';
const STALE_SECONDS = 86_400;

async function onServer<T>(url: URL, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url.href });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.DATABASE_URL;
  if (!given || process.env.GATEWAY_TEST_RUN_DATABASE) return undefined;
  const server = new URL(given);
  const now = Math.floor(Date.now() / 1000);
  const name = `${PREFIX}${now}_${process.pid}`;
  await onServer(server, async (client) => {
    const { rows } = await client.query<{ datname: string }>('select datname from pg_database where datname like $1', [`${PREFIX}%`]);
    for (const { datname } of rows) {
      const started = Number(/^gateway_test_run_(\d+)_\d+$/.exec(datname)?.[1]);
      if (started && now - started > STALE_SECONDS) await client.query(`drop database if exists ${datname} with (force)`);
    }
    await client.query(`create database ${name}`);
  });
  const run = new URL(server);
  run.pathname = `/${name}`;
  // Test files, and the gateways they start in child processes, read the variable: they all use the run's database.
  process.env.DATABASE_URL = run.href;
  process.env.GATEWAY_TEST_RUN_DATABASE = name;
  return async () => {
    await onServer(server, (client) => client.query(`drop database if exists ${name} with (force)`));
    process.env.DATABASE_URL = given;
    delete process.env.GATEWAY_TEST_RUN_DATABASE;
  };
}
