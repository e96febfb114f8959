// A `schema` guardrail: the answer's text must parse as JSON valid against the operator's JSON Schema (structured
// output enforced at the gateway), checked at the output stage over each whole answer text (answer-text.ts). The
// schema is compiled once at load by Ajv (2020-12, or draft-07 when its `$schema` says so, strict, with formats); a
// schema Ajv refuses is a config error at its place. A streamed answer cannot be checked before it goes out, so a
// blocking schema guardrail refuses a request that asks to stream.
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { answerTexts } from './answer-text.js';
import type { Action, AnswerGuardrail, Decision, Stage } from './guardrail.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

/** The validator of `schema`, or its problems: each with the pointer under the schema it concerns. */
export function compileAnswerSchema(schema: Record<string, unknown>): ValidateFunction | { problems: { pointer: string; message: string }[] } {
  // Strict about the schema's own words (an unknown keyword is a typo), not about the ways JSON Schema lets types be implied.
  const options = { strict: true, strictTypes: false, strictTuples: false, strictRequired: false, allErrors: true, allowUnionTypes: true };
  const ajv = addFormats(typeof schema.$schema === 'string' && DRAFT_07.test(schema.$schema) ? new Ajv(options) : (new Ajv2020(options) as unknown as Ajv));
  if (!ajv.validateSchema(schema)) {
    // The first error at each place: the alternatives of an anyOf add nothing to "must be equal to one of the allowed values".
    const first = new Map<string, string>();
    for (const e of ajv.errors ?? []) if (!first.has(e.instancePath)) first.set(e.instancePath, `not a valid JSON Schema: ${e.message ?? 'invalid'}`);
    return { problems: [...first].map(([pointer, message]) => ({ pointer, message })) };
  }
  try {
    return ajv.compile(schema);
  } catch (err) {
    return { problems: [{ pointer: '', message: `not a usable JSON Schema: ${(err as Error).message.split('\n')[0]}` }] };
  }
}

export class SchemaGuardrail implements AnswerGuardrail {
  readonly kind = 'schema';

  constructor(
    readonly id: string,
    readonly action: Action,
    readonly stages: ReadonlySet<Stage>,
    private readonly validate: ValidateFunction,
  ) {}

  /** A blocking schema guardrail cannot let a stream through unchecked: the request is refused before it is sent. */
  get refusesStreams(): boolean {
    return this.action === 'block';
  }

  checkAnswer(answer: unknown, dialect: string): Decision {
    let invalid = 0;
    let unparsed = 0;
    for (const text of answerTexts(answer, dialect)) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        unparsed++;
        continue;
      }
      if (!this.validate(value)) invalid++;
    }
    if (!invalid && !unparsed) return { verdict: 'pass' };
    const matches = { ...(unparsed ? { not_json: unparsed } : {}), ...(invalid ? { schema: invalid } : {}) };
    return { verdict: this.action === 'flag' ? 'flag' : 'block', matches };
  }
}
