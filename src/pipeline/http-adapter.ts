// Binds the pipeline's transport-free call to fastify: the request's body, headers and multipart parts in, the answer or
// the event stream out, and the client hanging up (its response closing early) as the call's abort.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthContext } from '../auth/authenticate.js';
import { jsonBytes } from '../billing/estimate.js';
import type { RouteHandler } from '../http/route-handler.js';
import { publicBaseUrl } from '../files/index.js';
import { encodedTextOf } from '../http/json-text.js';
import { namedParts } from '../http/multipart-parts.js';
import type { SnapshotHold } from '../engine/runtime.js';
import type { AttemptRecord } from '../engine/upstream.js';
import type { AnswerTap, Call, CallLog, ClientStream } from './call.js';
import { CallCore } from './core.js';
import type { PipelineDeps } from './deps.js';
import type { Flow } from './flow.js';
import type { FormPart } from './form.js';
import { runCall } from './run.js';
import { recordOf, type RequestLogRecord } from '../request-logs/record.js';
import { responseTap, tapWrites } from '../request-logs/bodies.js';
import { requestLogsConfig } from '../request-logs/config.js';

/** One fastify request as a call; one object per request, its methods shared (no closures on the hot path). */
class HttpCall extends CallCore implements Call {
  readonly auth: AuthContext;
  readonly body: Record<string, unknown>;
  readonly bodyBytes: number;
  answerTap?: AnswerTap;
  /** The headers set through header(), for an event stream's head. */
  private headersSet?: Record<string, string>;

  constructor(
    readonly services: PipelineDeps,
    private readonly req: FastifyRequest,
    private readonly reply: FastifyReply,
    readonly dialect: string,
    readonly operation: string | undefined,
    private readonly snapshotHold: SnapshotHold = services.runtime.hold(),
  ) {
    super(snapshotHold.snapshot.config, snapshotHold.snapshot.upstreams);
    this.body = (req.body ?? {}) as Record<string, unknown>;
    const declared = Number(req.headers['content-length']);
    this.bodyBytes = Number.isSafeInteger(declared) && declared > 0 ? declared : jsonBytes(this.body);
    this.auth = req.auth!;
    (reply.raw as CallResponse)[callOf] = this;
    reply.raw.on('close', clientClosed);
  }

  get settlements(): RequestLogRecord {
    return recordOf(this.req);
  }

  attempted(attempt: AttemptRecord): void {
    recordOf(this.req).attempted(attempt);
  }

  firstEventSent(): void {
    const record = recordOf(this.req);
    record.ttftMs ??= Math.round(this.reply.elapsedTime);
  }

  get requestId(): string {
    return this.req.id;
  }

  get log(): CallLog {
    return this.req.log;
  }

  get headers(): IncomingHttpHeaders {
    return this.req.headers;
  }

  get carrier(): object {
    return this.req;
  }

  parts(): AsyncIterable<FormPart> | undefined {
    return this.req.isMultipart() ? (namedParts(this.req) as AsyncIterable<FormPart>) : undefined;
  }

  baseUrl(): string {
    return publicBaseUrl(this.services, this.req);
  }

  header(name: string, value: string): void {
    // On fastify's reply, which a JSON answer's head (writeJson) and an error's answer are written from, and kept for an
    // event stream's head (openStream). Not on node's response: a header set there makes writeHead merge two sets of
    // headers, name by name (checked again), several µs a request.
    this.reply.header(name, value);
    (this.headersSet ??= {})[name] = value;
  }

  respond(answer: unknown, status = 200): void {
    const reply = this.reply;
    if (reply.sent) return;
    if (status !== 200) reply.code(status);
    // A pass-through relays the upstream's own JSON text; an answer someone watches (the request log's capture, the
    // response cache) is serialised once, here, and that text is what goes out.
    const tap = responseTap(this.req, requestLogsConfig(this.config));
    const text = encodedTextOf(answer) ?? ((tap || this.answerTap) && typeof answer === 'object' && answer !== null ? JSON.stringify(answer) : undefined);
    // Capture on (requestLogs.captureBodies): the answer is kept, up to the cap, for the request-log row.
    if (text !== undefined) tap?.add(text);
    // JSON goes out on node's response (writeJson); anything else, or a tracing that reads answers, through fastify's send.
    const json = text ?? (typeof answer === 'object' && answer !== null ? JSON.stringify(answer) : undefined);
    let bytes: number | undefined;
    if (json === undefined || this.services.tracing?.readsAnswers) {
      if (text === undefined) reply.send(answer);
      else reply.header('content-type', 'application/json; charset=utf-8').send(text);
    } else {
      bytes = writeJson(reply, status, json);
    }
    // The response cache keeps the answer once it is written (its length as the head said it): the client never waits for the store.
    if (text !== undefined) this.answerTap?.answered(text, status, bytes);
  }

  openStream(head: Record<string, string>, flush: boolean): ClientStream {
    const res = this.reply.raw;
    this.reply.hijack();
    // The first write is the first event (the request log's time to first token); with capture on
    // (requestLogs.captureBodies) the stream's bytes are kept too, up to the cap, for the request-log row.
    const tap = responseTap(this.req, requestLogsConfig(this.config));
    if (tap) tapWrites(res, tap);
    this.answerTap?.streaming(res, head);
    // Last, around the others: at the first write it puts back the write it wrapped, theirs (put first, it dropped the
    // response cache's tap after a stream's first write).
    noteFirstWrite(res, this);
    res.writeHead(200, this.headersSet ? { ...this.headersSet, ...head } : head);
    if (flush) res.flushHeaders();
    return res;
  }

  /** The client's connection closed: before the answer was complete, that is a hang-up. */
  closed(): void {
    if (this.reply.raw.writableFinished) return;
    this.clientGone = true;
    this.abort.abort();
  }

  protected override ended(): void {
    // The listener stays on the response (which ends with the request) and finds no call: cheaper than taking it off,
    // which splices the response's listener array on every request.
    (this.reply.raw as CallResponse)[callOf] = undefined;
    this.snapshotHold.release();
  }
}

/**
 * A JSON answer written on node's response itself: the head is the headers the request's hooks set on the reply
 * (x-request-id, a rate limit's) and those set on the response, then the text in one end(); its UTF-8 length is
 * returned. fastify's send would run the route's onSend hooks (none here: only a tracing that reads answers adds one,
 * and then send is used), its serializer check and its header bookkeeping; its onResponse hooks (metrics, the request
 * log) still run, on the response's finish, as for a stream.
 */
function writeJson(reply: FastifyReply, status: number, text: string): number {
  const res = reply.raw;
  const head = reply.getHeaders() as Record<string, string | string[] | number>;
  const bytes = Buffer.byteLength(text);
  head['content-type'] = 'application/json; charset=utf-8';
  head['content-length'] = bytes;
  reply.hijack();
  res.writeHead(status, head);
  res.end(text);
  return bytes;
}

/** Calls `call.firstEventSent()` at the stream's first write, then writes as before. */
function noteFirstWrite(res: FastifyReply['raw'], call: HttpCall): void {
  const write = res.write;
  res.write = function (this: typeof res, ...args: Parameters<typeof write>) {
    res.write = write;
    call.firstEventSent();
    return write.apply(this, args);
  } as typeof write;
}

/** The response a call listens on: one shared listener finds its call here instead of a closure per request. */
const callOf = Symbol('call');
type CallResponse = FastifyReply['raw'] & { [callOf]?: HttpCall };

function clientClosed(this: CallResponse): void {
  this[callOf]?.closed();
}

/**
 * A route handler that runs its requests through the pipeline in `dialect`. Handlers hold no billing of their own. Not
 * async: runCall is the one async frame of a call, and ends the call itself (fastify waits for its promise, which
 * resolves once the answer is out or the stream relayed).
 */
export function httpPipeline(services: PipelineDeps, dialectName: string, dialect: Flow<any, any>, operation?: string): RouteHandler {
  return (req, reply) => runCall(new HttpCall(services, req, reply, dialectName, operation), dialect);
}
