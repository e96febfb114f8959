// What the pipeline sees of the guardrails a config declares (built in src/guardrails at load): the chain that applies
// to a call, and its three stages. Absent from the config when no guardrail is declared, so a call checks nothing.
import type { GuardrailVerdict } from '../config/types.js';
import type { StreamMapper } from './stream-mapper.js';

export type { GuardrailVerdict };

/** Where a chain's verdicts go (the call's request-log row and metrics). */
export type VerdictSink = (verdict: GuardrailVerdict) => void;

/** The guardrails of one call, in order; a stage is absent when none of them runs there. */
export interface GuardrailChain {
  readonly ids: readonly string[];
  /**
   * input: checks the client's body (in its dialect), redacting matched spans in place; true when it changed. Throws a
   * 400 `guardrail_blocked` naming the guardrail when one blocks.
   */
  input?(body: Record<string, unknown>, dialect: string, sink: VerdictSink): boolean | Promise<boolean>;
  /** output: the answer as the client will get it: unchanged, redacted (a new object), or ended as filtered. */
  output?(answer: unknown, dialect: string, sink: VerdictSink): unknown;
  /** stream: the client's events checked on a window of text as they pass; a block ends the stream with the dialect's error event. */
  stream?(mapper: StreamMapper, dialect: string, sink: VerdictSink): StreamMapper;
}

export interface GuardrailSetup {
  /** The chain for a call to `name` (a route id, model id or alias), with the guardrails `extra` adds (a workspace's, a key's); undefined when none applies. */
  chainFor(name: string, extra?: readonly string[]): GuardrailChain | undefined;
  /** Ids workspaces and keys may add. */
  readonly offered: ReadonlySet<string>;
  /** Each guardrail as its file declares it, by id: what a reload compares. */
  readonly declared: ReadonlyMap<string, unknown>;
}
