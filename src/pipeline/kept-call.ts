// A call with no client: the same stages as a client's request (translation, billing, logs need nothing new), its answer
// kept rather than sent. A batch line is one (src/batches/line-call.ts); so is the call a guardrail makes to a model of
// the catalogue (src/flows/internal.ts). It cannot stream.
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthContext } from '../auth/authenticate.js';
import type { SettleObserver } from '../billing/charge.js';
import { ValidationError } from '../base/errors.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { Upstreams } from '../engine/upstream.js';
import { encodedTextOf } from '../http/json-text.js';
import type { LedgerEntry } from '../store/usage-ledger.js';
import type { Call, CallLog, ClientStream } from './call.js';
import { CallCore } from './core.js';
import type { PipelineDeps } from './deps.js';
import type { FormPart } from './form.js';

/** What the call answered: the status and the document (a pass-through's own JSON text parsed back). */
export interface KeptAnswer {
  status: number;
  body: unknown;
}

export interface KeptCallOptions {
  services: PipelineDeps;
  config: LoadedConfig;
  upstreams: Upstreams;
  auth: AuthContext;
  dialect: string;
  body: Record<string, unknown>;
  bodyBytes: number;
  requestId: string;
  log: CallLog;
  baseUrl: string;
  /** Ends the call's upstream work (the runner stopping, a guardrail's deadline). */
  signal?: AbortSignal;
}

export class KeptCall extends CallCore implements Call {
  readonly services: PipelineDeps;
  readonly auth: AuthContext;
  readonly dialect: string;
  readonly body: Record<string, unknown>;
  readonly bodyBytes: number;
  readonly requestId: string;
  readonly log: CallLog;
  readonly headers: IncomingHttpHeaders = {};
  readonly carrier = {};
  answer?: KeptAnswer;
  /** What the call's charge settled for (its cost), once it did. */
  entry?: LedgerEntry;
  private readonly gatewayUrl: string;
  private readonly parent?: AbortSignal;

  constructor(options: KeptCallOptions) {
    super(options.config, options.upstreams);
    this.services = options.services;
    this.auth = options.auth;
    this.dialect = options.dialect;
    this.body = options.body;
    this.bodyBytes = options.bodyBytes;
    this.requestId = options.requestId;
    this.log = options.log;
    this.gatewayUrl = options.baseUrl;
    this.parent = options.signal;
    if (this.parent?.aborted) this.abort.abort(this.parent.reason);
    else this.parent?.addEventListener('abort', this.onParent);
  }

  private readonly onParent = (): void => this.abort.abort(this.parent?.reason);

  get settlements(): SettleObserver {
    return { settled: (entry) => void (this.entry = entry) };
  }

  parts(): AsyncIterable<FormPart> | undefined {
    return undefined;
  }

  baseUrl(): string {
    return this.gatewayUrl;
  }

  header(): void {}

  respond(answer: unknown, status = 200): void {
    if (this.answer) return;
    const text = encodedTextOf(answer);
    this.answer = { status, body: text === undefined ? answer : JSON.parse(text) };
  }

  openStream(): ClientStream {
    throw new ValidationError('this call cannot stream; drop "stream" from its body', 'stream');
  }

  protected override ended(): void {
    this.parent?.removeEventListener('abort', this.onParent);
  }
}
