// Stream failover after the first byte for the chat flow (docs/routing.md, "Stream failover"): on a route with
// failover.streamAfterFirstByte, a text stream that breaks is continued on the route's next target, which gets the
// client's request with the text already streamed as a final assistant turn, and whose events are spliced into the same
// client stream (engine/routing/stream-splice.ts). Each attempt is billed what it used, on one ledger row.
import type { Charge } from '../billing/meter.js';
import { clientOutputBound, tokensForBytes } from '../billing/estimate.js';
import type { ModelRoute } from '../config/types.js';
import { continuationBody, notContinuable, passthroughMode, type ContinuationMode } from '../engine/routing/continuation.js';
import { continuing, recording, spliceDialects, transcriptFor, type PriorUsage, type StreamTranscript } from '../engine/routing/stream-splice.js';
import type { ChatTranslator } from '../engine/translator.js';
import { isPassthrough } from '../engine/translators.js';
import type { Call } from '../pipeline/call.js';
import { expectEventStream, readFailure } from '../pipeline/decode.js';
import { forwardedHeaders, send, type Outgoing, type Sent } from '../pipeline/send.js';
import { settleAttempts } from '../pipeline/settle.js';
import type { StreamAttempt, StreamFailover } from '../pipeline/stream.js';
import { keepingItems } from '../pipeline/provider-ids.js';
import { usageReaderFor } from '../pipeline/usage.js';
import type { StreamMapper } from '../engine/translator.js';
import { ChatContext, operationFor, type ChatPlan } from './chat-context.js';

/** The stream failover of a routed chat call whose route turns it on, for a client dialect whose stream can be spliced. */
export function chatStreamFailover(call: Call, plan: ChatPlan, sent: Sent, charge: Charge): StreamFailover | undefined {
  if (!sent.route.via || !spliceDialects.has(call.dialect)) return undefined;
  const setting = call.config.routes.get(call.body.model as string)?.streamFailover;
  return setting && new ChatStreamFailover(call, plan, charge, setting.idleMs, sent.route);
}

/** What one attempt streamed and was sent, fixed when it broke (the last attempt's is read when it ends). */
interface AttemptPart {
  streamedOutput: number;
  inputEstimate: number;
}

class ChatStreamFailover implements StreamFailover {
  private readonly transcript: StreamTranscript;
  private readonly tried: Set<ModelRoute>;
  private readonly parts = new Map<StreamAttempt, AttemptPart>();
  /** The transcript's length when the current attempt started: what it streamed is the text after it. */
  private mark = 0;
  /** Tokens the attempts before the current one used, added to the client's final usage. */
  private prior: PriorUsage = { inputTokens: 0, outputTokens: 0 };
  private inputEstimate: number;

  constructor(
    private readonly call: Call,
    private readonly plan: ChatPlan,
    private readonly charge: Charge,
    readonly idleMs: number,
    first: ModelRoute,
  ) {
    this.transcript = transcriptFor(call.dialect, notContinuable(call.dialect, call.body));
    this.tried = new Set([first]);
    this.inputEstimate = tokensForBytes(call.bodyBytes);
  }

  wrap(mapper: StreamMapper): StreamMapper {
    return recording(mapper, this.transcript);
  }

  /** Output tokens `mapper`'s attempt streamed: its own estimate, else the text it added. */
  private streamed(mapper: StreamMapper): number {
    return mapper.streamedOutputTokens?.() ?? tokensForBytes(Buffer.byteLength(this.transcript.text.slice(this.mark)));
  }

  async next(err: unknown, attempt: StreamAttempt): Promise<StreamAttempt | undefined> {
    const { call, plan, transcript } = this;
    const remaining = plan.routes.filter((r) => !this.tried.has(r));
    const channel = attempt.sent.route.channel.id;
    const blocked = transcript.blocked();
    if (blocked || call.timedOut || !remaining.length) {
      call.log.warn({ err, channel, reason: blocked ?? (call.timedOut ? 'deadline' : 'no target left') }, 'a broken stream is not continued');
      return undefined;
    }
    // Usage the broken attempt reported (an Anthropic message_start's input), else estimated; a malformed count stops here.
    const counts = attempt.usage.counts();
    const part = { streamedOutput: Math.max(counts?.outputTokens ?? 0, this.streamed(attempt.mapper)), inputEstimate: this.inputEstimate };
    this.parts.set(attempt, part);
    this.prior = { inputTokens: this.prior.inputTokens + (counts?.inputTokens || part.inputEstimate), outputTokens: this.prior.outputTokens + part.streamedOutput };
    if (attempt.sent.attempt) attempt.sent.attempt.broken = (readFailure(err, attempt.sent) as { code?: string }).code ?? 'upstream_error';
    call.log.warn({ err, channel, streamedChars: transcript.text.length }, 'a stream broke after its first byte; continuing it on the next target');
    let mapped: { ctx: ChatContext; body: Record<string, unknown>; trimmed: boolean } | undefined;
    const sent = await send(call, remaining, (route) => {
      const continued = this.continuation(route, plan.translators[plan.routes.indexOf(route)]);
      mapped = continued;
      return continued.outgoing;
    });
    this.tried.add(sent.route);
    await expectEventStream(sent);
    const translator = plan.translators[plan.routes.indexOf(sent.route)];
    this.mark = transcript.text.length;
    this.inputEstimate = tokensForBytes(call.bodyBytes + Buffer.byteLength(transcript.text));
    const usage = usageReaderFor(call.config, sent, sent.operationName, 1, undefined, { bytes: call.bodyBytes + Buffer.byteLength(transcript.text) + 1024, outputTokens: clientOutputBound(call.body) });
    mapped!.ctx.reader = usage;
    const stream = translator.stream(mapped!.ctx, mapped!.body);
    // A translated Responses answer's items are kept as the client sees them: under its response id, the text whole.
    const spliced = continuing(stream, transcript, this.prior, mapped!.trimmed);
    const mapper = isPassthrough(translator) ? spliced : keepingItems(call, spliced);
    return { sent, mapper, usage };
  }

  /** The continuation request for `route`: a prefill where it takes one (a translation that refuses it: the instruction). */
  private continuation(route: ModelRoute, translator: ChatTranslator): { ctx: ChatContext; body: Record<string, unknown>; trimmed: boolean; outgoing: Outgoing } {
    const { call } = this;
    const passthrough = isPassthrough(translator);
    const modes: ContinuationMode[] = passthrough ? [passthroughMode(call.dialect, route, call.body)] : ['prefill', 'instruction'];
    const streamedTokens = this.prior.outputTokens;
    for (let i = 0; ; i++) {
      const { body, trimmed } = continuationBody(call.dialect, call.body, this.transcript.text, modes[i], streamedTokens, passthrough && call.dialect === 'openai-chat');
      const ctx = new ChatContext(call, route, this.charge, body);
      try {
        const document = translator.request(body, ctx);
        const outgoing = { operation: operationFor(call, route, translator), document, headers: passthrough ? forwardedHeaders(call.headers, route) : undefined };
        return { ctx, body, trimmed, outgoing };
      } catch (err) {
        if (i + 1 >= modes.length || (err as { statusCode?: number }).statusCode !== 400) throw err;
      }
    }
  }

  async settle(attempts: readonly StreamAttempt[]): Promise<void> {
    const last = attempts[attempts.length - 1];
    const parts = attempts.map((a) => {
      const part = this.parts.get(a) ?? { streamedOutput: this.streamed(last.mapper), inputEstimate: this.inputEstimate };
      return { route: a.sent.route, usage: a.usage, ...part };
    });
    const costs = await settleAttempts(this.charge, parts, this.call.log);
    if (costs) attempts.forEach((a, i) => a.sent.attempt && (a.sent.attempt.costMicros = costs[i]));
  }
}
