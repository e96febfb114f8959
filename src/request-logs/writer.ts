// Writes request-log rows off the hot path: a row is made when its answer is done and handed to the spend store, which
// commits it in its next batch of settlements (SQLite: the same transaction; PostgreSQL: the same statement). Nothing
// waits for it; a row that cannot be written is counted and logged, never retried into the answer's way.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SpendStore } from '../billing/spend-store.js';
import type { EndpointConfig } from '../config/types.js';
import type { Db } from '../store/db.js';
import { requestLogColumns, type RequestLogValues } from '../store/request-log-table.js';
import { requestLogId } from './ids.js';
import { addToRequestLogCount } from './repository.js';
import { recordIfAny } from './record.js';
import { mayCapture } from './bodies.js';
import type { RequestLogsConfig } from './config.js';

/** What the writer reports, for /metrics. */
export interface RequestLogMeter {
  /** A batch of `rows` committed `lagSeconds` after it was handed over. */
  written(rows: number, lagSeconds: number): void;
  dropped(): void;
}

export interface RequestLogWriterDeps {
  spend: SpendStore;
  db: Db;
  meter: RequestLogMeter;
  log: { warn(obj: object, msg: string): void };
  /** The trace id of a request's span, when tracing is on. */
  traceId?: (req: FastifyRequest) => string | undefined;
  now?: () => number;
  /** The requestLogs section of the current config. */
  config(): RequestLogsConfig;
  /** Stores a request's captured bodies (bodies.ts) and returns their blob key; present when capture may be on. */
  captureBodies?: (req: FastifyRequest, rowId: string) => Promise<string | null>;
  /** Stores a call's captured arguments and result (bodies.ts captureCallBodies); present when capture may be on. */
  captureCall?: (workspaceId: string, rowId: string, call: CapturedCall) => Promise<string | null>;
}

/** What a call carried, for capture: its request and its answer as values, and the key it presented (redacted). */
export interface CapturedCall {
  method: string;
  url: string;
  request: unknown;
  response: unknown;
  /** Values to redact wherever they appear (the key presented, a user's own token). */
  secrets?: string[];
}

/** One call that is not an HTTP request of its own (an MCP tool call): its row's fields. */
export interface CallRow {
  workspaceId: string;
  keyId: string;
  /** Unix milliseconds the call began. */
  startedAt: number;
  latencyMs: number;
  /** The route column (`mcp`), the method column (`tools/call`), the model column (the tool) and the channel column (its server). */
  route: string;
  method: string;
  model: string;
  channel: string;
  status: number;
  errorType: string | null;
  errorCode: string | null;
  units: number;
  costMicros: number;
  currency: string;
  requestId: string;
}

const BODY_KEY = requestLogColumns.indexOf('body_key');

/** A row's values in requestLogColumns order from its columns by name; a column not named is null. */
function valuesOf(columns: Partial<Record<(typeof requestLogColumns)[number], unknown>>): RequestLogValues {
  return requestLogColumns.map((column) => columns[column] ?? null);
}

const text = (value: unknown, max: number) => (typeof value === 'string' ? value.slice(0, max) : '');

export class RequestLogWriter {
  private readonly now: () => number;

  constructor(private readonly deps: RequestLogWriterDeps) {
    this.now = deps.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.deps.config().enabled;
  }

  /** Writes the row of an answered API request (its bodies first, when they are captured); never throws. */
  answered(req: FastifyRequest, reply: FastifyReply, endpoint: EndpointConfig): void {
    const row = this.rowOf(req, reply, endpoint);
    const capture = this.deps.captureBodies;
    // Capture off for everyone (the default): no promise of its own, the row goes with this turn's.
    if (!capture || !mayCapture(this.deps.config())) {
      void this.append(row);
      return;
    }
    this.appendCaptured(row, capture(req, String(row[0])), 'the bodies of a request');
  }

  /** Appends a row once its captured bodies are stored (their key in it), or without them when they could not be. */
  private appendCaptured(row: RequestLogValues, stored: Promise<string | null>, what: string): void {
    stored.then(
      (key) => {
        row[BODY_KEY] = key;
        return this.append(row);
      },
      (err: unknown) => {
        this.deps.log.warn({ err }, `${what} could not be stored; its row is written without them`);
        return this.append(row);
      },
    );
  }

  /** Writes the row of one call (its arguments and result first, when they are captured); never throws. */
  called(call: CallRow, captured?: CapturedCall): void {
    // By name, each column this call has; every other column (the ones a later migration adds too) is null.
    const row = valuesOf({
      id: requestLogId(call.startedAt), workspace_id: call.workspaceId, key_id: call.keyId, created_at: Math.round(call.startedAt),
      route: call.route, method: call.method, model: call.model, channel: call.channel, status: call.status, failed: call.status >= 400 ? 1 : 0,
      error_type: call.errorType, error_code: call.errorCode, latency_ms: Math.round(call.latencyMs), input_tokens: 0, output_tokens: 0,
      cached_input_tokens: 0, units: call.units, cost_micros: call.costMicros, currency: call.currency, request_id: call.requestId,
    });
    const capture = this.deps.captureCall;
    if (!capture || !captured || !mayCapture(this.deps.config())) {
      void this.append(row);
      return;
    }
    this.appendCaptured(row, capture(call.workspaceId, String(row[0]), captured), 'the arguments and result of a call');
  }

  /** The row of an answered request: what its record collected, what the reply says. */
  rowOf(req: FastifyRequest, reply: FastifyReply, endpoint: EndpointConfig, bodyKey: string | null = null): RequestLogValues {
    const record = recordIfAny(req);
    const auth = req.auth!;
    const latency = reply.elapsedTime;
    const start = this.now() - latency;
    const status = reply.statusCode;
    const asked = (req.body as { model?: unknown } | undefined)?.model;
    // The values in requestLogColumns order.
    return [
      requestLogId(start),
      auth.workspaceId,
      auth.keyId,
      Math.round(start),
      endpoint.name,
      req.method,
      record?.model || text(asked, 128),
      record?.channel ?? '',
      status,
      status >= 400 ? 1 : 0,
      record?.errorType ?? null,
      record?.errorCode ?? null,
      Math.round(latency),
      record?.ttftMs ?? null,
      record?.inputTokens ?? 0,
      record?.outputTokens ?? 0,
      record?.cachedInputTokens ?? 0,
      record?.units ?? 0,
      record?.costMicros ?? 0,
      record?.currency ?? '',
      req.id,
      this.deps.traceId?.(req) ?? null,
      bodyKey,
      record?.attemptsJson() ?? null,
      record?.cache ?? null,
      record?.guardrailsJson() ?? null,
    ];
  }

  /** Rows of this turn of the event loop, handed over together at its end. */
  private pending: RequestLogValues[] = [];
  private handing: Promise<void> | undefined;

  /** Queues a row for the next batch, handed over at the end of this turn; resolves once handed over. */
  append(row: RequestLogValues): Promise<void> {
    this.pending.push(row);
    return (this.handing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => void this.handOver()));
  }

  /** Resolves once every row queued so far has committed (or failed): read before a list, so it shows every answer. */
  async commitQueued(): Promise<void> {
    await this.handing;
    await this.deps.spend.commitQueued?.();
  }

  private handOver(): Promise<void> {
    const rows = this.pending;
    this.pending = [];
    this.handing = undefined;
    const handed = this.now();
    const { spend, meter, log } = this.deps;
    const written = spend.appendLogs ? spend.appendLogs(rows) : this.insertAlone(rows);
    return written.then(
      () => {
        meter.written(rows.length, (this.now() - handed) / 1000);
      },
      (err: unknown) => {
        for (let i = 0; i < rows.length; i++) meter.dropped();
        log.warn({ err, rows: rows.length }, 'request-log rows could not be written');
      },
    );
  }

  /** A spend store without batches of its own (tests' stand-ins): one insert of the rows, and their counts. */
  private async insertAlone(rows: RequestLogValues[]): Promise<void> {
    const values = rows.map((row) => Object.fromEntries(requestLogColumns.map((column, i) => [column, row[i]])));
    await this.deps.db.transaction().execute(async (trx) => {
      const inserted = await trx.insertInto('request_logs').values(values as never).onConflict((oc) => oc.doNothing()).returning('workspace_id').execute();
      const counts = new Map<string, number>();
      for (const { workspace_id } of inserted) counts.set(workspace_id, (counts.get(workspace_id) ?? 0) + 1);
      for (const [workspaceId, rowsAdded] of counts) await addToRequestLogCount(trx, workspaceId, rowsAdded);
    });
  }
}
