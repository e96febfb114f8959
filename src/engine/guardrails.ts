// What the pipeline sees of the guardrails a config declares (built in src/guardrails at load): the chain that applies
// to a call, and its three stages. Absent from the config when no guardrail is declared, so a call checks nothing.
import type { GuardrailVerdict } from '../config/types.js';
import type { StreamMapper } from './stream-mapper.js';

export type { GuardrailVerdict };

/** Where a chain's verdicts go (the call's request-log row and metrics). */
export type VerdictSink = (verdict: GuardrailVerdict) => void;

/** A call of another endpoint family made for a guardrail (a moderation model's), as the check asks for it. */
export interface InternalRequest {
  /** The model kind whose endpoint family serves it (`moderation`). */
  modelKind: string;
  body: Record<string, unknown>;
  /** What its request-log row names as its route (`guardrail:<id>`). */
  purpose: string;
}

/** Its answer as the endpoint gave it: the status and the JSON document. */
export interface InternalAnswer {
  status: number;
  body: unknown;
}

/** What a whole-request check may use of the call it checks. */
export interface CheckContext {
  readonly requestId: string;
  readonly workspaceId: string;
  /** The name the client asked for (a route, model or alias). */
  readonly model: string;
  /** Aborts when the call ends early (the client hung up, its deadline passed). */
  readonly signal: AbortSignal;
  /** The call's log: a check that fails says so there (never with the text it checked). */
  readonly log: { warn(obj: object, message: string): void };
  /** Runs `request` as a call of the gateway's own catalogue, billed to this call's workspace and key like any call. */
  internalCall(request: InternalRequest, signal: AbortSignal): Promise<InternalAnswer>;
}

/** What a call's restoring guardrails redacted from its request, for that call's answer (src/guardrails/restore.ts). */
export interface RestoreVault {
  /** How many values it holds: none, and the answer has nothing to restore. */
  readonly size: number;
  /** `text` with every value it holds put back as its placeholder (what a captured answer keeps). */
  hide(text: string): string;
}

/** The guardrails of one call, in order; a stage is absent when none of them runs there. */
export interface GuardrailChain {
  readonly ids: readonly string[];
  /**
   * input: checks the client's body (in its dialect), redacting matched spans in place; true when it changed. Throws a
   * 400 `guardrail_blocked` naming the guardrail when one blocks.
   */
  input?(body: Record<string, unknown>, dialect: string, sink: VerdictSink, context: CheckContext, vault?: RestoreVault): boolean | Promise<boolean>;
  /**
   * outputCalls: the output checks that call out (moderation, http) over a whole answer, awaited before `output` runs:
   * the answer, a redacted copy, or the dialect's filtered ending when one blocks.
   */
  outputCalls?(answer: unknown, dialect: string, sink: VerdictSink, context: CheckContext): Promise<unknown>;
  /** output: the answer as the client will get it: unchanged, redacted (a new object), or ended as filtered; the vault's values restored. */
  output?(answer: unknown, dialect: string, sink: VerdictSink, vault?: RestoreVault): unknown;
  /** stream: the client's events checked on a window of text as they pass; a block ends the stream with the dialect's error event. */
  stream?(mapper: StreamMapper, dialect: string, sink: VerdictSink, vault?: RestoreVault): StreamMapper;
  /**
   * For a call whose answer is its input (a transcript) streamed: throws the 400 `guardrail_blocked` naming the first
   * input guardrail that blocks or redacts (a streamed transcript goes out before it could be checked); flags pass.
   */
  refuseStreamedInput?(sink: VerdictSink): void;
  /** Present when a guardrail restores what it redacts: a fresh vault for one call, passed to each stage. */
  vault?(): RestoreVault;
}

export interface GuardrailSetup {
  /** The chain for a call to `name` (a route id, model id or alias), with the guardrails `extra` adds (a workspace's, a key's); undefined when none applies. */
  chainFor(name: string, extra?: readonly string[]): GuardrailChain | undefined;
  /** Ids workspaces and keys may add. */
  readonly offered: ReadonlySet<string>;
  /** Each guardrail as its file declares it, by id: what a reload compares. */
  readonly declared: ReadonlyMap<string, unknown>;
}
