import { defineConfig } from 'vitest/config';

/** Suites that never touch the metadata database, or that are about SQLite itself: run once, on the default project. */
const storageFree = ['test/translate-*.test.ts', 'test/liquid-*.test.ts', 'test/mapping*.test.ts', 'test/config-docs.test.ts', 'test/import-graph.test.ts', 'test/check-config.test.ts', 'test/startup.test.ts', 'test/billing-processes.test.ts', 'test/billing-settle-batch.test.ts', 'test/evaluate-config.test.ts', 'test/dashboard-setup.test.ts', 'test/dashboard-browser.test.ts', 'test/compiled-start.test.ts', 'test/workers.test.ts', 'test/sqlite-checkpoint.test.ts'];
/** Suites that need PostgreSQL itself (several replicas on one database). */
const postgresOnly = ['test/*-postgres.test.ts'];
/** Containers (podman): `npm run test:container` runs them, after building the images. */
const containers = ['test/container/**'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: [...postgresOnly, ...containers] } },
      // With DATABASE_URL set (.ci/run sets it), every storage suite runs again with PostgreSQL as the metadata database.
      ...(process.env.DATABASE_URL
        ? [{ extends: true, test: { name: 'postgres', include: ['test/**/*.test.ts'], exclude: [...storageFree, ...containers], env: { GATEWAY_TEST_DATABASE: 'postgres' } } }]
        : []),
    ],
  },
});
