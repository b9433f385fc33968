// Lint: typescript-eslint recommended rules plus the layer boundaries of DESIGN.md §1
// (the import-walking test in test/unit/boundaries.test.ts enforces the same rules).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const nodeBuiltins = ['node:*', 'fs', 'path', 'os', 'child_process', 'crypto', 'net', 'http', 'https', 'url'];

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-results/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // CommonJS on purpose (electron-builder hooks are require()d).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...globals.node } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/electron/**', 'electron', 'electron/*'], message: 'Bad layering: the renderer never imports main-process code.' },
            { group: nodeBuiltins, message: 'Bad layering: the renderer has no Node APIs.' },
            { group: ['keytar'], message: 'Bad layering: the renderer holds no secrets.' },
          ],
        },
      ],
    },
  },
  {
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['electron', 'electron/*', '**/electron/**'], message: 'Bad layering: shared/ is pure.' },
            { group: nodeBuiltins, message: 'Bad layering: shared/ imports no Node APIs.' },
            { group: ['react', 'react-dom', 'react/*', 'react-dom/*', '**/renderer/**'], message: 'Bad layering: shared/ imports no UI code.' },
          ],
        },
      ],
    },
  },
  {
    files: ['electron/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'Bad layering: electron/core runs in plain Node and never imports electron.' }],
          patterns: [
            { group: ['electron/*', '**/electron/main/**', '**/electron/preload/**', '**/renderer/**'], message: 'Bad layering: electron/core never imports the Electron shell or the renderer.' },
          ],
        },
      ],
    },
  },
);
