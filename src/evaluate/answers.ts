// Shapes answers from label probabilities, so every mode guarantees the same invariants: distributions sum to 1, a choice is the most probable option, a score is the weighted level index.
import type { Answer, Question } from './types.js';

/** Scales non-negative weights to sum to 1; undefined when they hold no mass at all. */
export function normalise(weights: number[]): number[] | undefined {
  const total = weights.reduce((sum, w) => sum + w, 0);
  if (!(total > 0) || !Number.isFinite(total)) return undefined;
  return weights.map((w) => w / total);
}

/**
 * The answer to `question` from a distribution over its labels: [yes, no] for boolean and noul,
 * one weight per option for choice, one per level for score (already normalised).
 */
export function shapeAnswer(question: Question, distribution: number[]): Answer {
  switch (question.type) {
    case 'boolean':
      return { type: 'boolean', probability: distribution[0] };
    case 'noul':
      return { type: 'noul', noul: distribution[0] };
    case 'choice': {
      const options = question.options!;
      let best = 0;
      // Ties go to the option declared first.
      distribution.forEach((p, i) => {
        if (p > distribution[best]) best = i;
      });
      return { type: 'choice', choice: options[best].key, probabilities: Object.fromEntries(options.map((o, i) => [o.key, distribution[i]])) };
    }
    case 'score':
      return {
        type: 'score',
        score: distribution.reduce((sum, p, level) => sum + p * level, 0),
        probabilities: Object.fromEntries(distribution.map((p, level) => [String(level), p])),
      };
  }
}
