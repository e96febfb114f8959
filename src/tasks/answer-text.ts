// What the runner keeps of an upstream's status answer: bounded text, and progress in whole percent.

/** The most characters of an upstream's text (a reason, a code) a task keeps. */
export const MAX_TEXT = 300;

/** `value` when it is a non-empty string, else `fallback`; at most MAX_TEXT characters. */
export const text = (value: unknown, fallback: string) => (typeof value === 'string' && value ? value : fallback).slice(0, MAX_TEXT);

/** Progress in whole percent, or undefined when the upstream gave none usable. */
export function progressOf(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? Math.max(0, Math.min(100, Math.round(n))) : undefined;
}
