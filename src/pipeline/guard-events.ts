// Where guardrail blocks are told (the webhooks' outbox, guardrail.blocked): named apart from the stage that tells them,
// so the pipeline's deps name it without a circle through the call.
import type { GuardrailVerdict } from '../config/types.js';

/** A guardrail's block, as a webhook event tells it (guardrail.blocked). */
export interface GuardrailBlock {
  workspaceId: string;
  keyId: string;
  requestId: string;
  model: string;
  verdict: GuardrailVerdict;
}

/** Where blocks are told (the webhooks' outbox); absent where no one listens. */
export interface GuardrailEvents {
  blocked(block: GuardrailBlock): void;
}
