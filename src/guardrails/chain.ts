// A call's guardrails in order, as the pipeline runs them: the input stage over the client's request (span finders in one
// walk redacting in place, whole-request checks between them, awaited only when they call out), the output stage over
// the answer (a redacted copy, or the dialect's filtered ending), the stream stage as a wrapper of the stream's mapper
// (stream-guard.ts). A verdict per guardrail and stage goes to the sink; matched text goes nowhere.
import type { CheckContext, GuardrailChain, RestoreVault, VerdictSink } from '../engine/guardrails.js';
import type { StreamMapper } from '../engine/translator.js';
import type { GuardrailVerdict } from '../config/types.js';
import { filteredAnswer } from './endings.js';
import { callsOnAnswers, checksAnswers, checksRequests, findsSpans, guardrailBlocked, type AnswerGuardrail, type CallingAnswerGuardrail, type Decision, type Guardrail, type RequestGuardrail, type SpanGuardrail, type Stage } from './guardrail.js';
import { Vault } from './restore.js';
import { GuardedStream } from './stream-guard.js';
import { countByDetector, redactSpans, walkTexts } from './text.js';

/** Thrown inside an answer's walk when a guardrail blocks it (the answer is then ended as filtered). */
class Blocked {
  constructor(readonly id: string) {}
}

interface Tally {
  matches?: Record<string, number>;
  ms: number;
  blocked: boolean;
}

/** One step of a stage: span finders that share one walk of the body, or one guardrail that judges it whole. */
type Step<Whole> = { spans: SpanGuardrail[] } | { whole: Whole };

/** The stage's guardrails as steps, consecutive span finders grouped into one. */
function stepsOf<Whole extends Guardrail>(guardrails: readonly Guardrail[], isWhole: (g: Guardrail) => g is Whole): Step<Whole>[] {
  const steps: Step<Whole>[] = [];
  for (const guardrail of guardrails) {
    const last = steps[steps.length - 1];
    if (findsSpans(guardrail)) {
      if (last && 'spans' in last) last.spans.push(guardrail);
      else steps.push({ spans: [guardrail] });
    } else if (isWhole(guardrail)) steps.push({ whole: guardrail });
  }
  return steps;
}

/**
 * Runs span finders over every text of `node` in one walk, each text through them in order (a guardrail sees what the
 * ones before it redacted); one verdict per guardrail goes to `sink`. Returns the node, redacted where they said so, and
 * the first that blocked. With `copy` (an answer) a block ends the walk at once (throws Blocked); in place (a request)
 * the walk goes on, its blocked matches redacted too, so no later reader of the body (a captured request-log body)
 * holds what a guardrail refused. A restoring guardrail's redactions are numbered placeholders kept in `vault`.
 */
function runSpans(guardrails: readonly SpanGuardrail[], node: unknown, stage: Stage, copy: boolean, sink: VerdictSink, vault?: Vault): { node: unknown; blockedBy?: string } {
  const tallies: Tally[] = guardrails.map(() => ({ ms: 0, blocked: false }));
  let blockedBy: string | undefined;
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
        blockedBy ??= guardrail.id;
        if (copy) throw new Blocked(guardrail.id);
      }
      if (guardrail.action === 'flag') continue;
      const text = current;
      // A restoring guardrail's values get numbered placeholders, kept for the call's answer.
      if (guardrail.restore && vault) for (const span of spans) span.replacement = vault.placeholder(span.detector, text.slice(span.start, span.end));
      current = redactSpans(current, spans);
    }
    return current === text ? undefined : current;
  };
  try {
    return { node: walkTexts(node, visit, copy), blockedBy };
  } finally {
    guardrails.forEach((g, i) => {
      const { matches, ms, blocked } = tallies[i];
      sink({ id: g.id, stage, verdict: blocked ? 'block' : matches ? g.action : 'pass', ...(matches ? { matches } : {}), ms } satisfies GuardrailVerdict);
    });
  }
}

const verdictOf = (id: string, stage: Stage, decision: Decision, ms: number): GuardrailVerdict => ({
  id,
  stage,
  verdict: decision.verdict,
  ...(decision.matches ? { matches: decision.matches } : {}),
  ms,
  ...(decision.failed ? { failed: decision.failed } : {}),
});

/** Where an input stage stands between its steps: whether the body changed, and the first block with its reason. */
interface InputState {
  changed: boolean;
  blocked?: { id: string; reason?: string };
  vault?: Vault;
}

export class Chain implements GuardrailChain {
  readonly ids: readonly string[];
  private readonly inputs: Step<RequestGuardrail>[];
  private readonly outputs: Step<AnswerGuardrail>[];
  private readonly streams: SpanGuardrail[];
  /** The output guardrails that call out (moderation, http), in order: awaited before the answer's other checks. */
  private readonly answerCalls: CallingAnswerGuardrail[];
  /** The first output guardrail that must see a whole answer, so refuses a request that asks to stream. */
  private readonly wholeAnswers?: AnswerGuardrail | CallingAnswerGuardrail;
  input?: GuardrailChain['input'];
  output?: GuardrailChain['output'];
  outputCalls?: GuardrailChain['outputCalls'];
  stream?: GuardrailChain['stream'];
  vault?: GuardrailChain['vault'];
  refuseStreamedInput?: GuardrailChain['refuseStreamedInput'];

  constructor(
    guardrails: readonly Guardrail[],
    private readonly holdChars: number,
  ) {
    this.ids = guardrails.map((g) => g.id);
    this.inputs = stepsOf(guardrails.filter((g) => g.stages.has('input')), checksRequests);
    this.outputs = stepsOf(guardrails.filter((g) => g.stages.has('output')), checksAnswers);
    this.streams = guardrails.filter((g) => g.stages.has('stream')).filter(findsSpans);
    const atOutput = guardrails.filter((g) => g.stages.has('output'));
    this.answerCalls = atOutput.filter(callsOnAnswers);
    this.wholeAnswers = atOutput.find((g) => (checksAnswers(g) || callsOnAnswers(g)) && g.refusesStreams) as AnswerGuardrail | CallingAnswerGuardrail | undefined;
    // A stage none of the guardrails runs at is absent: the pipeline skips it without a call. A restoring guardrail
    // needs the answer's stages too, to put its values back.
    const restoring = guardrails.some((g) => findsSpans(g) && g.restore);
    if (restoring) this.vault = () => new Vault();
    if (this.inputs.length || this.wholeAnswers) this.input = (body, _dialect, sink, context, vault) => this.runInput(0, body, sink, context, { changed: false, blocked: this.refusedStream(body, sink), vault: vault as Vault | undefined });
    if (this.outputs.length || restoring) this.output = this.checkOutput;
    if (this.answerCalls.length) this.outputCalls = this.callOnOutput;
    const acting = guardrails.find((g) => g.stages.has('input') && g.action !== 'flag');
    if (acting) {
      this.refuseStreamedInput = (sink) => {
        sink({ id: acting.id, stage: 'input', verdict: 'block', matches: { stream: 1 }, ms: 0 });
        throw guardrailBlocked(acting.id, 'input', 'it checks whole transcripts; ask without stream');
      };
    }
    if (this.streams.length || restoring) this.stream = this.guardStream;
  }

  /**
   * The input steps from `from` on, in place (the upstream sees the redacted body); synchronous until a check calls out.
   * After a block the span finders still run (so the body holds none of their matches) and no other check does; then
   * the 400 naming the first guardrail that blocked.
   */
  private runInput(from: number, body: Record<string, unknown>, sink: VerdictSink, context: CheckContext, state: InputState): boolean | Promise<boolean> {
    for (let i = from; i < this.inputs.length; i++) {
      const step = this.inputs[i];
      if ('spans' in step) {
        const { blockedBy } = runSpans(
          step.spans,
          body,
          'input',
          false,
          (verdict) => {
            if (verdict.verdict === 'redact') state.changed = true;
            sink(verdict);
          },
          state.vault,
        );
        if (blockedBy) state.blocked ??= { id: blockedBy };
        continue;
      }
      if (state.blocked) continue;
      const started = performance.now();
      const decided = step.whole.checkRequest(body, context);
      if (decided instanceof Promise) {
        return decided.then((decision) => {
          this.noteInput(step.whole, decision, started, sink, state);
          return this.runInput(i + 1, body, sink, context, state);
        });
      }
      this.noteInput(step.whole, decided, started, sink, state);
    }
    if (state.blocked) throw guardrailBlocked(state.blocked.id, 'input', state.blocked.reason);
    return state.changed;
  }

  /** A request that asks to stream, refused by a guardrail that must see the whole answer (the block the input steps then end with). */
  private refusedStream(body: Record<string, unknown>, sink: VerdictSink): InputState['blocked'] {
    const guardrail = this.wholeAnswers;
    if (!guardrail || body.stream !== true) return undefined;
    sink({ id: guardrail.id, stage: 'input', verdict: 'block', matches: { stream: 1 }, ms: 0 });
    return { id: guardrail.id, reason: 'it checks whole answers; ask without stream' };
  }

  private noteInput(guardrail: RequestGuardrail, decision: Decision, started: number, sink: VerdictSink, state: InputState): void {
    sink(verdictOf(guardrail.id, 'input', decision, performance.now() - started));
    if (decision.verdict === 'redact') state.changed = true;
    if (decision.verdict === 'block') state.blocked ??= { id: guardrail.id, reason: decision.reason };
  }

  /** The answer's checks in order, then the vault's values put back (the checks see placeholders). */
  private checkOutput(answer: unknown, dialect: string, sink: VerdictSink, vault?: RestoreVault): unknown {
    let current = answer;
    for (const step of this.outputs) {
      if ('spans' in step) {
        try {
          current = runSpans(step.spans, current, 'output', true, sink).node;
        } catch (err) {
          if (err instanceof Blocked) return filteredAnswer(answer, dialect, err.id);
          throw err;
        }
        continue;
      }
      const started = performance.now();
      const decision = step.whole.checkAnswer(current, dialect);
      sink(verdictOf(step.whole.id, 'output', decision, performance.now() - started));
      if (decision.verdict === 'block') return filteredAnswer(answer, dialect, step.whole.id);
    }
    const restore = vault as Vault | undefined;
    if (!restore?.size) return current;
    return walkTexts(current, (text) => {
      const spans = restore.spans(text);
      return spans.length ? redactSpans(text, spans) : undefined;
    }, true);
  }

  /** The output checks that call out, one after another (each sees what the one before redacted); a block ends the answer as filtered. */
  private async callOnOutput(answer: unknown, dialect: string, sink: VerdictSink, context: CheckContext): Promise<unknown> {
    let current = answer;
    for (const guardrail of this.answerCalls) {
      const started = performance.now();
      const result = await guardrail.checkAnswerByCall(current, context);
      sink(verdictOf(guardrail.id, 'output', result.decision, performance.now() - started));
      if (result.decision.verdict === 'block') return filteredAnswer(answer, dialect, guardrail.id);
      current = result.answer;
    }
    return current;
  }

  private guardStream(mapper: StreamMapper, _dialect: string, sink: VerdictSink, vault?: RestoreVault): StreamMapper {
    const restore = vault as Vault | undefined;
    return new GuardedStream(mapper, this.streams, this.holdChars, sink, restore?.size ? restore : undefined);
  }
}
