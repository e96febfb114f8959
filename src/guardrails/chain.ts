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

/** Thrown inside a walk when a guardrail blocks an answer (the answer is then ended as filtered), or after a request's walk. */
class Blocked {
  constructor(readonly id: string) {}
}

interface Tally {
  matches?: Record<string, number>;
  ms: number;
  blocked: boolean;
}

/**
 * Runs the guardrails over every text of `node` in one walk, each text through them in order (a guardrail sees what
 * the ones before it redacted); one verdict per guardrail goes to `sink`. Returns the node, redacted where they said so.
 * A block ends an answer's walk at once; a request's walk goes on, its blocked matches redacted in place, so no later
 * reader of the body (a captured request-log body) holds what a guardrail refused, and throws at its end.
 */
function runAll(guardrails: readonly Guardrail[], node: unknown, stage: Stage, copy: boolean, sink: VerdictSink): unknown {
  const tallies: Tally[] = guardrails.map(() => ({ ms: 0, blocked: false }));
  let blockedBy: Guardrail | undefined;
  const report = () =>
    guardrails.forEach((g, i) => {
      const { matches, ms, blocked } = tallies[i];
      sink({ id: g.id, stage, verdict: blocked ? 'block' : matches ? g.action : 'pass', ...(matches ? { matches } : {}), ms } satisfies GuardrailVerdict);
    });
  const visit = (text: string): string | undefined => {
    let current = text;
    for (let i = 0; i < guardrails.length; i++) {
      const guardrail = guardrails[i];
      const started = performance.now();
      const spans = guardrail.spans(current);
      tallies[i].ms += performance.now() - started;
      if (!spans.length) continue;
      tallies[i].matches = countByDetector(spans, tallies[i].matches);
      if (guardrail.action === 'block') {
        tallies[i].blocked = true;
        blockedBy ??= guardrail;
        if (copy) throw new Blocked(guardrail.id);
      }
      if (guardrail.action !== 'flag') current = redactSpans(current, spans);
    }
    return current === text ? undefined : current;
  };
  try {
    const out = walkTexts(node, visit, copy);
    if (blockedBy) throw new Blocked(blockedBy.id);
    return out;
  } finally {
    report();
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
    try {
      // In place: the upstream sees the redacted body.
      runAll(this.inputs, body, 'input', false, (verdict) => {
        if (verdict.verdict === 'redact') changed = true;
        sink(verdict);
      });
    } catch (err) {
      if (err instanceof Blocked) throw guardrailBlocked(err.id, 'input');
      throw err;
    }
    return changed;
  }

  private checkOutput(answer: unknown, dialect: string, sink: VerdictSink): unknown {
    try {
      return runAll(this.outputs, answer, 'output', true, sink);
    } catch (err) {
      if (err instanceof Blocked) return filteredAnswer(answer, dialect);
      throw err;
    }
  }

  private guardStream(mapper: StreamMapper, _dialect: string, sink: VerdictSink): StreamMapper {
    return new GuardedStream(mapper, this.streams, this.holdChars, sink);
  }
}
