import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Three layers (README, "Development"): `unit` (pure functions, no gateway), `integration` (a gateway in this process
// against fake upstreams; again on PostgreSQL as `integration-postgres` when DATABASE_URL is set) and `process`
// (suites that spawn gateways, CLIs or workers: run once, whatever the database). `npm test` runs all of them.

/** Pure functions and files of the repository: no gateway, no database, no child process. */
const unit = [
  'test/translate-engine.test.ts',
  'test/translate-fields.test.ts',
  'test/translate-fixtures.test.ts',
  'test/mapping*.test.ts',
  'test/json-text.test.ts',
  'test/read-capped.test.ts',
  'test/remote-fetch.test.ts',
  'test/evaluate-limit.test.ts',
  'test/evaluate-config.test.ts',
  'test/config-docs.test.ts',
  'test/config-types.test.ts',
  'test/docs-links.test.ts',
  'test/import-graph.test.ts',
  'test/size-limits.test.ts',
];
/** Suites that spawn processes and never touch the test database. */
const processes = [
  'test/startup.test.ts',
  'test/workers.test.ts',
  'test/workers-reload.test.ts',
  'test/compiled-start.test.ts',
  'test/billing-processes.test.ts',
  'test/check-config.test.ts',
  'test/dashboard-setup.test.ts',
];
/** Integration suites about SQLite itself, or whose storage is beside the point: not run again on PostgreSQL. */
const sqliteOnly = ['test/billing-settle-batch.test.ts', 'test/agent-libraries.test.ts', 'test/dashboard-browser.test.ts', 'test/sqlite-checkpoint.test.ts', 'test/translate-openai-sdk.test.ts'];
/** Suites that need PostgreSQL itself (several replicas on one database). */
const postgresOnly = ['test/*-postgres.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most files wait on sockets, timers and child processes more than they compute: one file more than the cores.
    maxWorkers: availableParallelism() + 1,
    projects: [
      { extends: true, test: { name: 'unit', include: unit } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...unit, ...processes, ...postgresOnly] } },
      // With DATABASE_URL set (.ci/run sets it), every storage suite runs again with PostgreSQL as the metadata database.
      ...(process.env.DATABASE_URL
        ? [{ extends: true, test: { name: 'integration-postgres', include: ['test/**/*.test.ts'], exclude: [...unit, ...processes, ...sqliteOnly], env: { GATEWAY_TEST_DATABASE: 'postgres' } } }]
        : []),
      { extends: true, test: { name: 'process', include: processes } },
    ],
  },
});
