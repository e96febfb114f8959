// Same dialect on both sides: an OpenAI chat client to an openai-chat channel. Only the model id and usage plumbing change.
import type { TokenUsage } from '../billing/cost.js';
import type { ChatTranslator, StreamMapper, TranslateContext } from './translator.js';
import type { SseEvent } from './sse.js';
import type { GatewayError } from '../errors.js';
import { openaiEnvelope } from '../errors.js';
import { DEFAULT_MAX_TOKENS } from '../billing/estimate.js';

interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

export function openaiUsage(usage: OpenAIUsage | null | undefined): TokenUsage | undefined {
  if (!usage) return undefined;
  return {
    inputTokens: usage.prompt_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    cachedInputTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

export const openaiChatPassthrough: ChatTranslator = {
  operation: 'chat',
  request(body, ctx) {
    const upstream: Record<string, unknown> = { ...body, model: ctx.route.model.upstream ?? ctx.route.model.id };
    // The reservation assumed this bound; without it upstream the worst case would be unbounded.
    if (body.max_tokens == null && body.max_completion_tokens == null) upstream.max_tokens = DEFAULT_MAX_TOKENS;
    // Billing needs usage even when the client did not ask for it on a stream.
    if (body.stream) upstream.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
    return upstream;
  },
  response(body, ctx) {
    const usage = openaiUsage(body.usage as OpenAIUsage);
    return { ...body, model: ctx.clientModel, ...(usage ? { cost: ctx.costOf(usage) } : {}) };
  },
  usage: (body) => openaiUsage(body.usage as OpenAIUsage),
  stream(ctx, clientBody) {
    const clientWantsUsage = (clientBody.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    let usage: TokenUsage | undefined;
    const mapper: StreamMapper = {
      push(event: SseEvent) {
        // Only the usage chunk is parsed; every other chunk is forwarded byte for byte.
        if (event.data === '[DONE]' || !event.data.includes('"usage"')) return [event];
        const chunk = JSON.parse(event.data) as { usage?: OpenAIUsage | null; choices?: unknown[] };
        if (!chunk.usage) return [event];
        usage = openaiUsage(chunk.usage);
        if (!clientWantsUsage && (!chunk.choices || chunk.choices.length === 0)) return [];
        if (!clientWantsUsage) return [{ data: JSON.stringify({ ...chunk, usage: undefined }) }];
        return [{ data: JSON.stringify({ ...chunk, cost: ctx.costOf(usage!) }) }];
      },
      usage: () => usage,
      end: () => [],
      fail: (error: GatewayError) => [{ data: JSON.stringify(openaiEnvelope(error)) }],
    };
    return mapper;
  },
};
