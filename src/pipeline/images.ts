// The image generation dialect: resolve, estimate n x the priciest image asked for, send, archive every result, settle per image.
import { renderCost, tokenCostMicros } from '../billing/cost.js';
import { imagePriceMicros } from '../billing/image-price.js';
import type { Charge } from '../billing/meter.js';
import type { ModelRoute } from '../config/types.js';
import { resolveModel } from '../engine/models.js';
import { TranslationError, ValidationError } from '../errors.js';
import { operationDialect } from '../engine/translators.js';
import type { Call } from './call.js';
import { readJsonObject } from './decode.js';
import type { Dialect } from './dialect.js';
import { archiveImages } from './outputs.js';
import { send, type Sent } from './send.js';
import { settleAfterFailure } from './settle.js';
import { UsageReader, upstreamMalformed } from './usage.js';

const DEFAULT_MAX_IMAGES = 10;

interface ImagesPlan {
  routes: ModelRoute[];
  count: number;
}

const maxImagesOf = (route: ModelRoute) => Number((route.model.media as { maxImages?: number } | undefined)?.maxImages ?? DEFAULT_MAX_IMAGES);

/** What `count` images (and any reported tokens) cost on `route`; unknown sizes or qualities take the priciest. */
function imagesCostMicros(route: ModelRoute, count: number, size: unknown, quality: unknown, tokens?: { inputTokens: number; outputTokens: number }): number {
  const each = imagePriceMicros(route.model.price, typeof size === 'string' ? size : undefined, typeof quality === 'string' ? quality : undefined);
  return count * each + tokenCostMicros(route.model.price, tokens ?? { inputTokens: 0, outputTokens: 0 });
}

export function imagesDialect(operation: string): Dialect<ImagesPlan> {
  return {
    resolve(call) {
      const routes = resolveModel(call.config, call.body.model, 'image');
      for (const route of routes) {
        if (operationDialect(route, operation) !== call.dialect) throw new TranslationError(`model "${route.model.id}" is served by channel "${route.channel.id}", which has no ${call.dialect} operation "${operation}"`, 'model');
      }
      const count = call.body.n === undefined || call.body.n === null ? 1 : Number(call.body.n);
      const max = Math.min(...routes.map(maxImagesOf));
      if (count > max) throw new ValidationError(`n=${count}: model "${routes[0].model.id}" makes at most ${max} images per request`, 'n');
      return { routes, count };
    },
    // The worst case: n images at the priciest size and quality the request allows, on the priciest route.
    estimate: (call, plan) => Math.max(...plan.routes.map((route) => imagesCostMicros(route, plan.count, call.body.size, call.body.quality))),
    async execute(call, plan, charge: Charge) {
      let sent: Sent;
      try {
        sent = await send(call, plan.routes, (route) => ({ operation, document: { ...call.body, model: route.model.upstream ?? route.model.id } }));
      } catch (err) {
        await settleAfterFailure(charge, call.clientGone);
        throw err;
      }
      try {
        const answer = await readJsonObject(sent);
        if (!Array.isArray(answer.data)) throw upstreamMalformed(sent.route.channel.id, 'its answer has no "data" list');
        if (answer.data.length > plan.count) throw upstreamMalformed(sent.route.channel.id, `it made ${answer.data.length} images where ${plan.count} were asked for`);
        const usage = new UsageReader(call.config, sent.operation.usage, `${sent.route.protocol.file} /operations/${operation}`, sent.route.channel.id);
        usage.fromAnswer(answer);
        const tokens = usage.counts();
        // outputs: every result archived (or marked failed) before the answer is sent.
        await archiveImages(call, answer.data);
        // settle: per image made, at the size and quality the upstream reports, else the ones asked for.
        const costMicros = imagesCostMicros(sent.route, answer.data.length, answer.size ?? call.body.size, answer.quality ?? call.body.quality, tokens);
        const outcome = await charge.settle({ costMicros, units: answer.data.length, inputTokens: tokens?.inputTokens, outputTokens: tokens?.outputTokens, route: sent.route });
        return { ...answer, cost: renderCost({ micros: outcome.chargedMicros, currency: sent.route.model.price.currency }) };
      } catch (err) {
        await settleAfterFailure(charge, true);
        throw err;
      }
    },
  };
}
