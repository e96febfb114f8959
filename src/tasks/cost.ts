// What a task costs: video by the second, images by size, plus any per-request price; the estimate is the same sum at its worst case.
import { imagePriceMicros } from '../billing/image-price.js';
import type { ModelRoute } from '../config/types.js';
import type { TaskKind } from './spec.js';

/** Seconds a video may run when the client does not say (model media.maxSeconds, else this). */
export const DEFAULT_MAX_SECONDS = 20;

export interface TaskParams {
  prompt: string;
  seconds?: number;
  size?: string;
  /** The submit operation `submit.choose` picked (absent: the task's `submit.operation`). */
  operation?: string;
  /** What `submit.save` kept from the submit answer. */
  saved?: Record<string, unknown>;
}

/** What a task is billed by: seconds of video, images, or tokens (priced at the model's outputPerMillion). */
export interface TaskUnits {
  count: number;
  unit: 'seconds' | 'images' | 'tokens';
}

export const maxSecondsOf = (route: ModelRoute) => Number((route.model.media as { maxSeconds?: number } | undefined)?.maxSeconds ?? DEFAULT_MAX_SECONDS);

const perRequestMicros = (route: ModelRoute) => Math.round((route.model.price.perRequest ?? 0) * 1e6);

/** The cost of `units` (seconds of video, images, or tokens) on `route`. */
export function taskCostMicros(route: ModelRoute, kind: TaskKind, units: TaskUnits, size?: string): number {
  const { price } = route.model;
  if (units.unit === 'tokens') return Math.round((units.count * (price.outputPerMillion ?? 0))) + perRequestMicros(route);
  const each = units.unit === 'seconds' ? Math.round((price.perVideoSecond ?? 0) * 1e6) : imagePriceMicros(price, size);
  return units.count * each + perRequestMicros(route);
}

/**
 * The worst case: the seconds asked for (else the model's most), or one image at the size asked for (else the priciest).
 * A token-billed video model (outputPerMillion, no perVideoSecond) reserves its limits.maxOutputTokens at that price.
 */
export function taskEstimateMicros(route: ModelRoute, kind: TaskKind, params: TaskParams): number {
  const { price, limits } = route.model;
  if (kind === 'video' && price.perVideoSecond === undefined && price.outputPerMillion !== undefined) {
    return taskCostMicros(route, kind, { count: limits?.maxOutputTokens ?? 0, unit: 'tokens' });
  }
  return taskCostMicros(route, kind, kind === 'video' ? { count: params.seconds ?? maxSecondsOf(route), unit: 'seconds' } : { count: 1, unit: 'images' }, params.size);
}

const countOf = (value: unknown): number | undefined => {
  const n = typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.ceil(n) : undefined;
};

/** Billable units from the mapped usage ({tokens}, else {seconds} for a video or {images}; a number or a numeric string); undefined when none is usable. */
export function unitsOf(kind: TaskKind, usage: unknown): TaskUnits | undefined {
  const said = usage as Record<string, unknown> | null | undefined;
  const tokens = countOf(said?.tokens);
  if (tokens !== undefined) return { count: tokens, unit: 'tokens' };
  const unit = kind === 'video' ? 'seconds' : 'images';
  const count = countOf(said?.[unit]);
  return count === undefined ? undefined : { count, unit };
}
