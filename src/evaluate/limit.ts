// Runs tasks with at most `limit` in flight, and stops starting new ones once `stopped()` says so.

export async function runLimited<T>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<void>, stopped: () => boolean = () => false): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !stopped()) {
      const index = next++;
      await task(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
