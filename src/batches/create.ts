// Creating a batch: its lines checked (plan.ts) and where they go chosen (a vendor's batch API, or the gateway's runner),
// its worst case reserved against the key's and the workspace's caps as one charge (402 for the whole batch when it does
// not fit), then the batch and its lines written in one transaction.
import type { AuthContext } from '../auth/authenticate.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { EndpointConfig } from '../config/types.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { BatchStatus } from '../store/schema.js';
import { batchesOptions } from './options.js';
import { planBatch, type InputLine } from './plan.js';
import { insertBatch, newBatchId, type BatchRow } from './store.js';

export interface NewBatch {
  object: 'batch' | 'message_batch';
  endpoint: EndpointConfig;
  inputFileId: string | null;
  completionWindow: string;
  metadata: Record<string, unknown> | null;
  lines: InputLine[];
}

export async function createBatch(services: PipelineDeps, auth: AuthContext, batch: NewBatch): Promise<BatchRow> {
  const held = services.runtime.hold();
  try {
    const config: LoadedConfig = held.snapshot.config;
    const options = batchesOptions(config);
    const planned = await planBatch(services, held.snapshot, auth, batch.endpoint, batch.lines, options.relay);
    const now = services.now();
    const id = newBatchId(batch.object === 'batch' ? 'batch' : 'msgbatch', now);
    const windowMs = options.completionWindowMs;
    const charge = await services.meter.begin({ auth, route: planned.route, requestId: id, estimateMicros: planned.estimateMicros, reservationTtlMs: windowMs + options.leaseMs });
    const row: BatchRow = {
      id,
      workspace_id: auth.workspaceId,
      key_id: auth.keyId,
      object: batch.object,
      endpoint: batch.endpoint.path,
      input_file_id: batch.inputFileId,
      completion_window: batch.completionWindow,
      status: 'validating' satisfies BatchStatus,
      charge: JSON.stringify(charge.ref),
      metadata: batch.metadata ? JSON.stringify(batch.metadata) : null,
      output_file_id: null,
      error_file_id: null,
      total: batch.lines.length,
      succeeded: 0,
      failed: 0,
      cost_micros: 0,
      created_at: Math.floor(now / 1000),
      in_progress_at: null,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      expires_at: Math.floor((now + windowMs) / 1000),
      next_run_at: now,
      lease_owner: null,
      lease_until: 0,
      vendor_channel: planned.relayTo ?? null,
      vendor_step: planned.relayTo ? 'submit' : null,
      vendor_batch_id: null,
      vendor_since: null,
      vendor_error: null,
    };
    const lines = batch.lines.map((line, i) => ({ batch_id: id, line: i, custom_id: line.customId, body: JSON.stringify(line.body), status: 'pending' as const, attempts: 0, next_at: 0, result: null, cost_micros: 0 }));
    try {
      await insertBatch(services.db, row, lines);
    } catch (err) {
      await charge.release();
      throw err;
    }
    return row;
  } finally {
    held.release();
  }
}
