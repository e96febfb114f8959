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
import type { BaseLogger } from 'pino';
import type { AuthContext } from '../auth/authenticate.js';
import type { InternalAnswer, InternalRequest } from '../engine/guardrails.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { Upstreams } from '../engine/upstream.js';

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
  /** Runs requests of the catalogue's endpoint families for a call in progress (a moderation guardrail's call). */
  internalCalls?: InternalCalls;
  /** Tracing, when on: whether it reads answers' text (then JSON answers go out through fastify's send). */
  tracing?: { readonly readsAnswers: boolean };
  /** The clock (Unix milliseconds) models' retirement days are judged by. */
  now(): number;
}

/** The call an internal call is made for: its services, key and snapshot; the internal call is billed and logged as its. */
export interface InternalParent {
  services: PipelineDeps;
  auth: AuthContext;
  config: LoadedConfig;
  upstreams: Upstreams;
  requestId: string;
  log: Pick<BaseLogger, 'error' | 'warn' | 'info' | 'debug'>;
}

/** Runs a request of another endpoint family through the pipeline as a call of its own, on behalf of `parent`. */
export interface InternalCalls {
  run(parent: InternalParent, request: InternalRequest, signal: AbortSignal): Promise<InternalAnswer>;
}
