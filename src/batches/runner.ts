// The batch runner: at each look it claims due batches under a lease on their row (tasks' mechanism, one process per
// batch), runs a bounded number of their pending lines per channel as ordinary pipeline calls, writes each line's end once
// its charge settled, retries a line the upstream could not serve, and finishes a batch whose lines are all done: its
// result files written, what its reservation still holds released, its webhook event in the transaction of its status.
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { AuthContext } from '../auth/authenticate.js';
import { GatewayError, errorBody, type Envelope } from '../base/errors.js';
import type { ChargeRef } from '../billing/charge.js';
import { routesOf } from '../engine/models.js';
import type { Snapshot } from '../engine/runtime.js';
import { runCall } from '../pipeline/run.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import type { Db } from '../store/db.js';
import type { BatchStatus } from '../store/schema.js';
import type { LedgerEntry } from '../store/usage-ledger.js';
import type { RequestLogWriter } from '../request-logs/writer.js';
import { isUpstreamTrouble } from '../tasks/faults.js';
import { lineLogRow, type LineEnd } from './line-log.js';
import { batchPricedConfig, LineCall, lineMeter } from './line-call.js';
import { batchesOptions, type BatchesOptions } from './options.js';
import { batchEndpoint, lineFlow } from './plan.js';
import { writeResultFile } from './result-files.js';
import { resultFilesOf, type LineResult, type Unfinished } from './results.js';
import {
  claimBatch,
  countPendingLines,
  dueBatchIds,
  duePendingLines,
  findBatchById,
  finishLine,
  renewBatch,
  retryLine,
  updateLeasedBatch,
  type BatchLineRow,
  type BatchRow,
} from './store.js';

/** Told when a batch ends, inside the transaction that writes its final status: both land or neither. */
export interface BatchEvents {
  batchFinished(db: Db, batch: BatchRow): Promise<void>;
}

export interface BatchRunnerDeps extends PipelineDeps {
  /** This process among the replicas: the owner name of the leases it takes. */
  instanceId: string;
  log: Logger;
  /** Writes a ledger entry under a charge id once (the spend store's settle, with no reservation row to drop). */
  settleEntry: (id: string, entry: LedgerEntry) => Promise<boolean>;
  events?: BatchEvents;
  /** The request log: a row per line run, its route `batch:<endpoint>` and its request id `<batch id>:<line>`. */
  requestLogs?: Pick<RequestLogWriter, 'enabled' | 'append'>;
}

/** Upstream answers a line is tried again on (and a gateway that could not reach the upstream). */
const RETRIED = new Set([408, 425, 429]);
/** The wait before a line's second try, doubling for each try after. */
const RETRY_FIRST_MS = 1000;

export class BatchRunner {
  private timer?: NodeJS.Timeout;
  private readonly abort = new AbortController();
  private ticking?: Promise<void>;
  /** Lines this process has in flight, per channel. */
  private readonly inFlight = new Map<string, number>();
  /** Lines waiting for room on their channel. */
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly services: BatchRunnerDeps) {
    // Each line in flight listens for the stop until it ends: as many as lines in flight, no leak past Node's 10.
    setMaxListeners(0, this.abort.signal);
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
    const { db } = this.services;
    const now = this.services.now();
    if (row.status === 'cancelling') return this.finish(row, 'cancelled', 'cancelled');
    if (now > Number(row.expires_at) * 1000) return this.finish(row, 'expired', 'expired');
    if (row.status === 'validating') {
      await db.updateTable('batches').set({ status: 'in_progress', in_progress_at: Math.floor(now / 1000) }).where('id', '=', row.id).where('lease_owner', '=', this.owner).execute();
    }
    // The reservation holds while the batch runs; one that lapsed (its process died) is admitted again for what still fits.
    await this.services.meter.resume(chargeOf(row)).renew(Number(row.expires_at) * 1000 - now + this.options.leaseMs);
    const { linesPerTick, inFlightPerChannel } = this.options;
    const lines = await duePendingLines(db, row.id, now, linesPerTick * 4);
    const running: Promise<void>[] = [];
    for (const line of lines) {
      if (this.abort.signal.aborted) break;
      const channel = channelOf(snapshot, line);
      const count = started.get(channel) ?? 0;
      if (count >= linesPerTick) continue;
      started.set(channel, count + 1);
      running.push(this.withRoom(channel, inFlightPerChannel, () => this.runLine(row, line, snapshot)));
    }
    await Promise.all(running);
    // Cancelled meanwhile: the next look finishes the cancel.
    const now2 = this.services.now();
    if ((await countPendingLines(db, row.id)) === 0 && !this.abort.signal.aborted) {
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

  /** One line through the pipeline; its end written once its charge settled (or a retry scheduled). Never throws. */
  private async runLine(row: BatchRow, line: BatchLineRow, snapshot: Snapshot): Promise<void> {
    const { db } = this.services;
    const requestId = `${row.id}:${line.line}`;
    const envelope: Envelope = row.object === 'message_batch' ? 'anthropic' : 'openai';
    let call: LineCall | undefined;
    const started = Date.now();
    let endpointName = row.endpoint;
    try {
      const endpoint = batchEndpoint(snapshot.config, row.endpoint, 'endpoint');
      endpointName = endpoint.name;
      const batchCharge = chargeOf(row);
      const services: PipelineDeps = { ...this.services, meter: lineMeter(`${batchCharge.id}:${line.line}`, batchCharge.reservedAt ?? Date.now(), this.services.settleEntry, { settled: (entry) => void (call!.entry = entry) }) };
      delete (services as { tracing?: unknown }).tracing;
      const body = JSON.parse(line.body) as Record<string, unknown>;
      call = new LineCall({
        services,
        config: batchPricedConfig(snapshot.config),
        upstreams: snapshot.upstreams,
        auth: authOf(row),
        dialect: endpoint.pipeline!.dialect!,
        body,
        bodyBytes: Buffer.byteLength(line.body),
        requestId,
        log: this.services.log.child({ batch: row.id, line: line.line }),
        baseUrl: '',
        signal: this.abort.signal,
      });
      await runCall(call, lineFlow(endpoint));
      const answer = call.answer ?? { status: 500, body: errorBody(new GatewayError('no_answer', 500, 'api_error', 'the line ended without an answer'), envelope) };
      const costMicros = Number(call.entry?.cost_micros ?? 0);
      await finishLine(db, row.id, line.line, { status: answer.status < 300 ? 'succeeded' : 'failed', result: JSON.stringify({ status_code: answer.status, request_id: requestId, body: answer.body } satisfies LineResult), costMicros });
      this.logLine(row, { endpoint: endpointName, requestId, startedMs: started, status: answer.status, entry: call.entry, error: undefined, asked: body.model });
    } catch (err) {
      if (this.abort.signal.aborted) return;
      const error = err instanceof GatewayError ? err : new GatewayError('internal_error', 500, 'api_error', 'the gateway failed on this request', {}, false);
      if (error.statusCode >= 500 && !(err instanceof GatewayError)) this.services.log.error({ err, batch: row.id, line: line.line }, 'a batch line failed in the gateway');
      const charged = call?.entry !== undefined;
      const status = error.upstreamStatus;
      const retried = !charged && isUpstreamTrouble(err) && (status === undefined || status >= 500 || RETRIED.has(status));
      if (retried && line.attempts + 1 < this.options.maxAttempts) {
        await retryLine(db, row.id, line.line, line.attempts + 1, this.services.now() + RETRY_FIRST_MS * 2 ** line.attempts).catch(() => undefined);
        return;
      }
      const costMicros = Number(call?.entry?.cost_micros ?? 0);
      const result: LineResult = { status_code: error.statusIn(envelope), request_id: requestId, body: errorBody(error, envelope) };
      await finishLine(db, row.id, line.line, { status: 'failed', result: JSON.stringify(result), costMicros }).catch((e: unknown) => this.services.log.error({ err: e, batch: row.id }, 'a batch line could not be written; it runs again'));
      this.logLine(row, { endpoint: endpointName, requestId, startedMs: started, status: result.status_code!, entry: call?.entry, error, asked: call?.body.model });
    }
  }

  /** The request-log row of a line that ended (src/batches/line-log.ts). */
  private logLine(batch: BatchRow, end: LineEnd): void {
    const log = this.services.requestLogs;
    if (!log?.enabled) return;
    void log.append(lineLogRow(batch, end));
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

function chargeOf(row: BatchRow): ChargeRef {
  return JSON.parse(row.charge) as ChargeRef;
}

/** The key that made the batch, as its lines run: its scopes were checked at creation, its caps by the batch's reservation. */
function authOf(row: BatchRow): AuthContext {
  return { keyId: row.key_id, workspaceId: row.workspace_id, scopes: [], spendCapMicros: null };
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
