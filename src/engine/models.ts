// Resolves a client's model id to the routes that may serve it on a given endpoint.
import type { ModelKind, ModelRoute } from '../config/types.js';
import type { LoadedConfig } from '../compile/loaded-config.js';
import { ChannelUnavailableError, ValidationError, clientValue } from '../errors.js';

const kindWords: Record<ModelKind, string> = { chat: 'a chat model', evaluation: 'an evaluation model', image: 'an image model', video: 'a video model' };

/** Where each kind of model is served, for error messages that point the client to the right endpoint. */
export const endpointForKind: Record<ModelKind, string> = {
  chat: 'POST /api/v1/chat/completions or POST /api/v1/messages',
  evaluation: 'POST /api/v1/evaluate',
  image: 'POST /api/v1/images/generations',
  video: 'POST /api/v1/videos',
};

/** Enabled routes for `modelId` of `kind`, best first; unknown, wrong-kind and all-disabled models are refused. */
export function resolveModel(config: LoadedConfig, modelId: unknown, kind: ModelKind): ModelRoute[] {
  if (typeof modelId !== 'string' || modelId === '') throw new ValidationError('"model" is required', 'model');
  const routes = config.models.get(modelId);
  if (!routes) throw new ValidationError(`unknown model ${clientValue(modelId)}`, 'model', 'model_not_found');
  const actual = routes[0].model.kind;
  if (actual !== kind) {
    throw new ValidationError(
      `model ${clientValue(modelId)} is ${kindWords[actual]}, not ${kindWords[kind]}; send it to ${endpointForKind[actual]}`,
      'model',
      actual === 'evaluation' ? 'evaluation_model_not_supported' : 'wrong_model_kind',
    );
  }
  return usableRoutes(routes);
}

/** The routes whose channel is enabled (the same array when all are: callers only read it). */
function usableRoutes(routes: readonly ModelRoute[]): ModelRoute[] {
  let disabled = 0;
  for (const route of routes) if (route.channel.disabledReason) disabled++;
  if (disabled === routes.length) throw new ChannelUnavailableError(routes[0].channel.disabledReason!);
  return disabled ? routes.filter((r) => !r.channel.disabledReason) : (routes as ModelRoute[]);
}
