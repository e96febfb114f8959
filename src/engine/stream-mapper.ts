// How a stream's events cross from an upstream's dialect to the client's: what a translator makes and a guardrail wraps.
import type { GatewayError } from '../base/errors.js';
import type { SseEvent } from './sse.js';

export interface StreamMapper {
  /** One upstream event in (with its data parsed on demand, once), zero or more client events out. */
  push(event: SseEvent, parse: () => unknown): SseEvent[];
  /** The upstream ended cleanly: any closing events. */
  end(): SseEvent[];
  /** The upstream failed mid-stream: the events that tell the client. */
  fail(error: GatewayError): SseEvent[];
  /** Work the events pushed so far started (recording what they hand the client), awaited before they are written. */
  drain?(): Promise<void> | undefined;
  /** Output tokens streamed so far, estimated: what a stream cut short before its final usage is charged for its output. */
  streamedOutputTokens?(): number;
}
