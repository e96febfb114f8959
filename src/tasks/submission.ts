// What a created task hands the runner to submit.
import type { ModelRoute } from '../config/types.js';
import type { CompiledTask } from './spec.js';
import type { TaskRow } from './store.js';

/** What a created task hands the runner to submit: the rendered document and, for multipart, the reference image. */
export interface Submission {
  row: TaskRow;
  routes: ModelRoute[];
  task: CompiledTask;
  document: Record<string, unknown>;
  /** Called once the submit has ended, however it ended (lets go of the reference bytes the document holds). */
  done?: () => void;
}
