// The batch runner: at each look it claims due batches under a lease on their row (tasks' mechanism, one process per
// batch), runs a bounded number of their pending lines per channel as ordinary pipeline calls (src/batches/line-run.ts),
// or follows a batch relayed to its vendor's batch API (src/batches/vendor-relay.ts), and finishes a batch whose lines are
// all done: its result files written, what its reservation still holds released, its webhook event in the transaction
// of its status.
import { setMaxListeners } from 'node:events';
import { routesOf } from '../engine/models.js';
import type { Snapshot } from '../engine/runtime.js';
import type { BatchStatus } from '../store/schema.js';
import type { BatchRunnerDeps } from './deps.js';
import { chargeOf, runLine, type LineRunner } from './line-run.js';
import { batchesOptions, type BatchesOptions } from './options.js';
import { writeResultFile } from './result-files.js';
import { resultFilesOf, type Unfinished } from './results.js';
import { claimBatch, dueBatchIds, duePendingLines, findBatchById, hasPendingLines, renewBatch, updateLeasedBatch, type BatchLineRow, type BatchRow } from './store.js';
import { VendorRelay } from './vendor-relay.js';

export type { BatchEvents, BatchRunnerDeps } from './deps.js';

export class BatchRunner {
  private timer?: NodeJS.Timeout;
  private readonly abort = new AbortController();
  private ticking?: Promise<void>;
  /** Lines this process has in flight, per channel. */
  private readonly inFlight = new Map<string, number>();
  /** Lines waiting for room on their channel. */
  private readonly waiting = new Map<string, (() => void)[]>();

  /** What running a line takes (src/batches/line-run.ts). */
  private readonly lines: LineRunner;
  /** The turns of batches relayed to a vendor's batch API (src/batches/vendor-relay.ts). */
  private readonly relay: VendorRelay;

  constructor(private readonly services: BatchRunnerDeps) {
    // Each line in flight listens for the stop until it ends: as many as lines in flight, no leak past Node's 10.
    setMaxListeners(0, this.abort.signal);
    const runner = this;
    this.lines = { services, signal: this.abort.signal, get maxAttempts() { return runner.options.maxAttempts; } };
    this.relay = new VendorRelay({ lines: this.lines, owner: services.instanceId, finish: (row, status, unfinished) => this.finish(row, status, unfinished) });
  }

  private get options(): BatchesOptions {
    return batchesOptions(this.services.config);
  }

  private get owner(): string {
    return this.services.instanceId;
  }

  start(): void {
    if (this.timer || this.abort.signal.aborted) return;
    this.timer = setInterval(() => void this.tick(), this.options.tickMs);
    this.timer.unref();
  }

  /** Stops looking for work and waits for the look in progress; leases still held run out for another process. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.abort.abort();
    await this.ticking;
  }

  /**
   * One look: each due batch this process can claim gets up to `linesPerTick` lines started per channel, and the look
   * ends when they have (so a test drives the runner tick by tick, and the rate per channel is bounded per look).
   */
  tick(): Promise<void> {
    if (this.ticking || this.abort.signal.aborted) return this.ticking ?? Promise.resolve();
    this.ticking = this.look().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async look(): Promise<void> {
    const { batchSize, leaseMs } = this.options;
    const started = new Map<string, number>();
    try {
      const now = this.services.now();
      const work: Promise<void>[] = [];
      for (const id of await dueBatchIds(this.services.db, now, batchSize)) {
        if (this.abort.signal.aborted) break;
        if (await claimBatch(this.services.db, id, this.owner, leaseMs, now)) work.push(this.work(id, started));
      }
      await Promise.all(work);
    } catch (err) {
      this.services.log.error({ err }, 'looking for due batches failed');
    }
  }

  /** One turn of a claimed batch. Never throws: a fault is logged and the batch tried again at the next look. */
  private async work(id: string, started: Map<string, number>): Promise<void> {
    const held = this.services.runtime.hold();
    const renew = setInterval(() => void renewBatch(this.services.db, id, this.owner, this.options.leaseMs, this.services.now()).catch(() => undefined), Math.max(50, this.options.leaseMs / 3));
    try {
      const row = await findBatchById(this.services.db, id);
      if (!row || row.lease_owner !== this.owner) return;
      await this.turn(row, held.snapshot, started);
    } catch (err) {
      this.services.log.error({ err, batch: id }, 'working on a batch failed; it is tried again');
      await updateLeasedBatch(this.services.db, id, this.owner, {}).catch(() => undefined);
    } finally {
      clearInterval(renew);
      held.release();
    }
  }

  private async turn(row: BatchRow, snapshot: Snapshot, started: Map<string, number>): Promise<void> {
    const now = this.services.now();
    // The reservation holds while the batch runs (a relayed one until its vendor's own expiry, which started later); one
    // that lapsed (its process died) is admitted again for what still fits.
    await this.services.meter.resume(chargeOf(row)).renew(Math.max(this.options.leaseMs, Number(row.expires_at) * 1000 - now + this.options.leaseMs));
    if (row.vendor_channel && (await this.relay.turn(row, snapshot)) === 'handled') return;
    if (row.status === 'cancelling') return this.finish(row, 'cancelled', 'cancelled');
    if (now > Number(row.expires_at) * 1000) return this.finish(row, 'expired', 'expired');
    if (row.status === 'validating') {
      await this.services.db.updateTable('batches').set({ status: 'in_progress', in_progress_at: Math.floor(now / 1000) }).where('id', '=', row.id).where('lease_owner', '=', this.owner).execute();
    }
    await this.runLines(row, snapshot, started, now);
  }

  /** Starts up to linesPerTick due lines per channel, waits for them, and finishes the batch when none is left. */
  private async runLines(row: BatchRow, snapshot: Snapshot, started: Map<string, number>, now: number): Promise<void> {
    const { db } = this.services;
    const { linesPerTick, inFlightPerChannel } = this.options;
    const lines = await duePendingLines(db, row.id, now, linesPerTick * 4);
    const running: Promise<void>[] = [];
    for (const line of lines) {
      if (this.abort.signal.aborted) break;
      const channel = channelOf(snapshot, line);
      const count = started.get(channel) ?? 0;
      if (count >= linesPerTick) continue;
      started.set(channel, count + 1);
      running.push(this.withRoom(channel, inFlightPerChannel, () => runLine(this.lines, row, line, snapshot)));
    }
    await Promise.all(running);
    // Cancelled meanwhile: the next look finishes the cancel.
    const now2 = this.services.now();
    if (!(await hasPendingLines(db, row.id)) && !this.abort.signal.aborted) {
      const current = await findBatchById(db, row.id);
      if (current?.status === 'cancelling') return this.finish(current, 'cancelled', 'cancelled');
      if (current) return this.finish(current, 'completed');
      return;
    }
    await updateLeasedBatch(db, row.id, this.owner, { next_run_at: now2 });
  }

  /** Runs `work` once fewer than `limit` lines of this process are in flight on `channel`. */
  private async withRoom(channel: string, limit: number, work: () => Promise<void>): Promise<void> {
    while ((this.inFlight.get(channel) ?? 0) >= limit) await new Promise<void>((resolve) => this.waiting.set(channel, [...(this.waiting.get(channel) ?? []), resolve]));
    this.inFlight.set(channel, (this.inFlight.get(channel) ?? 0) + 1);
    try {
      await work();
    } finally {
      this.inFlight.set(channel, (this.inFlight.get(channel) ?? 1) - 1);
      this.waiting.get(channel)?.shift()?.();
    }
  }

  /**
   * Ends the batch: its result files written from its lines (an unfinished line as `unfinished`), its reservation
   * released (every line settled on its own), its final status and event written together.
   */
  private async finish(row: BatchRow, status: BatchStatus, unfinished?: Unfinished): Promise<void> {
    const { db } = this.services;
    const at = () => Math.floor(this.services.now() / 1000);
    if (status === 'completed') await db.updateTable('batches').set({ status: 'finalizing', finalizing_at: at() }).where('id', '=', row.id).where('lease_owner', '=', this.owner).execute();
    const formats = resultFilesOf(row);
    const output = await writeResultFile(this.services, row, (line, result) => formats.output(line, result, unfinished), 'output');
    const errors = await writeResultFile(this.services, row, (line, result) => formats.error(line, result, unfinished), 'errors');
    const end = { [`${status}_at`]: at() } as Partial<BatchRow>;
    // request_counts count the lines that ran; those a cancel or the expiry stopped are the rest of the total.
    const patch = { ...end, status, output_file_id: output ?? null, error_file_id: errors ?? null };
    await this.services.meter.resume(chargeOf(row)).release();
    const events = this.services.events;
    await db.transaction().execute(async (trx) => {
      if (!(await updateLeasedBatch(trx, row.id, this.owner, patch))) return;
      const done = await findBatchById(trx, row.id);
      if (done && events) await events.batchFinished(trx, done);
    });
  }
}

/** The channel a line goes to first (its model's first route), the unit its rate is bounded by. */
function channelOf(snapshot: Snapshot, line: BatchLineRow): string {
  try {
    const model = (JSON.parse(line.body) as { model?: unknown }).model;
    return (typeof model === 'string' && routesOf(snapshot.config, model)?.[0]?.channel.id) || '';
  } catch {
    return '';
  }
}
