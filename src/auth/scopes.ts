// The scopes a key can hold, and which scope each model kind needs.
import type { ModelKind } from '../config/types.js';

export const SCOPES = ['llm.evaluate', 'llm.chat', 'images.generate', 'videos.generate', 'files.write'] as const;
export type Scope = (typeof SCOPES)[number];

export const scopeForKind: Record<ModelKind, Scope> = {
  chat: 'llm.chat',
  evaluation: 'llm.evaluate',
  image: 'images.generate',
  video: 'videos.generate',
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
