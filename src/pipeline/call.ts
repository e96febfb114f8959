// One billed client request as the pipeline's stages see it: who asked, what they sent, and whether they are still there.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthContext } from '../auth/authenticate.js';
import type { PipelineDeps } from './deps.js';
import type { LoadedConfig } from '../compile/loaded-config.js';
import type { Upstreams } from '../engine/upstream.js';
import { jsonBytes } from '../billing/estimate.js';
import type { ImageForm } from './form.js';
import type { Runtime } from '../runtime.js';

type RuntimeHold = ReturnType<Runtime['hold']>;

export interface Call {
  services: PipelineDeps;
  /** The runtime snapshot this request began on: it keeps it to the end, whatever a reload does meanwhile. */
  config: LoadedConfig;
  upstreams: Upstreams;
  req: FastifyRequest;
  reply: FastifyReply;
  auth: AuthContext;
  /** The client dialect the endpoint speaks (openai-chat, anthropic-messages, evaluate, ...). */
  dialect: string;
  body: Record<string, unknown>;
  /** A multipart request's form, once read (image edits). */
  form?: ImageForm;
  /** Size of the whole request body: every byte counts toward the input estimate. */
  bodyBytes: number;
  /** Aborts when the client hangs up before its answer is complete, or when the call's deadline passes. */
  signal: AbortSignal;
  /** True once the client hung up (as opposed to the deadline passing). */
  readonly clientGone: boolean;
  /** True once the deadline passed. */
  readonly timedOut: boolean;
  /** Starts the overall deadline of the upstream work, once: later calls keep the first deadline. */
  startDeadline(ms: number): void;
  /** Stops listening for the client hanging up, stops the deadline and lets go of the snapshot; once, whoever calls it first. */
  dispose(): void;
}

/** One object per request, its methods shared: the hot path allocates a call and its abort controller, no closures. */
class PipelineCall implements Call {
  readonly config: LoadedConfig;
  readonly upstreams: Upstreams;
  readonly auth: AuthContext;
  readonly body: Record<string, unknown>;
  readonly bodyBytes: number;
  form?: ImageForm;
  clientGone = false;
  timedOut = false;
  private readonly abort = new AbortController();
  private readonly held: RuntimeHold;
  private timer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(
    readonly services: PipelineDeps,
    readonly req: FastifyRequest,
    readonly reply: FastifyReply,
    readonly dialect: string,
  ) {
    this.body = (req.body ?? {}) as Record<string, unknown>;
    const declared = Number(req.headers['content-length']);
    this.bodyBytes = Number.isSafeInteger(declared) && declared > 0 ? declared : jsonBytes(this.body);
    this.auth = req.auth!;
    this.held = services.runtime.hold();
    this.config = this.held.snapshot.config;
    this.upstreams = this.held.snapshot.upstreams;
    (reply.raw as CallSocketResponse)[callOf] = this;
    reply.raw.on('close', clientClosed);
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** The client's connection closed: before the answer was complete, that is a hang-up. */
  closed(): void {
    if (this.reply.raw.writableFinished) return;
    this.clientGone = true;
    this.abort.abort();
  }

  startDeadline(ms: number): void {
    this.timer ??= setTimeout(deadlinePassed, ms, this);
  }

  /** Called by the deadline's timer. */
  expire(): void {
    this.timedOut = !this.clientGone;
    this.abort.abort();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.reply.raw.off('close', clientClosed);
    clearTimeout(this.timer);
    this.held.release();
  }
}

/** The response a call listens on: one shared listener finds its call here instead of a closure per request. */
const callOf = Symbol('call');
type CallSocketResponse = FastifyReply['raw'] & { [callOf]?: PipelineCall };

function clientClosed(this: CallSocketResponse): void {
  this[callOf]?.closed();
}

function deadlinePassed(call: PipelineCall): void {
  call.expire();
}

export function openCall(services: PipelineDeps, req: FastifyRequest, reply: FastifyReply, dialect: string): Call {
  return new PipelineCall(services, req, reply, dialect);
}
