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
}

export const maxSecondsOf = (route: ModelRoute) => Number((route.model.media as { maxSeconds?: number } | undefined)?.maxSeconds ?? DEFAULT_MAX_SECONDS);

const perRequestMicros = (route: ModelRoute) => Math.round((route.model.price.perRequest ?? 0) * 1e6);

/** The cost of `units` (seconds of video or images) on `route`. */
export function taskCostMicros(route: ModelRoute, kind: TaskKind, units: number, size?: string): number {
  const each = kind === 'video' ? Math.round((route.model.price.perVideoSecond ?? 0) * 1e6) : imagePriceMicros(route.model.price, size);
  return units * each + perRequestMicros(route);
}

/** The worst case: the seconds asked for (else the model's most), or one image at the size asked for (else the priciest). */
export function taskEstimateMicros(route: ModelRoute, kind: TaskKind, params: TaskParams): number {
  return taskCostMicros(route, kind, kind === 'video' ? (params.seconds ?? maxSecondsOf(route)) : 1, params.size);
}

/** Billable units from the mapped usage ({seconds} or {images}); undefined when the upstream reported none usable. */
export function unitsOf(kind: TaskKind, usage: unknown): number | undefined {
  const value = (usage as Record<string, unknown> | null | undefined)?.[kind === 'video' ? 'seconds' : 'images'];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.ceil(value) : undefined;
}
