// A relayed batch's turn at a look of the runner (its lease held): submitted once, polled at a growing interval, its
// results read back when the vendor batch ends, a client's cancel relayed. The batch ends as the vendor's did: completed,
// cancelled, expired, or failed (a vendor batch that failed, or whose creation may or may not have happened).
import type { ModelRoute } from '../config/types.js';
import type { Snapshot } from '../engine/runtime.js';
import { sanitizeUpstreamMessage } from '../engine/upstream.js';
import { readJsonObject } from '../pipeline/decode.js';
import type { BatchStatus, VendorStep } from '../store/schema.js';
import type { LineRunner } from './line-run.js';
import type { Unfinished } from './results.js';
import { findBatchById, updateLeasedBatch, type BatchRow } from './store.js';
import { callVendor } from './vendor-calls.js';
import { readVendorResults } from './vendor-results.js';
import { vendorApiOf, type CompiledBatchApi } from './vendor-spec.js';
import { submitBatch } from './vendor-submit.js';
import { cleanUpVendor } from './vendor-cleanup.js';

/** The statuses a batch ends in. */
const FINAL = new Set<string>(['completed', 'failed', 'cancelled', 'expired']);

/** How long past its window a relayed batch waits for its vendor's own expiry (which started later, at its creation). */
const VENDOR_GRACE_MS = 3600_000;

/** What the turn left: the batch handled, or left to the gateway's runner (nothing was sent to the vendor). */
export type RelayTurn = 'handled' | 'run';

export interface RelayDeps {
  lines: LineRunner;
  /** This process's lease owner name. */
  owner: string;
  /** Ends the batch (its files written, its reservation released, its event sent): the runner's. */
  finish(row: BatchRow, status: BatchStatus, unfinished: Unfinished): Promise<void>;
}

export class VendorRelay {
  constructor(private readonly deps: RelayDeps) {}

  private get services() {
    return this.deps.lines.services;
  }

  async turn(row: BatchRow, snapshot: Snapshot): Promise<RelayTurn> {
    const vendor = vendorApiOf(snapshot.config, row.vendor_channel!);
    if (row.vendor_step === 'submit') return this.submit(row, snapshot, vendor);
    if (row.vendor_step === 'creating') {
      await this.fail(row, { code: 'vendor_submit_interrupted', message: 'the gateway stopped while it created the vendor batch; the batch may exist there and was not created again' });
      return 'handled';
    }
    if (!vendor) {
      this.services.log.warn({ batch: row.id, channel: row.vendor_channel }, 'a relayed batch\'s channel no longer declares its batch API; polled again later');
      await this.later(row, this.services.now() + 60_000);
      return 'handled';
    }
    await this.follow(row, snapshot, vendor.route, vendor.api);
    return 'handled';
  }

  private async submit(row: BatchRow, snapshot: Snapshot, vendor: ReturnType<typeof vendorApiOf>): Promise<RelayTurn> {
    const { db, log } = this.services;
    const now = this.services.now();
    const ended: [BatchStatus, Unfinished] | undefined = row.status === 'cancelling' ? ['cancelled', 'cancelled'] : now > Number(row.expires_at) * 1000 ? ['expired', 'expired'] : undefined;
    if (ended) {
      await this.deps.finish(row, ...ended);
      return 'handled';
    }
    const outcome = vendor ? await submitBatch(this.deps.lines, row, snapshot, vendor.route, vendor.api, () => this.step(row, 'creating')) : { run: `channel "${row.vendor_channel}" no longer declares a batch API` };
    if ('run' in outcome) {
      log.warn({ batch: row.id, channel: row.vendor_channel, reason: outcome.run }, 'the batch is run by the gateway instead of its vendor\'s batch API');
      await db.updateTable('batches').set({ vendor_channel: null, vendor_step: null }).where('id', '=', row.id).where('lease_owner', '=', this.deps.owner).execute();
      return 'run';
    }
    if ('failed' in outcome) {
      await this.fail(row, outcome.failed);
      return 'handled';
    }
    const at = this.services.now();
    await db.updateTable('batches').set({ status: 'in_progress', in_progress_at: Math.floor(at / 1000) }).where('id', '=', row.id).where('status', '=', 'validating').where('lease_owner', '=', this.deps.owner).execute();
    await updateLeasedBatch(db, row.id, this.deps.owner, { vendor_step: 'polling', vendor_batch_id: outcome.created, vendor_since: at, next_run_at: at + vendor!.api.spec.poll.interval.firstSeconds * 1000 });
    return 'handled';
  }

  /** A submitted batch: its cancel relayed once, its status polled, its results read once it ended. */
  private async follow(row: BatchRow, snapshot: Snapshot, route: ModelRoute, api: CompiledBatchApi): Promise<void> {
    const now = this.services.now();
    const expired = now > Number(row.expires_at) * 1000 + VENDOR_GRACE_MS;
    if ((row.status === 'cancelling' || expired) && row.vendor_step === 'polling') await this.relayCancel(row, snapshot, route, api);
    if (expired) return this.deps.finish(row, 'expired', 'expired');
    const outgoing = { operation: api.spec.poll.operation, pathScope: { upstream_id: row.vendor_batch_id } };
    let answer: Record<string, unknown>;
    try {
      answer = await callVendor(snapshot, this.deps.lines.signal, route, outgoing, readJsonObject);
    } catch (err) {
      this.services.log.warn({ err, batch: row.id }, 'polling a vendor batch failed; polled again later');
      return this.later(row, now + this.interval(api, row, now));
    }
    const word = api.status({ answer });
    const status = api.spec.poll.statusMap[String(word)] ?? 'in_progress';
    if (status === 'in_progress') return this.later(row, now + this.interval(api, row, now));
    if (status === 'failed') {
      await this.fail(row, errorOf(api, answer, route));
    } else {
      await readVendorResults(this.deps.lines, row, snapshot, route, api, answer);
      const current = (await findBatchById(this.services.db, row.id)) ?? row;
      const ended: BatchStatus = current.status === 'cancelling' ? 'cancelled' : status;
      await this.deps.finish(current, ended, ended === 'completed' ? 'missing' : ended);
    }
    // Deleted at the vendor only once the batch's end is written: a process that died before would read them again.
    if (FINAL.has((await findBatchById(this.services.db, row.id))?.status ?? '')) await cleanUpVendor(this.deps.lines, row, snapshot, route, api, { answer, file_id: null });
  }

  private async relayCancel(row: BatchRow, snapshot: Snapshot, route: ModelRoute, api: CompiledBatchApi): Promise<void> {
    if (api.spec.cancel) {
      const outgoing = { operation: api.spec.cancel.operation, pathScope: { upstream_id: row.vendor_batch_id }, once: true };
      await callVendor(snapshot, this.deps.lines.signal, route, outgoing, (sent) => sent.response.body.dump()).catch((err: unknown) => this.services.log.warn({ err, batch: row.id }, 'relaying a cancel to the vendor batch failed; its results are read when it ends'));
    }
    await this.step(row, 'cancelling');
  }

  /** The wait before the next poll: a tenth of the time the vendor batch has run, within the protocol's bounds. */
  private interval(api: CompiledBatchApi, row: BatchRow, now: number): number {
    const { firstSeconds, maxSeconds } = api.spec.poll.interval;
    return Math.min(maxSeconds * 1000, Math.max(firstSeconds * 1000, (now - Number(row.vendor_since ?? now)) / 10));
  }

  private async later(row: BatchRow, at: number): Promise<void> {
    await updateLeasedBatch(this.services.db, row.id, this.deps.owner, { next_run_at: at });
  }

  /** Moves the relay on a step, while this process holds the lease; false when it was lost. */
  private async step(row: BatchRow, step: VendorStep): Promise<boolean> {
    const result = await this.services.db.updateTable('batches').set({ vendor_step: step }).where('id', '=', row.id).where('lease_owner', '=', this.deps.owner).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  private async fail(row: BatchRow, error: { code: string; message: string }): Promise<void> {
    await this.services.db.updateTable('batches').set({ vendor_error: JSON.stringify(error) }).where('id', '=', row.id).where('lease_owner', '=', this.deps.owner).execute();
    await this.deps.finish({ ...row, vendor_error: JSON.stringify(error) }, 'failed', 'failed');
  }
}

/** A failed vendor batch's reason, as the protocol's `poll.error` reads it (else a generic one), scrubbed as upstream text is. */
function errorOf(api: CompiledBatchApi, answer: unknown, route: ModelRoute): { code: string; message: string } {
  const error = (api.error?.({ answer }) ?? {}) as { code?: unknown; message?: unknown };
  return {
    code: typeof error.code === 'string' && error.code ? error.code.slice(0, 64) : 'batch_failed',
    message: typeof error.message === 'string' && error.message ? sanitizeUpstreamMessage(error.message, route).slice(0, 1000) : 'the vendor failed the batch',
  };
}
