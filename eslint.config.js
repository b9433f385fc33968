// Lint: typescript-eslint recommended rules plus the layer boundaries of docs/ARCHITECTURE.md
// (the import-walking test in test/unit/boundaries.test.ts enforces the same rules).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { builtinModules } from 'node:module';

// Every Node builtin as a bare specifier, with or without `node:`, with subpaths (`fs/promises`).
// A regex, anchored, so a relative `../domain/x` is not mistaken for Node's `domain` module.
const nodeBuiltins = `^(node:.+|(${builtinModules.filter((m) => !m.startsWith('_')).join('|')})(/.*)?)$`;
// Relative specifiers that climb out of electron/<layer>/ into a sibling layer folder. Lint sees
// only the specifier; test/unit/boundaries.test.ts resolves real paths and is the authority.
const climbsInto = (...folders) => `^(\\.\\./)+(${folders.join('|')})(/|$)`;

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
            { regex: nodeBuiltins, message: 'Bad layering: the renderer has no Node APIs.' },
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
            { regex: nodeBuiltins, message: 'Bad layering: shared/ imports no Node APIs.' },
            { group: ['react', 'react-dom', 'react/*', 'react-dom/*', '**/renderer/**'], message: 'Bad layering: shared/ imports no UI code.' },
          ],
        },
      ],
    },
  },
  {
    files: ['electron/preload/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: nodeBuiltins, message: 'Bad layering: a sandboxed preload has no Node builtins.' },
            { group: ['**/electron/core/**', '**/electron/main/**', '**/renderer/**'], message: 'Bad layering: the preload never bundles main-process or renderer code.' },
            { regex: climbsInto('core', 'main', 'renderer'), message: 'Bad layering: the preload never bundles main-process or renderer code.' },
          ],
        },
      ],
    },
  },
  {
    files: ['electron/main/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/renderer/**'], message: 'Bad layering: main never imports the renderer.' }] },
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
            { regex: climbsInto('main', 'preload', 'renderer'), message: 'Bad layering: electron/core never imports the Electron shell or the renderer.' },
          ],
        },
      ],
    },
  },
);
