// An `http` guardrail: the request's texts POSTed to the operator's guard service, signed as webhooks are (Standard
// Webhooks, base/signed-request.ts) when a secret is configured, under the guardrail's deadline and fail mode
// (bounded.ts). The service's verdict (http-verdict.ts) allows, blocks, or redacts spans or whole texts in place;
// `action: flag` records what it said and changes nothing.
import { request } from '../net/undici.js';
import { signedHeaders } from '../base/signed-request.js';
import type { CheckContext } from '../engine/guardrails.js';
import { readCapped } from '../net/read-capped.js';
import { bounded, type Bounds } from './bounded.js';
import type { Action, AnswerCallResult, CallingAnswerGuardrail, Decision, RequestGuardrail, Stage } from './guardrail.js';
import { readServiceVerdict, type ServiceVerdict } from './http-verdict.js';
import { redactSpans, replaceTexts, textsOf, walkTexts } from './text.js';

export interface HttpGuardSpec {
  url: string;
  /** The signing secret (`whsec_` + base64), read from the environment at load; unsigned without one. */
  secret?: string;
}

/** The most an answer may hold: its texts back, with room for the JSON around them. */
const answerLimit = (sentBytes: number) => Math.max(64 * 1024, 2 * sentBytes + 4096);

const counted = (labels: readonly string[], fallback: string): Record<string, number> => {
  const matches: Record<string, number> = {};
  for (const label of labels.length ? labels : [fallback]) matches[label] = (matches[label] ?? 0) + 1;
  return matches;
};

export class HttpGuardrail implements RequestGuardrail, CallingAnswerGuardrail {
  readonly kind = 'http';
  readonly refusesStreams: boolean;

  constructor(
    readonly id: string,
    readonly action: Action,
    readonly stages: ReadonlySet<Stage>,
    private readonly bounds: Bounds,
    private readonly spec: HttpGuardSpec,
  ) {
    this.refusesStreams = stages.has('output') && action !== 'flag';
  }

  checkRequest(body: Record<string, unknown>, context: CheckContext): Decision | Promise<Decision> {
    const texts = textsOf(body);
    if (!texts.length) return { verdict: 'pass' };
    return bounded(this.bounds, context, async (signal) => this.apply(await this.ask(texts, 'input', context, signal), (edit) => replaceTexts(body, edit)));
  }

  /** The answer's texts sent as the input's are (`stage: "output"`); a redaction applies to a copy of the answer. */
  async checkAnswerByCall(answer: unknown, context: CheckContext): Promise<AnswerCallResult> {
    const texts = textsOf(answer);
    if (!texts.length) return { decision: { verdict: 'pass' }, answer };
    let out = answer;
    const decision = await bounded(this.bounds, context, async (signal) =>
      this.apply(await this.ask(texts, 'output', context, signal), (edit) => {
        let index = 0;
        out = walkTexts(answer, (text) => edit(text, index++), true);
      }),
    );
    return { decision, answer: out };
  }

  /** One signed POST of the texts; the service's verdict, read strictly. */
  private async ask(texts: string[], stage: Stage, context: CheckContext, signal: AbortSignal): Promise<ServiceVerdict> {
    const payload = JSON.stringify({ guardrail: this.id, stage, request_id: context.requestId, workspace_id: context.workspaceId, model: context.model, texts });
    const id = `${context.requestId}.${this.id}`;
    const headers = this.spec.secret ? signedHeaders(id, payload, [this.spec.secret]) : { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
    const res = await request(this.spec.url, { method: 'POST', headers, body: payload, signal });
    const raw = await readCapped(res.body, answerLimit(Buffer.byteLength(payload)), () => Object.assign(new Error('the guard service answered too much'), { code: 'guard_answer_too_large' }));
    if (res.statusCode !== 200) throw Object.assign(new Error('the guard service failed'), { code: `status_${res.statusCode}` });
    return readServiceVerdict(JSON.parse(raw.toString('utf8')), texts, this.id);
  }

  /** The verdict applied as the guardrail's action allows; a redaction through `rewrite`, which gives each text, by index, to its edit. */
  private apply(answer: ServiceVerdict, rewrite: (edit: (text: string, index: number) => string | undefined) => void): Decision {
    if (answer.verdict === 'allow') return { verdict: 'pass' };
    const matches = counted(answer.verdict === 'redact' && !answer.labels.length ? [...answer.spans.values()].flat().map((s) => s.detector) : answer.labels, this.id);
    if (this.action === 'flag') return { verdict: 'flag', matches };
    if (answer.verdict === 'block') return { verdict: 'block', matches };
    // A text the service gave back whole takes its place; else its spans are redacted.
    rewrite((text, i) => {
      const whole = answer.texts.get(i);
      if (whole !== undefined) return whole;
      const spans = answer.spans.get(i);
      return spans ? redactSpans(text, spans) : undefined;
    });
    return { verdict: 'redact', matches };
  }
}
