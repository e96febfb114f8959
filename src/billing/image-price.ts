// Per-image prices by size and quality: `perImage` is one number, or a map of `<size>:<quality>`, `<size>` or `default` to one.
import type { PriceConfig } from '../config/types.js';

/** Sizes and qualities that leave the choice to the upstream: priced as the priciest they could turn out to be. */
const UNDECIDED = new Set(['auto']);

const known = (value: string | undefined) => (value === undefined || UNDECIDED.has(value) ? undefined : value);

/**
 * The price of one image in micro-units. Unknown parts (no size or quality asked for or reported, `"auto"`, or a size or
 * quality the map does not list) take the priciest entry they could be, so an estimate is an upper bound and a
 * settlement never guesses low: a size missing from the map is never free.
 */
export function imagePriceMicros(price: PriceConfig, requestedSize?: string, requestedQuality?: string): number {
  return sizedPriceMicros(price.perImage, requestedSize, requestedQuality);
}

/** The same for any price priced as `perImage` is: one number, or a map by size and quality (a task family's `bill.price`). */
export function sizedPriceMicros(perImage: PriceConfig['perImage'], requestedSize?: string, requestedQuality?: string): number {
  if (perImage === undefined) return 0;
  if (typeof perImage === 'number') return Math.round(perImage * 1e6);
  const entries = Object.entries(perImage);
  const size = known(requestedSize);
  const quality = known(requestedQuality);
  const exact = size !== undefined && quality !== undefined ? (perImage[`${size}:${quality}`] ?? perImage[size]) : undefined;
  if (exact !== undefined) return Math.round(exact * 1e6);
  const listed = entries.filter(([key]) => key !== 'default');
  const sizeListed = size === undefined || listed.some(([key]) => key.split(':')[0] === size);
  const qualityListed = quality === undefined || listed.some(([key]) => key.split(':')[1] === quality);
  // A part the map does not list could be anything: every entry (`default` too) is a candidate for it.
  const fitting = listed.filter(([key]) => {
    const [keySize, keyQuality] = key.split(':');
    const sizeFits = !sizeListed || size === undefined || keySize === size;
    const qualityFits = !qualityListed || quality === undefined || keyQuality === undefined || keyQuality === quality;
    return sizeFits && qualityFits;
  });
  const fallback = perImage.default;
  const candidates = fitting.map(([, value]) => value);
  if (fallback !== undefined && (!fitting.length || !sizeListed || !qualityListed || size === undefined)) candidates.push(fallback);
  return Math.round(Math.max(0, ...(candidates.length ? candidates : entries.map(([, value]) => value))) * 1e6);
}

/** The sizes a model declares it makes (`media.sizes`), if it declares any. */
export function declaredSizes(media: unknown): readonly string[] | undefined {
  const sizes = (media as { sizes?: unknown } | undefined)?.sizes;
  return Array.isArray(sizes) && sizes.every((s) => typeof s === 'string') ? (sizes as string[]) : undefined;
}
