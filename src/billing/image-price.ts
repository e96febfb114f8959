// Per-image prices by size and quality: `perImage` is one number, or a map of `<size>:<quality>`, `<size>` or `default` to one.
import type { PriceConfig } from '../config/types.js';

/**
 * The price of one image in micro-units. Unknown parts (no size or quality asked for, or reported) take the priciest
 * entry they could be, so an estimate is an upper bound and a settlement never guesses low.
 */
export function imagePriceMicros(price: PriceConfig, size?: string, quality?: string): number {
  const perImage = price.perImage;
  if (perImage === undefined) return 0;
  if (typeof perImage === 'number') return Math.round(perImage * 1e6);
  const candidates = Object.entries(perImage).filter(([key]) => {
    if (key === 'default') return true;
    const [keySize, keyQuality] = key.split(':');
    return (size === undefined || keySize === size) && (quality === undefined || keyQuality === undefined || keyQuality === quality);
  });
  const exact = size !== undefined && quality !== undefined ? (perImage[`${size}:${quality}`] ?? perImage[size]) : undefined;
  const amount = exact ?? Math.max(0, ...candidates.map(([, value]) => value));
  return Math.round(amount * 1e6);
}
