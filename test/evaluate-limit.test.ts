import { describe, expect, it } from 'vitest';
import { runLimited } from '../src/evaluate/limit.js';

/** Tasks that each wait for the test to finish them, announcing when they start. */
function controlledTasks() {
  const finishers: (() => void)[] = [];
  let inFlight = 0;
  let onStart: (() => void) | undefined;
  const state = {
    started: 0,
    maxInFlight: 0,
    finish: (i: number) => finishers[i](),
    nextStart: () => new Promise<void>((resolve) => (onStart = resolve)),
    task: (_item: number, index: number) =>
      new Promise<void>((resolve) => {
        state.started++;
        inFlight++;
        state.maxInFlight = Math.max(state.maxInFlight, inFlight);
        finishers[index] = () => {
          inFlight--;
          resolve();
        };
        onStart?.();
      }),
  };
  return state;
}

describe('runLimited', () => {
  it('starts exactly `limit` tasks, and one more each time one finishes', async () => {
    const tasks = controlledTasks();
    const done = runLimited([0, 1, 2, 3, 4, 5, 6], 3, tasks.task);
    expect(tasks.started).toBe(3);
    const started = tasks.nextStart();
    tasks.finish(1);
    await started;
    expect(tasks.started).toBe(4);
    // Each finish frees a slot for the next item until none remain.
    for (const [index, startsAnother] of [[0, true], [2, true], [3, true], [4, false], [5, false], [6, false]] as const) {
      const next = startsAnother ? tasks.nextStart() : undefined;
      tasks.finish(index);
      await next;
    }
    await done;
    expect(tasks.started).toBe(7);
    expect(tasks.maxInFlight).toBe(3);
  });

  it('starts nothing new once stopped, and waits for the tasks in flight', async () => {
    const tasks = controlledTasks();
    let stop = false;
    const done = runLimited([0, 1, 2, 3, 4], 2, tasks.task, () => stop);
    stop = true;
    tasks.finish(0);
    tasks.finish(1);
    await done;
    expect(tasks.started).toBe(2);
  });
});
