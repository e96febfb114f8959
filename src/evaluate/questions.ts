// Validates an evaluate request's questions before any upstream call; every error names the question id and field.
import { clientValue, ValidationError } from '../base/errors.js';
import { QUESTION_TYPES, type ChoiceOption, type Question, type QuestionType } from './types.js';

const MIN_OPTIONS = 2;
const MAX_OPTIONS = 20;
const MIN_CRITERIA = 2;
const MAX_CRITERIA = 10;

/** Fields each question type accepts besides `type`. */
const fieldsByType: Record<QuestionType, string[]> = {
  boolean: ['instructions'],
  noul: ['instructions'],
  choice: ['instructions', 'options'],
  score: ['instructions', 'criteria'],
};

function fail(id: string, field: string, message: string): never {
  // Ids, keys and field names are the client's: echoed as a short prefix at most.
  throw new ValidationError(`question ${clientValue(id)}: ${message}`, `questions.${id.slice(0, 64)}.${field.slice(0, 64)}`, 'invalid_question');
}

const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

function readOptions(id: string, value: unknown): ChoiceOption[] {
  if (!value || typeof value !== 'object' || Array.isArray(value)) fail(id, 'options', '"options" must be an object mapping each option key to its description');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length < MIN_OPTIONS || entries.length > MAX_OPTIONS) {
    fail(id, 'options', `a choice question needs ${MIN_OPTIONS} to ${MAX_OPTIONS} options (got ${entries.length})`);
  }
  return entries.map(([key, description]) => {
    if (key === '') fail(id, 'options', 'option keys must not be empty');
    if (!isNonEmptyString(description)) fail(id, `options.${key}`, `option ${clientValue(key)} needs a non-empty description`);
    return { key, description };
  });
}

function readCriteria(id: string, value: unknown): string[] {
  if (!Array.isArray(value)) fail(id, 'criteria', '"criteria" must be an array of level descriptions, lowest first');
  if (value.length < MIN_CRITERIA || value.length > MAX_CRITERIA) {
    fail(id, 'criteria', `a score question needs ${MIN_CRITERIA} to ${MAX_CRITERIA} criteria (got ${value.length})`);
  }
  value.forEach((level, index) => {
    if (!isNonEmptyString(level)) fail(id, `criteria.${index}`, `criterion ${index} must be a non-empty string`);
  });
  return value as string[];
}

function readQuestion(id: string, raw: unknown): Question {
  if (id === '') fail(id, 'type', 'question ids must not be empty');
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) fail(id, 'type', 'a question must be an object with a "type"');
  const body = raw as Record<string, unknown>;
  const type = body.type;
  if (typeof type !== 'string' || !(QUESTION_TYPES as readonly string[]).includes(type)) {
    fail(id, 'type', `unknown question type ${clientValue(type)}; use one of ${QUESTION_TYPES.join(', ')}`);
  }
  const questionType = type as QuestionType;
  for (const field of Object.keys(body)) {
    if (field !== 'type' && !fieldsByType[questionType].includes(field)) {
      fail(id, field, `field ${clientValue(field)} does not apply to ${questionType} questions (they take ${fieldsByType[questionType].join(', ')})`);
    }
  }
  if (!isNonEmptyString(body.instructions)) fail(id, 'instructions', '"instructions" (the text of the question) is required');
  const question: Question = { id, type: questionType, instructions: body.instructions };
  if (questionType === 'choice') question.options = readOptions(id, body.options);
  if (questionType === 'score') question.criteria = readCriteria(id, body.criteria);
  return question;
}

/** Every question of the request, in the order the client sent them, or a 400 for the first bad one. */
export function readQuestions(value: unknown, maxQuestions: number): Question[] {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ValidationError('"questions" must be an object mapping question ids to questions', 'questions');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) throw new ValidationError('"questions" is empty; ask at least one question', 'questions', 'invalid_question');
  if (entries.length > maxQuestions) {
    throw new ValidationError(`too many questions: at most ${maxQuestions} per request (got ${entries.length})`, 'questions', 'too_many_questions');
  }
  return entries.map(([id, raw]) => readQuestion(id, raw));
}

/** The state as prompt text: strings as given, objects and arrays as compact JSON. */
export function stateText(state: unknown): string {
  return typeof state === 'string' ? state : JSON.stringify(state);
}
