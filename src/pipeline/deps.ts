// What the pipeline's stages use, named apart from the code that assembles it: the runtime snapshot, the meter, the
// file store, the remote fetcher and the request schemas.
import type { Meter } from '../billing/charge.js';
import type { Metrics } from '../base/metrics.js';
import type { SpendStore } from '../billing/spend-store.js';
import type { SchemaRegistry } from '../config/schemas.js';
import type { FileStore, ServerConfig } from '../files/file-store.js';
import type { RemoteFetcher } from '../net/remote-fetch.js';
import type { SnapshotHold } from '../engine/runtime.js';
import type { GuardrailEvents } from './guard-events.js';

/** Hands out holds on the current runtime snapshot (config, routes, upstream pools). */
export interface SnapshotSource {
  hold(): SnapshotHold;
}

export interface PipelineDeps extends FileStore, ServerConfig {
  runtime: SnapshotSource;
  meter: Meter;
  /** Whether settlements commit in batches (then the answer goes out before the commit). */
  spend: Pick<SpendStore, 'commitsInBatches'>;
  remote: RemoteFetcher;
  schemas: SchemaRegistry;
  /** Counters of what calls did (guardrail verdicts); absent where nothing is counted. */
  metrics?: Metrics;
  /** Where guardrail blocks are told (webhook event guardrail.blocked); absent where no one listens. */
  guardrailEvents?: GuardrailEvents;
  /** The clock (Unix milliseconds) models' retirement days are judged by. */
  now(): number;
}
