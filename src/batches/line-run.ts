// One batch line as a call of the pipeline, run by the gateway (its request sent to the channel) or read back from a
// vendor batch (the vendor's answer handed to the same stages: src/batches/replay-upstreams.ts). Its end is written once
// its charge settled; a line the upstream could not serve is tried again at a later look, when it was sent here.
import type { AuthContext } from '../auth/authenticate.js';
import { GatewayError, errorBody, type Envelope } from '../base/errors.js';
import type { ChargeRef } from '../billing/charge.js';
import type { EndpointConfig } from '../config/types.js';
import type { Snapshot } from '../engine/runtime.js';
import type { Upstreams } from '../engine/upstream.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import { runCall } from '../pipeline/run.js';
import { isUpstreamTrouble } from '../tasks/faults.js';
import type { BatchRunnerDeps } from './deps.js';
import { lineLogRow, type LineEnd } from './line-log.js';
import { batchPricedConfig, LineCall, lineMeter } from './line-call.js';
import { batchEndpoint, lineFlow } from './plan.js';
import type { LineResult } from './results.js';
import { finishLine, retryLine, type BatchLineRow, type BatchRow } from './store.js';

/** Upstream answers a line is tried again on (and a gateway that could not reach the upstream). */
const RETRIED = new Set([408, 425, 429]);
/** The wait before a line's second try, doubling for each try after. */
const RETRY_FIRST_MS = 1000;

/** What running lines takes: the runner's services, its stop, and the tries a line gets. */
export interface LineRunner {
  services: BatchRunnerDeps;
  signal: AbortSignal;
  maxAttempts: number;
}

export function chargeOf(row: BatchRow): ChargeRef {
  return JSON.parse(row.charge) as ChargeRef;
}

/** The key that made the batch, as its lines run: its scopes were checked at creation, its caps by the batch's reservation. */
export function authOf(row: BatchRow): AuthContext {
  return { keyId: row.key_id, workspaceId: row.workspace_id, scopes: [], spendCapMicros: null };
}

const envelopeOf = (row: BatchRow): Envelope => (row.object === 'message_batch' ? 'anthropic' : 'openai');

/** The line as a call: billed under its fixed charge id at batch prices, sent through `upstreams` (the snapshot's, or a replay). */
export function lineCallOf(runner: LineRunner, row: BatchRow, line: BatchLineRow, snapshot: Snapshot, endpoint: EndpointConfig, upstreams: Upstreams): LineCall {
  const batchCharge = chargeOf(row);
  let call: LineCall | undefined = undefined;
  const services: PipelineDeps = { ...runner.services, meter: lineMeter(`${batchCharge.id}:${line.line}`, batchCharge.reservedAt ?? Date.now(), runner.services.settleEntry, { settled: (entry) => void (call!.entry = entry) }) };
  delete (services as { tracing?: unknown }).tracing;
  call = new LineCall({
    services,
    config: batchPricedConfig(snapshot.config),
    upstreams,
    auth: authOf(row),
    dialect: endpoint.pipeline!.dialect!,
    body: JSON.parse(line.body) as Record<string, unknown>,
    bodyBytes: Buffer.byteLength(line.body),
    requestId: `${row.id}:${line.line}`,
    log: runner.services.log.child({ batch: row.id, line: line.line }),
    baseUrl: '',
    signal: runner.signal,
  });
  return call;
}

/**
 * Runs one line through the pipeline and writes its end, or schedules its next try. Never throws. `replay` is a vendor
 * batch's answer read back: never tried again (the vendor ran it), an error answer going to the error file unbilled.
 */
export async function runLine(runner: LineRunner, row: BatchRow, line: BatchLineRow, snapshot: Snapshot, replay?: Upstreams): Promise<void> {
  const { db } = runner.services;
  const requestId = `${row.id}:${line.line}`;
  const started = Date.now();
  let call: LineCall | undefined;
  let endpointName = row.endpoint;
  try {
    const endpoint = batchEndpoint(snapshot.config, row.endpoint, 'endpoint');
    endpointName = endpoint.name;
    call = lineCallOf(runner, row, line, snapshot, endpoint, replay ?? snapshot.upstreams);
    // A vendor's answer: the line's input guardrails ran when it was sent there (src/batches/vendor-lines.ts), once.
    if (replay) call.inputChecked = true;
    await runCall(call, lineFlow(endpoint));
    const answer = call.answer ?? { status: 500, body: errorBody(new GatewayError('no_answer', 500, 'api_error', 'the line ended without an answer'), envelopeOf(row)) };
    const costMicros = Number(call.entry?.cost_micros ?? 0);
    await finishLine(db, row.id, line.line, { status: answer.status < 300 ? 'succeeded' : 'failed', result: JSON.stringify({ status_code: answer.status, request_id: requestId, body: answer.body } satisfies LineResult), costMicros });
    logLine(runner, row, { endpoint: endpointName, requestId, startedMs: started, status: answer.status, entry: call.entry, error: undefined, asked: call.body.model });
  } catch (err) {
    if (runner.signal.aborted) return;
    await lineFailed(runner, row, line, { err, call, endpointName, started, retries: !replay });
  }
}

/** A line that threw: tried again later when the upstream could not serve it (and it was sent here), else written failed. */
async function lineFailed(runner: LineRunner, row: BatchRow, line: BatchLineRow, how: { err: unknown; call: LineCall | undefined; endpointName: string; started: number; retries: boolean }): Promise<void> {
  const { err, call } = how;
  const { db, log } = runner.services;
  const error = err instanceof GatewayError ? err : new GatewayError('internal_error', 500, 'api_error', 'the gateway failed on this request', {}, false);
  if (error.statusCode >= 500 && !(err instanceof GatewayError)) log.error({ err, batch: row.id, line: line.line }, 'a batch line failed in the gateway');
  const charged = call?.entry !== undefined;
  const status = error.upstreamStatus;
  const retried = how.retries && !charged && isUpstreamTrouble(err) && (status === undefined || status >= 500 || RETRIED.has(status));
  if (retried && line.attempts + 1 < runner.maxAttempts) {
    await retryLine(db, row.id, line.line, line.attempts + 1, runner.services.now() + RETRY_FIRST_MS * 2 ** line.attempts).catch(() => undefined);
    return;
  }
  await writeLineError(runner, row, line, error, { call, endpointName: how.endpointName, started: how.started });
}

/** Writes a line failed with `error` (in the batch's dialect), with what its charge settled if anything, and logs it. */
export async function writeLineError(runner: LineRunner, row: BatchRow, line: BatchLineRow, error: GatewayError, how: { call?: LineCall; endpointName: string; started: number }): Promise<void> {
  const envelope = envelopeOf(row);
  const requestId = `${row.id}:${line.line}`;
  const costMicros = Number(how.call?.entry?.cost_micros ?? 0);
  const result: LineResult = { status_code: error.statusIn(envelope), request_id: requestId, body: errorBody(error, envelope) };
  await finishLine(runner.services.db, row.id, line.line, { status: 'failed', result: JSON.stringify(result), costMicros }).catch((e: unknown) => runner.services.log.error({ err: e, batch: row.id }, 'a batch line could not be written; it runs again'));
  logLine(runner, row, { endpoint: how.endpointName, requestId, startedMs: how.started, status: result.status_code!, entry: how.call?.entry, error, asked: how.call?.body.model ?? modelOf(line) });
}

const modelOf = (line: BatchLineRow): unknown => {
  try {
    return (JSON.parse(line.body) as { model?: unknown }).model;
  } catch {
    return undefined;
  }
};

/** The request-log row of a line that ended (src/batches/line-log.ts). */
function logLine(runner: LineRunner, batch: BatchRow, end: LineEnd): void {
  const log = runner.services.requestLogs;
  if (!log?.enabled) return;
  void log.append(lineLogRow(batch, end));
}
