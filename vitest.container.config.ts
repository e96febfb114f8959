import { defineConfig } from 'vitest/config';

/** `npm run test:container` (scripts/test-container.sh, after it built the images): the image and the compose fleet. */
export default defineConfig({
  test: {
    include: ['test/container/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    pool: 'forks',
  },
});
