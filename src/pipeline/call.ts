// One billed client request as the pipeline's stages see it, whatever carried it: who asked, what they sent, whether they
// are still there, and where the answer goes. The HTTP adapter (http-adapter.ts) binds it to fastify; nothing here does.
import type { IncomingHttpHeaders } from 'node:http';
import type { Writable } from 'node:stream';
import type { BaseLogger } from 'pino';
import type { AuthContext } from '../auth/authenticate.js';
import type { SettleObserver } from '../billing/charge.js';
import type { PipelineDeps } from './deps.js';
import type { UpstreamScope } from './core.js';
import type { FormPart } from './form.js';
import type { StreamMapper } from '../engine/translator.js';

export type { UpstreamScope } from './core.js';

/** Where an event stream's events are written (the client's response body). */
export type ClientStream = Writable;

/** The logger of a call: its request's, with the request id bound. */
export type CallLog = Pick<BaseLogger, 'error' | 'warn' | 'info' | 'debug'>;

export interface Call extends UpstreamScope {
  services: PipelineDeps;
  auth: AuthContext;
  /** The client dialect the endpoint speaks (openai-chat, anthropic-messages, evaluate, tasks, ...). */
  readonly dialect: string;
  /** The endpoint family, as its catalogue entry's `pipeline.operation` names it (chat, responses, embeddings, ...); absent for internal calls. */
  readonly operation?: string;
  /** The JSON body; empty for a multipart request, whose dialect's read stage returns the form it read. */
  readonly body: Record<string, unknown>;
  /** Size of the whole request body: every byte counts toward the input estimate. */
  readonly bodyBytes: number;
  readonly requestId: string;
  readonly log: CallLog;
  /** The client's headers (a pass-through forwards the ones its protocol names). */
  readonly headers: IncomingHttpHeaders;
  /** True once the client hung up (as opposed to the deadline passing). */
  readonly clientGone: boolean;
  /** What the transport's own hooks know this request by (tracing finds its span there). */
  readonly carrier: object;
  /** The parts of a multipart request, each one named; undefined when the request is not multipart. */
  parts(): AsyncIterable<FormPart> | undefined;
  /** The gateway's address as this client reached it: the signed links of the answer point there. */
  baseUrl(): string;
  /** Keeps something (bytes held against the in-flight budget) until the answer is done, then calls `release`. */
  holdUntilDone(release: () => void): void;
  /** Sets a header on the answer, whatever it turns out to be (JSON, an event stream or an error). */
  header(name: string, value: string): void;
  /** Sends the answer (a JSON document, or a pass-through's own JSON text) with `status`, unless one was sent. */
  respond(answer: unknown, status?: number): void;
  /** Starts an event stream: the head goes out (at once when `flush`), the events follow on the stream returned. */
  openStream(head: Record<string, string>, flush: boolean): ClientStream;
  /** Told what the call's charges settled for (its request-log row); none for a call that is not logged. */
  readonly settlements?: SettleObserver;
  /** Notes that the first event of a streamed answer went out (the request log's time to first token). */
  firstEventSent?(): void;
  /** Set by the guardrails stage when the call's guardrails watch a stream: wraps the stream's mapper (relayStream). */
  guardStream?: (mapper: StreamMapper) => StreamMapper;
  /**
   * Set by the guardrails stage when output guardrails call out (moderation, http): the answer as it may go out (checked,
   * redacted or ended as filtered), awaited before respond (which runs the answer's other checks).
   */
  checkAnswer?: (answer: unknown) => Promise<unknown>;
  /**
   * Set by the guardrails stage for a flow whose answer is the client's input (a transcript): the input guardrails over
   * `node`'s texts, redacting in place (true when one changed); throws the 400 `guardrail_blocked` when one blocks.
   */
  checkInputAnswer?: (node: Record<string, unknown>) => boolean | Promise<boolean>;
  /** Set by the guardrails stage when the answer gets back values its request had redacted: it is this client's alone, never cached. */
  personalAnswer?: boolean;
  /**
   * Set when the body was through the input guardrails already and is what they left (a batch line read back from its
   * vendor's batch: checked when it was sent there): the stage checks only the answer.
   */
  inputChecked?: boolean;
  /** Stops listening for the client, stops the deadline and lets go of the snapshot; once, whoever calls it first. */
  dispose(): void;
  /** Told of the answer as it goes out (the response cache keeps it); absent unless a stage set one. */
  answerTap?: AnswerTap;
}

/** What sees a call's answer go out: a JSON answer's text, or the event stream's head and body. */
export interface AnswerTap {
  /** `bytes`: the text's UTF-8 length, when the writer counted it already. */
  answered(text: string, status: number, bytes?: number): void;
  streaming(res: ClientStream, head: Record<string, string>): void;
}
