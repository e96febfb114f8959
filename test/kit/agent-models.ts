// The models the agent suites (agents-translate, agent-libraries, agent-sessions) serve: one list price for every model,
// Claude models behind the strict fake Claude (installClaude) and OpenAI chat models behind the fake chat upstream.
import { chatChannel } from './gateway.js';

/** The list price every agent-suite model is billed at. */
export const agentPrice = 'price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }';

/**
 * claude-thinks (thinking with a budget; forced-tool structured output), claude-structured (output_config.format) and
 * claude-adaptive (adaptive thinking and output_config.effort, no budget: its upstream id is in the fake's `adaptive`).
 */
export const claudeAgentModels = `  - id: claude-thinks
    upstream: claude-old
    kind: chat
    thinking: true
    ${agentPrice}
  - id: claude-structured
    upstream: claude-new
    kind: chat
    thinking: true
    structuredOutputs: true
    ${agentPrice}
  - id: claude-adaptive
    upstream: claude-next
    kind: chat
    thinking: adaptive
    structuredOutputs: true
    ${agentPrice}
`;

/** The upstream id of claude-adaptive, for the fake Claude's \`adaptive\` set. */
export const adaptiveUpstream = 'claude-next';

/** gpt-plain (a chat model) and gpt-reasoner (a reasoning model taking max_completion_tokens). */
export const openaiAgentModels = `  - id: gpt-plain
    upstream: upstream-chat
    kind: chat
    ${agentPrice}
  - id: gpt-reasoner
    upstream: upstream-reasoner
    kind: chat
    reasoning: true
    ${agentPrice}
`;

/** The Anthropic channel file for `models` on the fake at `fakeUrl`; its key comes from `claudeEnv`. */
export const claudeChannel = (fakeUrl: string, models: string) =>
  chatChannel('claude', `${fakeUrl}/v1`, { protocol: 'anthropic-messages', models, credentialEnv: 'FAKE_ANTHROPIC_KEY' });

export const claudeEnv = { FAKE_ANTHROPIC_KEY: 'sk-ant-upstream' };
