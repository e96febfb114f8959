// Stream failover for Anthropic Messages clients (engine/routing/transcript.ts): what the client has been sent of its
// events, and a continuation's events made to go on with them: no second message_start, the open text block going on
// (no second content_block_start), later blocks counting on, the final message_delta's usage the sum of the attempts.
import type { SseEvent } from '../sse.js';
import { Splice, StreamTranscript, type Json, type PriorUsage } from './transcript.js';

export class MessagesTranscript extends StreamTranscript {
  id: unknown;
  /** The text block the client has open (continued by the next attempt's first text), and the next free index. */
  openIndex: number | undefined;
  nextIndex = 0;

  see(data: Json): void {
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

  errorOf(data: Json, event: SseEvent): string | undefined {
    if (event.event !== 'error' || !data.error) return undefined;
    const message = (data.error as { message?: unknown }).message;
    return typeof message === 'string' ? message : 'an error event';
  }

  splice(prior: PriorUsage, trimLead: boolean): Splice {
    return new MessagesSplice(this, prior, trimLead);
  }
}

class MessagesSplice extends Splice {
  /** The continuation's first block index, and the client index it maps to. */
  private firstIndex: number | undefined;
  private clientIndex = 0;
  /** The continuation's input tokens (its message_start), summed into the final message_delta. */
  private inputTokens = 0;

  constructor(
    protected override readonly transcript: MessagesTranscript,
    private readonly prior: PriorUsage,
    trimLead: boolean,
  ) {
    super(transcript, trimLead);
  }

  private index(index: number): number {
    return this.clientIndex + (index - (this.firstIndex ?? index));
  }

  protected event(data: Json): Json | undefined {
    switch (data.type) {
      case 'message_start':
        this.inputTokens = Number(data.message?.usage?.input_tokens) || 0;
        return undefined;
      case 'content_block_start': {
        if (this.firstIndex === undefined) {
          const goesOn = data.content_block?.type === 'text' && this.transcript.openIndex !== undefined;
          this.firstIndex = data.index;
          this.clientIndex = goesOn ? this.transcript.openIndex! : this.transcript.nextIndex;
          // The client's open text block goes on: no second start for it.
          if (goesOn) return undefined;
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
