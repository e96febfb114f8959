import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Three layers (README, "Development"): `unit` (pure functions, no gateway), `integration` (a gateway in this process
// against fake upstreams; the storage suites again on PostgreSQL as `integration-postgres` when DATABASE_URL is set) and `process`
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
  'test/sse-reader.test.ts',
  'test/token-cache.test.ts',
  'test/config-env.test.ts',
  'test/config-checks.test.ts',
  'test/sigv4-reference.test.ts',
  'test/read-ahead.test.ts',
  'test/answer-chunks.test.ts',
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
  'test/routing-strategies.test.ts',
  'test/guardrails-config.test.ts',
  'test/guardrails-detectors.test.ts',
  'test/guardrails-checks.test.ts',
  'test/shipped-models.test.ts',
  'test/admin-cli-args.test.ts',
  'test/log-format.test.ts',
  'test/metrics-histogram.test.ts',
  'test/engines.test.ts',
  'test/operator-setup.test.ts',
  'test/cache-units.test.ts',
  'test/change-version.test.ts',
  'test/settle-heap.test.ts',
  'test/load-on-use.test.ts',
  'test/body-guard.test.ts',
  'test/yaml-source.test.ts',
];
/** Suites that spawn processes and never touch the test database. */
const processes = [
  'test/first-run.test.ts',
  'test/startup.test.ts',
  'test/workers.test.ts',
  'test/workers-admin.test.ts',
  'test/revocation-signal.test.ts',
  'test/routing-workers.test.ts',
  'test/compiled-start.test.ts',
  'test/billing-processes.test.ts',
  'test/check-config.test.ts',
  'test/dashboard-setup.test.ts',
  'test/readme-examples.test.ts',
  'test/build-script.test.ts',
];
/**
 * The integration suites whose subject is storage, run again with PostgreSQL as the metadata database (`integration-postgres`,
 * when DATABASE_URL is set). The others (translation, relaying, protocols, SDK conformance, hardening of inputs) store
 * only a key and a ledger row the ones below store too: a second run of them on PostgreSQL tested the same SQL again.
 * Together these run every migration (each gateway migrates its own schema) and every module that queries the database
 * (src/store, and the repositories, stores and sweepers of admin, billing, dashboard, files, request-logs, tasks,
 * webhooks, batches, mcp): a suite that adds a table or a query belongs here.
 */
const onPostgres = [
  // Keys, workspaces, users and roles, audit rows, caps on one model, MCP tool grants: the admin API and CLI's tables.
  'test/admin-api.test.ts',
  'test/admin-api-model-caps.test.ts',
  // How workspaces and keys narrow the response cache (workspaces.cache, api_keys.cache, migration 027), read at authentication.
  'test/cache-limits.test.ts',
  'test/auth.test.ts',
  'test/mcp-gateway.test.ts',
  // The relay secret of Responses mcp tools (settings) and a key read by its id; the keys' grants the MCP page lists.
  'test/mcp-responses.test.ts',
  'test/dashboard-mcp.test.ts',
  // The spend store (src/billing/postgres-spend-store.ts, postgres-settle-batch.ts): reservations, settlements, caps,
  // budget periods, the ledger and its overage column, a reservation left by a killed gateway, renewed while a task runs.
  'test/billing-anthropic-sdk.test.ts',
  'test/billing-budgets.test.ts',
  'test/billing-caps.test.ts',
  'test/billing-kill-restart.test.ts',
  'test/billing-sdk.test.ts',
  'test/billing-settle.test.ts',
  'test/billing-worst-case.test.ts',
  'test/pipeline-billing.test.ts',
  'test/hardening-usage-bounds.test.ts',
  'test/usage.test.ts',
  // Request logs (their attempts column included) and their reads: admin API, Logs page, CSV.
  'test/request-logs.test.ts',
  'test/routing.test.ts',
  'test/routing-stream-failover.test.ts',
  // Routing with spend on the shared stores: 200 requests on one capped key through a failing target (PostgreSQL + Redis).
  'test/routing-cap.test.ts',
  // The response cache's ledger kind (cache_hit), its request-log column and usage's hits.
  'test/cache.test.ts',
  // The semantic cache's embedding, an internal call billed on the shared spend store.
  'test/cache-semantic.test.ts',
  // Guardrail verdicts in request-log rows, the workspace and key guardrail columns, the guardrail.blocked outbox rows.
  'test/guardrails.test.ts',
  'test/guardrails-evidence.test.ts',
  // Tasks, batches, leases and the webhook outbox: rows several processes share.
  'test/tasks-lifecycle.test.ts',
  'test/tasks-processes.test.ts',
  // A task family added by catalogue files alone: its task rows, ledger and caps.
  'test/task-families.test.ts',
  'test/batches-sdk.test.ts',
  // Batches relayed to a vendor's batch API: the vendor columns (migration 026), results read back once.
  'test/batches-vendor.test.ts',
  'test/leases.test.ts',
  'test/webhooks.test.ts',
  'test/webhooks-admin.test.ts',
  // The provider ids a workspace owns and the response items kept for translated Responses (previous_response_id).
  'test/responses.test.ts',
  'test/responses-translate.test.ts',
  // Workspace files: rows, pagination, the sweeper, an aborted upload leaving no row.
  'test/files.test.ts',
  'test/files-sdk.test.ts',
  'test/files-sweeper.test.ts',
  'test/files-upload-stream.test.ts',
  // The dashboard's sessions, sign-in counts, SSO logins, setup links, audit and webhook pages.
  'test/dashboard-auth.test.ts',
  'test/dashboard-pages.test.ts',
  'test/dashboard-audit.test.ts',
  'test/dashboard-webhooks.test.ts',
  'test/dashboard-sso.test.ts',
  'test/hardening-sign-in.test.ts',
];
/** Suites that need PostgreSQL itself (several replicas on one database). */
const postgresOnly = ['test/*-postgres.test.ts'];
/** Containers (podman): `npm run test:container` runs them, after building the images (vitest.container.config.ts). */
const containers = ['test/container/**'];
/**
 * A whole run (`npm test`, no --project): the unit files run in the integration project's workers, among its files, where
 * the modules they load are loaded already; as a project of their own they started three more workers at the end of the
 * run, each loading the modules again. `npm run test:unit` (--project unit) still runs them alone.
 */
const wholeRun = !process.argv.some((arg) => arg === '--project' || arg.startsWith('--project='));
/**
 * Unit files that need a clean process when a whole run puts them among the integration files: settle-heap measures the
 * heap's pages (a worker's heap grown by earlier files leaves more), cache-units counts every fake timer (a timer that a
 * closed gateway left in the worker is one more).
 */
const unitOwnProcess = ['test/settle-heap.test.ts', 'test/cache-units.test.ts'];
/**
 * Integration suites in a process of their own: one leaves process-wide state behind (OpenTelemetry's global provider),
 * one forces a garbage collection every 20 ms (slow on a worker's heap grown by earlier files); in a whole run, the unit
 * files above.
 */
const ownProcess = ['test/telemetry-otlp.test.ts', 'test/hardening-deadlines.test.ts', ...(wholeRun ? unitOwnProcess : [])];
/** Suites that start the gateway or a CLI in a child process run the compiled one: dist/ is built from src/ first (once a run). */
const buildFirst = ['test/kit/compiled.ts'];

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

/**
 * The integration suites on one database (all of them, or the files `only` lists): most share worker processes file
 * after file, a few have their own.
 */
function integration(name: string, exclude: string[], env: Record<string, string> = {}, only?: string[], globalSetup = buildFirst) {
  const own = only ? ownProcess.filter((file) => only.includes(file)) : ownProcess;
  return [
    { extends: true, test: { name, include: only ?? ['test/**/*.test.ts'], exclude: [...exclude, ...ownProcess], env, isolate: false, globalSetup } },
    ...(own.length ? [{ extends: true, test: { name: `${name}-own`, include: own, exclude, env, globalSetup } }] : []),
  ];
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Gateway processes the suites start skip settling their heap after listening (src/main.ts): each is stopped within
    // seconds, and its collections cost about half a second of CPU for memory no test measures.
    env: { GATEWAY_SETTLE_HEAP: 'off' },
    // Most files wait on sockets, timers and child processes more than they compute: one file more than the cores.
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: LayerSequencer },
    projects: [
      // Pure functions: the modules a file loads are kept for the next file in the same worker.
      ...(wholeRun ? [] : [{ extends: true, test: { name: 'unit', include: unit, isolate: false } }]),
      ...integration('integration', [...(wholeRun ? [] : unit), ...processes, ...postgresOnly, ...containers]),
      // With DATABASE_URL set (.ci/run sets it), the storage suites run again with PostgreSQL as the metadata database,
      // and the suites of several replicas on one PostgreSQL database run: all in a database of the run's own
      // (test/kit/postgres-run.ts), so that schemas other runs left behind do not slow its migrations.
      ...(process.env.DATABASE_URL ? integration('integration-postgres', [...unit, ...processes, ...containers], { GATEWAY_TEST_DATABASE: 'postgres' }, [...onPostgres, ...postgresOnly], [...buildFirst, 'test/kit/postgres-run.ts']) : []),
      // Child processes start slowly on a busy machine: more time before a test counts as hung.
      { extends: true, test: { name: 'process', include: processes, testTimeout: 60_000, globalSetup: buildFirst } },
    ],
  },
});
