// A call's guardrails in order, as the pipeline runs them: the input stage over the client's texts (redacting in place),
// the output stage over the answer's (a redacted copy, or the dialect's filtered ending), the stream stage as a wrapper of
// the stream's mapper (stream-guard.ts). A verdict per guardrail and stage goes to the sink; matched text goes nowhere.
import type { GuardrailChain, VerdictSink } from '../engine/guardrails.js';
import type { StreamMapper } from '../engine/translator.js';
import type { GuardrailVerdict } from '../config/types.js';
import { filteredAnswer } from './endings.js';
import { guardrailBlocked, type Guardrail, type Stage } from './guardrail.js';
import { GuardedStream } from './stream-guard.js';
import { countByDetector, redactSpans, walkTexts } from './text.js';

/** Thrown inside a walk when a guardrail blocks an answer (the answer is then ended as filtered). */
class Blocked {}

/** Runs one guardrail over every text of `node`; its verdict goes to `sink`. Returns the node, redacted where it said so. */
function runOne(guardrail: Guardrail, node: unknown, stage: Stage, copy: boolean, sink: VerdictSink): unknown {
  const started = performance.now();
  let matches: Record<string, number> | undefined;
  let blocked = false;
  const verdict = (): GuardrailVerdict => ({ id: guardrail.id, stage, verdict: !matches ? 'pass' : blocked ? 'block' : guardrail.action, ...(matches ? { matches } : {}), ms: performance.now() - started });
  try {
    const out = walkTexts(
      node,
      (text) => {
        const spans = guardrail.spans(text);
        if (!spans.length) return undefined;
        matches = countByDetector(spans, matches);
        if (guardrail.action === 'block') {
          blocked = true;
          // An answer is ended as filtered at once; a request's matches are redacted in place on the way out, so no
          // later reader of the body (captured request-log bodies) holds what the guardrail refused.
          if (copy) throw new Blocked();
          return redactSpans(text, spans);
        }
        return guardrail.action === 'redact' ? redactSpans(text, spans) : undefined;
      },
      copy,
    );
    sink(verdict());
    if (blocked) throw new Blocked();
    return out;
  } catch (err) {
    if (err instanceof Blocked && copy) sink(verdict());
    throw err;
  }
}

export class Chain implements GuardrailChain {
  readonly ids: readonly string[];
  private readonly inputs: Guardrail[];
  private readonly outputs: Guardrail[];
  private readonly streams: Guardrail[];
  input?: GuardrailChain['input'];
  output?: GuardrailChain['output'];
  stream?: GuardrailChain['stream'];

  constructor(
    guardrails: readonly Guardrail[],
    private readonly holdChars: number,
  ) {
    this.ids = guardrails.map((g) => g.id);
    this.inputs = guardrails.filter((g) => g.stages.has('input'));
    this.outputs = guardrails.filter((g) => g.stages.has('output'));
    this.streams = guardrails.filter((g) => g.stages.has('stream'));
    // A stage none of the guardrails runs at is absent: the pipeline skips it without a call.
    if (this.inputs.length) this.input = this.checkInput;
    if (this.outputs.length) this.output = this.checkOutput;
    if (this.streams.length) this.stream = this.guardStream;
  }

  private checkInput(body: Record<string, unknown>, _dialect: string, sink: VerdictSink): boolean {
    let changed = false;
    for (const guardrail of this.inputs) {
      try {
        // In place: the next guardrail sees the text this one redacted.
        runOne(guardrail, body, 'input', false, (verdict) => {
          if (verdict.verdict === 'redact') changed = true;
          sink(verdict);
        });
      } catch (err) {
        if (err instanceof Blocked) throw guardrailBlocked(guardrail.id, 'input');
        throw err;
      }
    }
    return changed;
  }

  private checkOutput(answer: unknown, dialect: string, sink: VerdictSink): unknown {
    let out = answer;
    for (const guardrail of this.outputs) {
      try {
        out = runOne(guardrail, out, 'output', true, sink);
      } catch (err) {
        if (err instanceof Blocked) return filteredAnswer(answer, dialect);
        throw err;
      }
    }
    return out;
  }

  private guardStream(mapper: StreamMapper, _dialect: string, sink: VerdictSink): StreamMapper {
    return new GuardedStream(mapper, this.streams, this.holdChars, sink);
  }
}
