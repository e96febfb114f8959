// Stream failover for OpenAI chat clients (engine/routing/transcript.ts): what the client has been sent of its chunks,
// and a continuation's chunks made to go on with them: the first chunk's id and created kept, no second role, the
// usage chunk the sum of the attempts.
import type { SseEvent } from '../sse.js';
import { Splice, StreamTranscript, type Json, type PriorUsage } from './transcript.js';

export class ChatTranscript extends StreamTranscript {
  id: unknown;
  created: unknown;

  see(data: Json): void {
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

  errorOf(data: Json): string | undefined {
    if (!data.error || Array.isArray(data.choices)) return undefined;
    const message = (data.error as { message?: unknown }).message;
    return typeof message === 'string' ? message : 'an error event';
  }

  splice(prior: PriorUsage, trimLead: boolean): Splice {
    return new ChatSplice(this, prior, trimLead);
  }
}

class ChatSplice extends Splice {
  constructor(
    protected override readonly transcript: ChatTranscript,
    private readonly prior: PriorUsage,
    trimLead: boolean,
  ) {
    super(transcript, trimLead);
  }

  protected event(data: Json, _event: SseEvent): Json {
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
}
