// The evaluate dialect: questions read before anything is reserved, then one or many exchanges (by mode) whose usage the
// pipeline sums and settles once (pipeline/conversation.ts).
import { renderCost } from '../billing/cost.js';
import { estimateEvaluateMicros } from '../billing/estimate.js';
import type { ModelRoute } from '../config/types.js';
import { resolveCallModel } from '../pipeline/resolve.js';
import { ChannelUnavailableError, ValidationError } from '../base/errors.js';
import type { ModeContext } from '../evaluate/context.js';
import { runLogprobs } from '../evaluate/logprobs-mode.js';
import { runNative } from '../evaluate/native-mode.js';
import { readQuestions } from '../evaluate/questions.js';
import type { EvaluateSettings, ModeResult, Question } from '../evaluate/types.js';
import type { Call } from '../pipeline/call.js';
import type { Conversation, Flow, Exchange } from '../pipeline/flow.js';

interface EvaluatePlan {
  routes: ModelRoute[];
  settings: EvaluateSettings;
  questions: Question[];
}

/** The first enabled route whose protocol declares how to evaluate; a disabled model is a bad request here. */
function evaluationRoute(call: Call, modelId: unknown, kind: string): ModelRoute {
  let routes: ModelRoute[];
  try {
    routes = resolveCallModel(call, modelId, kind);
  } catch (err) {
    if (err instanceof ChannelUnavailableError) throw new ValidationError(`model "${modelId}" is not an enabled evaluation model: ${err.message}`, 'model', 'model_not_enabled');
    throw err;
  }
  const route = routes.find((r) => r.protocol.evaluate);
  if (!route) throw new ChannelUnavailableError(`model "${modelId}" is served by channel "${routes[0].channel.id}", whose protocol "${routes[0].protocol.id}" declares no evaluate section`);
  return route;
}

/** map request and read each answer (each exchange of the mode); the answer once the pipeline settled their usage. */
async function evaluate(call: Call, plan: EvaluatePlan, exchange: Exchange): Promise<Conversation> {
  const [route] = plan.routes;
  const { settings, questions } = plan;
  const ctx: ModeContext = { config: call.config, route, settings, questions, state: call.body.state, signal: call.signal, exchange };
  const overrides = (route.model.evaluation ?? {}) as { labelMassThreshold?: number; concurrency?: number };
  const result: ModeResult =
    settings.mode === 'native'
      ? await runNative(ctx)
      : await runLogprobs(ctx, { threshold: overrides.labelMassThreshold ?? settings.labelMassThreshold, concurrency: overrides.concurrency ?? settings.concurrency });
  return {
    failure: result.error,
    answer: ({ usage, costMicros }) => ({
      model: call.body.model,
      answers: Object.fromEntries(questions.map((q) => [q.id, result.answers.get(q.id)])),
      usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens },
      cost: renderCost({ micros: costMicros, currency: route.model.price.currency }),
    }),
  };
}

export function evaluateFlow(_operation: string, kind: string): Flow<EvaluatePlan> {
  return {
    resolve(call) {
      const route = evaluationRoute(call, call.body.model, kind);
      return { routes: [route], settings: route.protocol.evaluate as unknown as EvaluateSettings, questions: [] };
    },
    inputs(call, plan) {
      const maxQuestions = call.config.gateway.evaluate.maxQuestions;
      plan.questions = readQuestions(call.body.questions, maxQuestions);
    },
    estimate: (call, plan) => estimateEvaluateMicros(plan.routes[0], call.body.state, call.bodyBytes, plan.questions.length),
    converse: evaluate,
  };
}
