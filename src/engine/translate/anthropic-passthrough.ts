// Same dialect on both sides: an Anthropic Messages client to an anthropic-messages channel. The model id is mapped,
// usage is read for billing from the answer (or message_start and message_delta) and the cost is added; nothing else changes.
import type { TokenUsage } from '../../billing/cost.js';
import { anthropicEnvelope, type GatewayError } from '../../errors.js';
import type { SseEvent } from '../sse.js';
import type { ChatTranslator, StreamMapper } from '../translator.js';

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** Anthropic counts cache reads and writes apart from input_tokens; billing counts them as input, reads at the cached price. */
export function anthropicUsage(usage: AnthropicUsage | null | undefined): TokenUsage | undefined {
  if (!usage) return undefined;
  const cached = usage.cache_read_input_tokens ?? 0;
  return {
    inputTokens: (usage.input_tokens ?? 0) + cached + (usage.cache_creation_input_tokens ?? 0),
    outputTokens: usage.output_tokens ?? 0,
    cachedInputTokens: cached,
  };
}

export const anthropicMessagesPassthrough: ChatTranslator = {
  operation: 'chat',
  request: (body, ctx) => ({ ...body, model: ctx.route.model.upstream ?? ctx.route.model.id }),
  response(body, ctx) {
    const usage = anthropicUsage(body.usage as AnthropicUsage);
    return { ...body, model: ctx.clientModel, ...(usage ? { cost: ctx.costOf(usage) } : {}) };
  },
  usage: (body) => anthropicUsage(body.usage as AnthropicUsage),
  stream(ctx) {
    const raw: AnthropicUsage = {};
    const merge = (usage: AnthropicUsage | undefined) => {
      for (const [name, value] of Object.entries(usage ?? {})) if (typeof value === 'number') raw[name as keyof AnthropicUsage] = value;
    };
    const mapper: StreamMapper = {
      push(event: SseEvent) {
        // Only the two events that carry the model or usage are parsed; the rest go out byte for byte.
        if (event.event === 'message_start') {
          const data = JSON.parse(event.data) as { message: { model?: string; usage?: AnthropicUsage } };
          merge(data.message.usage);
          data.message.model = ctx.clientModel;
          return [{ event: event.event, data: JSON.stringify(data) }];
        }
        if (event.event === 'message_delta') {
          const data = JSON.parse(event.data) as { usage?: AnthropicUsage };
          merge(data.usage);
          return [{ event: event.event, data: JSON.stringify({ ...data, cost: ctx.costOf(anthropicUsage(raw)!) }) }];
        }
        return [event];
      },
      usage: () => (Object.keys(raw).length ? anthropicUsage(raw) : undefined),
      end: () => [],
      fail: (error: GatewayError) => [{ event: 'error', data: JSON.stringify(anthropicEnvelope(error)) }],
    };
    return mapper;
  },
};
