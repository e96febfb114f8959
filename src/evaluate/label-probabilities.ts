// Reads a model's first-token logprobs as probabilities over a question's labels.
import { UpstreamError } from '../base/errors.js';

export interface TokenLogprob {
  token: string;
  logprob: number;
}

/** A token as a label candidate: case and leading whitespace do not matter (`Yes`, ` yes` and `YES` are one label). */
export function labelKey(token: string): string {
  return token.replace(/^\s+/, '').toLowerCase();
}

export interface LabelDistribution {
  /** One probability per label, renormalised over the label set. */
  probabilities: number[];
  /** How much of the model's probability the labels held before renormalising. */
  mass: number;
}

/**
 * Sums the probability of every token variant of each label, then renormalises over the labels.
 * Throws when the labels hold less than `threshold` of the mass: the model answered something
 * else, and a guess from the remainder would be noise.
 */
export function labelDistribution(candidates: TokenLogprob[], labels: string[], threshold: number, channel: string): LabelDistribution {
  const index = new Map(labels.map((label, i) => [labelKey(label), i]));
  const weights = labels.map(() => 0);
  for (const { token, logprob } of candidates) {
    const at = index.get(labelKey(token));
    if (at !== undefined && Number.isFinite(logprob)) weights[at] += Math.exp(logprob);
  }
  const mass = weights.reduce((sum, w) => sum + w, 0);
  if (!(mass >= threshold) || mass === 0) {
    throw new UpstreamError(
      `channel "${channel}" gave the answer labels (${labels.join(', ')}) only ${(mass * 100).toFixed(1)}% of its probability, below the ${(threshold * 100).toFixed(1)}% required; the model did not answer with a label`,
      502,
      'insufficient_label_mass',
    );
  }
  return { probabilities: weights.map((w) => w / mass), mass };
}

/** The first generated token's alternatives from an OpenAI chat completion, or undefined when the channel sent none. */
export function firstTokenLogprobs(body: unknown): TokenLogprob[] | undefined {
  const choice = (body as { choices?: { logprobs?: { content?: { token?: unknown; logprob?: unknown; top_logprobs?: unknown }[] | null } | null }[] })?.choices?.[0];
  const first = choice?.logprobs?.content?.[0];
  if (!first || !Array.isArray(first.top_logprobs) || first.top_logprobs.length === 0) return undefined;
  const candidates = (first.top_logprobs as { token?: unknown; logprob?: unknown }[])
    .filter((t) => typeof t?.token === 'string' && typeof t.logprob === 'number')
    .map((t) => ({ token: t.token as string, logprob: t.logprob as number }));
  // The sampled token is normally among the top alternatives; add it when a channel leaves it out.
  if (typeof first.token === 'string' && typeof first.logprob === 'number' && !candidates.some((c) => c.token === first.token)) {
    candidates.push({ token: first.token, logprob: first.logprob });
  }
  return candidates.length ? candidates : undefined;
}
