// What a vendor keeps of a relayed batch (its files, its batch and results), deleted once the gateway no longer needs
// it: the protocol's `batches.cleanup` calls. Best-effort: a delete that fails is logged and left; it never fails the
// batch, whose results are already the gateway's.
import type { ModelRoute } from '../config/types.js';
import type { Snapshot } from '../engine/runtime.js';
import type { LineRunner } from './line-run.js';
import type { BatchRow } from './store.js';
import { callVendor } from './vendor-calls.js';
import type { CompiledBatchApi } from './vendor-spec.js';

/** The scope of the cleanup mappings: the last poll's answer (null when no vendor batch was made), the refused upload's id. */
export interface CleanupScope {
  answer: unknown;
  file_id: string | null;
}

/** Sends each cleanup call whose params all have a value and whose operation the channel serves. Never throws. */
export async function cleanUpVendor(runner: LineRunner, row: BatchRow, snapshot: Snapshot, route: ModelRoute, api: CompiledBatchApi, scope: CleanupScope): Promise<void> {
  const { log } = runner.services;
  const served = route.channel.operations;
  const done = new Set<string>();
  for (const step of api.cleanup) {
    if (served && !served.includes(step.operation)) continue;
    let params: Record<string, unknown>;
    try {
      params = (step.params(scope) ?? {}) as Record<string, unknown>;
    } catch (err) {
      log.warn({ err, batch: row.id, operation: step.operation }, 'a vendor cleanup call could not be mapped; skipped');
      continue;
    }
    if (Object.values(params).some((v) => v === null || v === undefined || v === '')) continue;
    // The same thing named twice (the upload by two mappings) is deleted once.
    const key = `${step.operation}\0${JSON.stringify(params)}`;
    if (done.has(key)) continue;
    done.add(key);
    const outgoing = { operation: step.operation, pathScope: { ...params, upstream_id: row.vendor_batch_id }, once: true };
    try {
      await callVendor(snapshot, runner.signal, route, outgoing, (sent) => sent.response.body.dump());
      log.info({ batch: row.id, channel: route.channel.id, operation: step.operation, ...params }, 'deleted at the vendor');
    } catch (err) {
      log.warn({ err, batch: row.id, channel: route.channel.id, operation: step.operation, ...params }, 'deleting at the vendor failed; left there');
    }
  }
}
