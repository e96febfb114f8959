// POST /v1/evaluate: a shared state and typed questions, answered by an evaluation model through its channel's evaluate mode.
import type { AuthContext } from '../auth/authenticate.js';
import { renderCost, tokenCostMicros } from '../billing/cost.js';
import { estimateEvaluateMicros } from '../billing/estimate.js';
import type { ModelRoute } from '../config/types.js';
import { resolveModel } from '../engine/models.js';
import { ChannelUnavailableError, ValidationError } from '../errors.js';
import type { ModeContext } from '../evaluate/context.js';
import { runLogprobs } from '../evaluate/logprobs-mode.js';
import { runNative } from '../evaluate/native-mode.js';
import { readQuestions } from '../evaluate/questions.js';
import type { EvaluateSettings, ModeResult } from '../evaluate/types.js';
import type { Services } from '../services.js';
import type { HandlerFactory } from './types.js';

interface EvaluateBody {
  model: string;
  state: unknown;
  questions: Record<string, unknown>;
}

/** The first enabled route whose protocol declares how to evaluate; a disabled model is a bad request here. */
function evaluationRoute(services: Services, modelId: string): ModelRoute {
  let routes: ModelRoute[];
  try {
    routes = resolveModel(services.config, modelId, 'evaluation');
  } catch (err) {
    if (err instanceof ChannelUnavailableError) throw new ValidationError(`model "${modelId}" is not an enabled evaluation model: ${err.message}`, 'model', 'model_not_enabled');
    throw err;
  }
  const route = routes.find((r) => r.protocol.evaluate);
  if (!route) throw new ChannelUnavailableError(`model "${modelId}" is served by channel "${routes[0].channel.id}", whose protocol "${routes[0].protocol.id}" declares no evaluate section`);
  return route;
}

const create: HandlerFactory = ({ services }) => {
  const maxQuestions = (services.config.gateway.evaluate as { maxQuestions: number }).maxQuestions;
  return async (req, reply) => {
    const body = req.body as EvaluateBody;
    const route = evaluationRoute(services, body.model);
    const questions = readQuestions(body.questions, maxQuestions);
    const settings = route.protocol.evaluate as unknown as EvaluateSettings;
    const overrides = (route.model.evaluation ?? {}) as { labelMassThreshold?: number; concurrency?: number };

    const charge = await services.meter.begin({
      auth: req.auth as AuthContext,
      route,
      requestId: req.id,
      estimateMicros: estimateEvaluateMicros(route, body.state, body.questions, questions.length),
    });
    const abort = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableFinished) abort.abort();
    };
    reply.raw.on('close', onClose);

    const ctx: ModeContext = { services, route, settings, questions, state: body.state, signal: abort.signal };
    let result: ModeResult;
    try {
      result =
        settings.mode === 'native'
          ? await runNative(ctx)
          : await runLogprobs(ctx, { threshold: overrides.labelMassThreshold ?? settings.labelMassThreshold, concurrency: overrides.concurrency ?? settings.concurrency });
    } catch (err) {
      // The upstream failed before reporting usage: nothing was spent that we know of, unless the
      // client hung up and left it working, which is charged like an abandoned chat request.
      await (abort.signal.aborted ? charge.settleReserved() : charge.release());
      throw err;
    } finally {
      reply.raw.off('close', onClose);
    }

    const { usage } = result;
    const costMicros = tokenCostMicros(route.model.price, usage);
    // Tokens spent upstream are recorded even when a question failed and the request fails with it.
    if (usage.inputTokens || usage.outputTokens) {
      await charge.settle({ costMicros, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, cachedInputTokens: usage.cachedInputTokens });
    } else if (result.error) await charge.release();
    else await charge.settle({ costMicros, inputTokens: 0, outputTokens: 0 });
    if (result.error) throw result.error;

    return {
      model: body.model,
      answers: Object.fromEntries(questions.map((q) => [q.id, result.answers.get(q.id)])),
      usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens },
      cost: renderCost({ micros: costMicros, currency: route.model.price.currency }),
    };
  };
};

export default create;
