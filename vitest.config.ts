import { defineConfig } from 'vitest/config';

// Three layers, one command (docs/ARCHITECTURE.md, "How each layer is tested"). Integration and e2e tests talk to real processes,
// a real keychain and a real browser, so they get longer timeouts and run files one at a time
// where they share machine resources.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          // electron-store imports `electron`; inlining it lets tests' vi.mock('electron') reach it.
          server: { deps: { inline: ['electron-store'] } },
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
