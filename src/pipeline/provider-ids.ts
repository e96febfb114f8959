// Provider-side ids an answer hands the workspace (a Responses `id`), recorded so a later request naming one is checked
// against the workspace it was handed to (inputs stage). Only an upstream Responses document counts.
import { recordProviderId } from '../store/provider-ids.js';
import type { Call } from './call.js';

export async function recordResponseId(call: Call, document: unknown): Promise<void> {
  if (call.dialect !== 'openai-responses' || !document || typeof document !== 'object') return;
  const { id, object } = document as { id?: unknown; object?: unknown };
  if (object === 'response' && typeof id === 'string') await recordProviderId(call.services.db, 'response', id, call.auth.workspaceId);
}
