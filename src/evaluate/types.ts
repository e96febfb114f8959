// Shapes shared by the evaluate modes: validated questions, answers, and a protocol's evaluate settings.
import type { GatewayError } from '../base/errors.js';

export const QUESTION_TYPES = ['boolean', 'noul', 'choice', 'score'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

export interface ChoiceOption {
  key: string;
  description: string;
}

/** A question after validation; `options` only on choice, `criteria` only on score. */
export interface Question {
  id: string;
  type: QuestionType;
  instructions: string;
  options?: ChoiceOption[];
  criteria?: string[];
}

export type Answer =
  | { type: 'boolean'; probability: number }
  | { type: 'noul'; noul: number }
  | { type: 'choice'; choice: string; probabilities: Record<string, number> }
  | { type: 'score'; score: number; probabilities: Record<string, number> };

/** The `evaluate:` section of a protocol, defaults applied by its schema. */
export interface EvaluateSettings {
  mode: 'native' | 'logprobs';
  operation: string;
  typeAliases?: Partial<Record<QuestionType, QuestionType>>;
  /** native: mappings compiled at load (src/engine/mapping/). */
  request?: unknown;
  response?: unknown;
  parameters: Record<string, unknown>;
  labels: { yes: string; no: string; choice: string[]; score: string[] };
  prompts?: { state: { role: string; content: string }; boolean: string; choice: string; score: string };
  labelMassThreshold: number;
  concurrency: number;
}

/** What a mode hands back: answers so far and the failure that ends the request, if any (usage is the pipeline's). */
export interface ModeResult {
  answers: Map<string, Answer>;
  error?: GatewayError;
}
