// Stream failover after the first byte (a route's failover.streamAfterFirstByte, docs/routing.md): what the client has
// been sent of a text stream, read from the events in its own dialect (OpenAI chat chunks or Anthropic Messages events),
// and the continuation's events rewritten so the client sees one well-formed stream: one message id, its content
// indexes carried on, no second start, the final usage the sum of the attempts'.
import { UpstreamError } from '../../base/errors.js';
import type { SseEvent } from '../sse.js';
import type { StreamMapper } from '../translator.js';

/** The client dialects whose streams can be spliced. */
export const spliceDialects: ReadonlySet<string> = new Set(['openai-chat', 'anthropic-messages']);

/** Tokens an earlier attempt used, added to the continuation's final usage (what the client reads). */
export interface PriorUsage {
  inputTokens: number;
  outputTokens: number;
}

type Json = Record<string, any>;

/** The most text a stream may have streamed and still be continued (it goes back upstream as the continuation's prefill). */
const MAX_CONTINUED_CHARS = 2 * 1024 * 1024;

const parsed = (event: SseEvent): Json | undefined => {
  if (event.data === '[DONE]') return undefined;
  try {
    const value: unknown = JSON.parse(event.data);
    return value && typeof value === 'object' ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
};

/** What the client has been sent of one stream, in its dialect; why it cannot be continued, when it cannot. */
export class StreamTranscript {
  text = '';
  /** Why a break cannot be continued (a tool call, structured output, several choices, an answer already ended). */
  unsafe: string | undefined;
  id: unknown;
  created: unknown;
  /** Anthropic: the text block the client has open (continued by the next attempt's first text), and the next free index. */
  openIndex: number | undefined;
  nextIndex = 0;

  constructor(
    readonly dialect: string,
    unsafe?: string,
  ) {
    this.unsafe = unsafe;
  }

  /** Reads the client events as they go out. */
  see(events: readonly SseEvent[]): void {
    for (const event of events) {
      const data = parsed(event);
      if (data) (this.dialect === 'openai-chat' ? this.seeChunk(data) : this.seeMessageEvent(data));
    }
  }

  private append(text: string): void {
    if (this.unsafe) return;
    if (this.text.length + text.length > MAX_CONTINUED_CHARS) this.unsafe = 'an answer too long to continue';
    else this.text += text;
  }

  private seeChunk(data: Json): void {
    this.id ??= data.id;
    this.created ??= data.created;
    for (const choice of Array.isArray(data.choices) ? data.choices : []) {
      const delta = choice?.delta ?? {};
      if (choice.index !== 0) this.unsafe ??= 'several choices';
      if (delta.tool_calls || delta.function_call) this.unsafe ??= 'a tool call in progress';
      if (typeof delta.refusal === 'string') this.unsafe ??= 'a refusal';
      if (typeof delta.content === 'string') this.append(delta.content);
      if (choice.finish_reason) this.unsafe ??= 'the answer had ended';
    }
  }

  private seeMessageEvent(data: Json): void {
    switch (data.type) {
      case 'message_start':
        this.id ??= data.message?.id;
        return;
      case 'content_block_start':
        if (data.content_block?.type === 'text') this.openIndex = data.index;
        else this.unsafe ??= `a ${String(data.content_block?.type)} block in progress`;
        this.nextIndex = Math.max(this.nextIndex, Number(data.index) + 1);
        return;
      case 'content_block_delta':
        if (data.delta?.type === 'text_delta' && typeof data.delta.text === 'string') this.append(data.delta.text);
        return;
      case 'content_block_stop':
        if (data.index === this.openIndex) this.openIndex = undefined;
        return;
      case 'message_delta':
        if (data.delta?.stop_reason) this.unsafe ??= 'the answer had ended';
        return;
    }
  }
}

/** The message of an error event in the client's dialect (an upstream error relayed mid-stream), or undefined. */
function errorEvent(dialect: string, events: readonly SseEvent[]): string | undefined {
  for (const event of events) {
    if (dialect === 'anthropic-messages' ? event.event !== 'error' : !event.data.includes('"error"')) continue;
    const data = parsed(event);
    if (!data?.error || Array.isArray(data.choices)) continue;
    const message = (data.error as { message?: unknown }).message;
    return typeof message === 'string' ? message : 'an error event';
  }
  return undefined;
}

/**
 * `mapper`, with what it sends recorded on `transcript`. An upstream error event mid-stream breaks the stream (thrown,
 * not relayed) while it can still be continued; the client gets an error event of its own if it is not.
 */
export function recording(mapper: StreamMapper, transcript: StreamTranscript): StreamMapper {
  return {
    push(event, parse) {
      const out = mapper.push(event, parse);
      const error = transcript.unsafe === undefined ? errorEvent(transcript.dialect, out) : undefined;
      if (error !== undefined) throw new UpstreamError(`the upstream's stream failed: ${error.slice(0, 200)}`, 502, 'upstream_stream_error');
      transcript.see(out);
      return out;
    },
    end: () => mapper.end(),
    fail: (error) => mapper.fail(error),
    drain: mapper.drain && (() => mapper.drain!()),
    streamedOutputTokens: mapper.streamedOutputTokens && (() => mapper.streamedOutputTokens!()),
  };
}

/**
 * The continuation's mapper: its client events rewritten to go on with the stream `transcript` recorded, `prior` added
 * to its final usage; `trimLead` drops the whitespace its first text starts with (a prefill sent without its trailing
 * whitespace, which the model then writes again).
 */
export function continuing(mapper: StreamMapper, transcript: StreamTranscript, prior: PriorUsage, trimLead: boolean): StreamMapper {
  const splice = new Splice(transcript, prior, trimLead);
  const rewrite = (events: SseEvent[]) => {
    const out = splice.rewrite(events);
    transcript.see(out);
    return out;
  };
  return {
    push: (event, parse) => rewrite(mapper.push(event, parse)),
    end: () => rewrite(mapper.end()),
    fail: (error) => mapper.fail(error),
    drain: mapper.drain && (() => mapper.drain!()),
    streamedOutputTokens: mapper.streamedOutputTokens && (() => mapper.streamedOutputTokens!()),
  };
}

class Splice {
  private trimming: boolean;
  /** Anthropic: the continuation's first block index, and the client index it maps to. */
  private firstIndex: number | undefined;
  private clientIndex = 0;
  /** Anthropic: the continuation's input tokens (its message_start), summed into the final message_delta. */
  private inputTokens = 0;

  constructor(
    private readonly transcript: StreamTranscript,
    private readonly prior: PriorUsage,
    trimLead: boolean,
  ) {
    this.trimming = trimLead;
  }

  rewrite(events: SseEvent[]): SseEvent[] {
    const out: SseEvent[] = [];
    for (const event of events) {
      const data = parsed(event);
      if (!data) out.push(event);
      else {
        const kept = this.transcript.dialect === 'openai-chat' ? this.chunk(data) : this.messageEvent(data);
        if (kept) out.push({ event: event.event, data: JSON.stringify(kept) });
      }
    }
    return out;
  }

  private trim(text: string): string {
    if (!this.trimming) return text;
    const trimmed = text.trimStart();
    if (trimmed) this.trimming = false;
    return trimmed;
  }

  private chunk(data: Json): Json {
    if (!Array.isArray(data.choices)) return data;
    data.id = this.transcript.id ?? data.id;
    data.created = this.transcript.created ?? data.created;
    for (const choice of data.choices) {
      if (!choice?.delta) continue;
      delete choice.delta.role;
      if (typeof choice.delta.content === 'string') choice.delta.content = this.trim(choice.delta.content);
    }
    if (data.usage && typeof data.usage === 'object') {
      const usage = data.usage as Json;
      usage.prompt_tokens = (Number(usage.prompt_tokens) || 0) + this.prior.inputTokens;
      usage.completion_tokens = (Number(usage.completion_tokens) || 0) + this.prior.outputTokens;
      usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    }
    return data;
  }

  private index(index: number): number {
    return this.clientIndex + (index - (this.firstIndex ?? index));
  }

  private messageEvent(data: Json): Json | undefined {
    switch (data.type) {
      case 'message_start':
        this.inputTokens = Number(data.message?.usage?.input_tokens) || 0;
        return undefined;
      case 'content_block_start': {
        const first = this.firstIndex === undefined;
        if (first) {
          this.firstIndex = data.index;
          this.clientIndex = data.content_block?.type === 'text' && this.transcript.openIndex !== undefined ? this.transcript.openIndex : this.transcript.nextIndex;
          // The client's open text block goes on: no second start for it.
          if (data.content_block?.type === 'text' && this.transcript.openIndex !== undefined) return undefined;
        }
        return { ...data, index: this.index(data.index) };
      }
      case 'content_block_delta':
        if (data.delta?.type === 'text_delta' && typeof data.delta.text === 'string') data.delta.text = this.trim(data.delta.text);
        return { ...data, index: this.index(data.index) };
      case 'content_block_stop':
        return { ...data, index: this.index(data.index) };
      case 'message_delta': {
        const usage = (data.usage ?? {}) as Json;
        const input = (usage.input_tokens != null ? Number(usage.input_tokens) : this.inputTokens) + this.prior.inputTokens;
        return { ...data, usage: { ...usage, input_tokens: input, output_tokens: (Number(usage.output_tokens) || 0) + this.prior.outputTokens } };
      }
      default:
        return data;
    }
  }
}
