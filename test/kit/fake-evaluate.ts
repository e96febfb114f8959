// Evaluate fakes: a System-One-style native evaluate route, and scripted first-token logprobs from the openai-chat fake.
import type { ServerResponse } from 'node:http';
import { json, type FakeUpstream, type RecordedRequest } from './fake-upstream.js';

type NativeQuestion = { type: string; instructions: string; options?: Record<string, string>; criteria?: string[] };

/** The answers a native upstream gives unless a test scripts others. */
export function defaultNativeAnswer(question: NativeQuestion): unknown {
  switch (question.type) {
    case 'noul':
      return { type: 'noul', noul: 0.8 };
    case 'boolean':
      return { type: 'boolean', probability: 0.8 };
    case 'choice': {
      const keys = Object.keys(question.options ?? {});
      return { type: 'choice', choice: keys[0], probabilities: Object.fromEntries(keys.map((k, i) => [k, i === 0 ? 0.7 : 0.3 / (keys.length - 1)])) };
    }
    case 'score': {
      const n = question.criteria?.length ?? 0;
      return { type: 'score', score: 0, probabilities: Object.fromEntries(Array.from({ length: n }, (_v, i) => [String(i), i === n - 1 ? 0.5 : 0.5 / (n - 1)])) };
    }
    default:
      return { type: question.type };
  }
}

export interface NativeEvaluateScript {
  /** Answer for one question; `undefined` leaves it out of the upstream answer. */
  answer: (id: string, question: NativeQuestion) => unknown;
  usage: (questionCount: number) => { inputTokens: number; outputTokens: number };
}

/** Adds a native evaluate route (POST .../evaluate) to a fake; the returned script can be changed per test. */
export function installNativeEvaluate(fake: FakeUpstream): NativeEvaluateScript {
  const script: NativeEvaluateScript = {
    answer: (_id, q) => defaultNativeAnswer(q),
    usage: (n) => ({ inputTokens: 100 + 10 * n, outputTokens: 3 * n }),
  };
  fake.route((req, res) => {
    if (req.method !== 'POST' || !req.path.endsWith('/evaluate')) return false;
    const questions = (req.body?.questions ?? {}) as Record<string, NativeQuestion>;
    const answers: Record<string, unknown> = {};
    for (const [id, q] of Object.entries(questions)) {
      const answer = script.answer(id, q);
      if (answer !== undefined) answers[id] = answer;
    }
    json(res, 200, { model: req.body?.model, answers, usage: script.usage(Object.keys(questions).length) });
    return true;
  });
  return script;
}

/** One scripted logprob answer: token -> probability for the first token's top alternatives. */
export interface LogprobAnswer {
  top?: Record<string, number>;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Send `logprobs: null`, as a channel without logprob support does. */
  noLogprobs?: boolean;
  /** Fail with this HTTP status instead of answering. */
  status?: number;
}

/** A chat completion carrying the given first-token alternatives. */
export function logprobCompletion(model: string, answer: LogprobAnswer) {
  const entries = Object.entries(answer.top ?? {}).sort((a, b) => b[1] - a[1]);
  const usage = answer.usage ?? { prompt_tokens: 50, completion_tokens: 1 };
  const [token, p] = entries[0] ?? ['?', 1];
  return {
    id: 'chatcmpl-fake-eval',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: token },
        logprobs: answer.noLogprobs
          ? null
          : { content: [{ token, logprob: Math.log(p), bytes: null, top_logprobs: entries.map(([t, q]) => ({ token: t, logprob: Math.log(q), bytes: null })) }], refusal: null },
        finish_reason: 'length',
      },
    ],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

export interface LogprobScript {
  /** Answers keyed by a piece of question instructions found in the prompt's last message. */
  byInstruction: Map<string, LogprobAnswer>;
  fallback: LogprobAnswer;
  /** Awaited before each answer: lets a test hold requests until an event (e.g. N in flight). */
  gate?: (req: RecordedRequest) => Promise<void>;
}

/** Answers every chat request that asks for logprobs from a script; other chat requests fall through to the built-in route. */
export function installLogprobs(fake: FakeUpstream): LogprobScript {
  const script: LogprobScript = { byInstruction: new Map(), fallback: { top: { Yes: 0.7, No: 0.3 } } };
  fake.route(async (req: RecordedRequest, res: ServerResponse) => {
    if (req.method !== 'POST' || !req.path.endsWith('/chat/completions') || req.body?.logprobs !== true) return false;
    const prompt = String(req.body.messages?.at(-1)?.content ?? '');
    const answer = [...script.byInstruction].find(([piece]) => prompt.includes(piece))?.[1] ?? script.fallback;
    if (script.gate) await script.gate(req);
    if (answer.status) json(res, answer.status, { error: { message: `scripted status ${answer.status}` } });
    else json(res, 200, logprobCompletion(req.body.model, answer));
    return true;
  });
  return script;
}

/** A gate that holds requests until `size` are waiting, then lets that batch through; `maxWaiting` is the most ever held at once. */
export function batchGate(size: number) {
  let waiting: (() => void)[] = [];
  const gate = {
    maxWaiting: 0,
    wait: () =>
      new Promise<void>((resolve) => {
        waiting.push(resolve);
        gate.maxWaiting = Math.max(gate.maxWaiting, waiting.length);
        if (waiting.length === size) {
          const batch = waiting;
          waiting = [];
          batch.forEach((release) => release());
        }
      }),
  };
  return gate;
}
