// Layering is enforced here: src/core and src/protocol run outside VS Code (CLI, tests, benchmarks) and must
// never import `vscode`; the webview runs in a browser and must import neither `vscode` nor node built-ins.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = ['fs', 'path', 'os', 'child_process', 'net', 'http', 'https', 'crypto', 'stream', 'util', 'events'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.venv/**', '.cache/**', '.vscode-test/**', 'out/**', 'test-results/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
    },
  },
  {
    files: ['src/core/**/*.ts', 'src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: 'src/core and src/protocol must stay VS Code-free: put VS Code code in src/vscode.' }] }],
    },
  },
  {
    files: ['src/webview/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'vscode', message: 'The webview runs in a browser.' }],
        patterns: [{ group: [...nodeBuiltins, ...nodeBuiltins.map((m) => `node:${m}`)], message: 'The webview runs in a browser.' }],
      }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', AbortController: 'readonly', fetch: 'readonly', performance: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly', document: 'readonly', window: 'readonly' } },
  },
);
