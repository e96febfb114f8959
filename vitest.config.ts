import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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
  'test/event-stream.test.ts',
  'test/token-cache.test.ts',
  'test/config-env.test.ts',
  'test/config-checks.test.ts',
  'test/sigv4-reference.test.ts',
  'test/read-ahead.test.ts',
  'test/remote-fetch.test.ts',
  'test/evaluate-limit.test.ts',
  'test/evaluate-config.test.ts',
  'test/config-docs.test.ts',
  'test/config-types.test.ts',
  'test/docs-links.test.ts',
  'test/import-graph.test.ts',
  'test/folder-layers.test.ts',
  'test/size-limits.test.ts',
  'test/model-ids-config.test.ts',
  'test/routes-config.test.ts',
  'test/guardrails-config.test.ts',
  'test/guardrails-detectors.test.ts',
  'test/shipped-models.test.ts',
  'test/admin-cli-args.test.ts',
  'test/log-format.test.ts',
  'test/metrics-histogram.test.ts',
  'test/engines.test.ts',
  'test/operator-setup.test.ts',
  'test/cache-units.test.ts',
];
/** Suites that spawn processes and never touch the test database. */
const processes = [
  'test/first-run.test.ts',
  'test/startup.test.ts',
  'test/workers.test.ts',
  'test/workers-admin.test.ts',
  'test/compiled-start.test.ts',
  'test/billing-processes.test.ts',
  'test/check-config.test.ts',
  'test/dashboard-setup.test.ts',
  'test/readme-examples.test.ts',
  'test/build-script.test.ts',
];
/** Integration suites about SQLite itself, or whose storage is beside the point: not run again on PostgreSQL. */
const sqliteOnly = ['test/billing-settle-batch.test.ts', 'test/request-logs-plan.test.ts', 'test/agent-libraries.test.ts', 'test/dashboard-browser.test.ts', 'test/request-logs-browser.test.ts', 'test/sqlite-checkpoint.test.ts', 'test/translate-openai-sdk.test.ts', 'test/cache-redis.test.ts'];
/** Suites that need PostgreSQL itself (several replicas on one database). */
const postgresOnly = ['test/*-postgres.test.ts'];
/** Containers (podman): `npm run test:container` runs them, after building the images (vitest.container.config.ts). */
const containers = ['test/container/**'];
/**
 * Integration suites in a process of their own: one leaves process-wide state behind (OpenTelemetry's global provider),
 * one forces a garbage collection every 20 ms (slow on a worker's heap grown by earlier files).
 */
const ownProcess = ['test/telemetry-otlp.test.ts', 'test/hardening-deadlines.test.ts'];

/**
 * The longest layer first (spawned processes), then each project's files together, so that a worker goes on from one file
 * to the next of its project without starting again (isolate: false); within a project, vitest's order (slowest first).
 */
class LayerSequencer extends BaseSequencer {
  static readonly order = ['process', 'integration-postgres-own', 'integration-own', 'integration-postgres', 'integration', 'unit'];
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => LayerSequencer.order.indexOf(spec.project.name);
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

/** The integration suites on one database: most share worker processes file after file, a few have their own. */
function integration(name: string, exclude: string[], env: Record<string, string> = {}) {
  return [
    { extends: true, test: { name, include: ['test/**/*.test.ts'], exclude: [...exclude, ...ownProcess], env, isolate: false } },
    { extends: true, test: { name: `${name}-own`, include: ownProcess, exclude, env } },
  ];
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most files wait on sockets, timers and child processes more than they compute: one file more than the cores.
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: LayerSequencer },
    projects: [
      // Pure functions: the modules a file loads are kept for the next file in the same worker.
      { extends: true, test: { name: 'unit', include: unit, isolate: false } },
      ...integration('integration', [...unit, ...processes, ...postgresOnly, ...containers]),
      // With DATABASE_URL set (.ci/run sets it), every storage suite runs again with PostgreSQL as the metadata database.
      ...(process.env.DATABASE_URL ? integration('integration-postgres', [...unit, ...processes, ...sqliteOnly, ...containers], { GATEWAY_TEST_DATABASE: 'postgres' }) : []),
      // Child processes start slowly on a busy machine: more time before a test counts as hung.
      { extends: true, test: { name: 'process', include: processes, testTimeout: 60_000 } },
    ],
  },
});
