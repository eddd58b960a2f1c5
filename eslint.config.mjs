// Layering is enforced here, by path (docs/ARCHITECTURE.md draws it): src/core is VS Code-free and knows none of
// its adapters (src/vscode, src/cli) nor the webviews; src/webview runs in a browser and imports only
// src/protocol and the browser-safe policy folders of src/core (BROWSER_SAFE_CORE; each imports nothing but
// itself) and browser libraries; src/protocol imports nothing of ours but itself; nothing in src/ imports test/ or
// bench/. test/unit/lint/layers.test.ts proves each rule fires.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import importPlugin from 'eslint-plugin-import';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [...builtinModules.filter((m) => !m.startsWith('_')), 'node:*'];
const NOT_IN_BROWSER = 'runs in a browser (a webview): no node built-ins, no node-only libraries, no vscode.';

/** Bare-module bans (packages and built-ins are not paths, so import/no-restricted-paths cannot see them). */
const banImports = (names, message) => {
  const patterns = names.filter((n) => n.includes('*'));
  return ['error', {
    paths: names.filter((n) => !n.includes('*')).map((name) => ({ name, message })),
    ...(patterns.length ? { patterns: [{ group: patterns, message }] } : {}),
  }];
};

/**
 * Policy the host and the panel must apply alike, as pure functions: the invisible characters the panel marks and
 * the host warns about (text), the links the panel keeps live and the host opens (links), the token estimate, the
 * `/` commands and the meter's sum that the composer shows and the host's budget check and requests follow (composer).
 */
const BROWSER_SAFE_CORE = ['./core/text', './core/links', './core/composer'];

/** Which part of src/ may import which: each zone forbids `target` to import from `from` (except `except`). */
const layerZones = [
  {
    target: './src/core',
    from: ['./src/vscode', './src/cli', './src/webview'],
    message: 'src/core is the shared, VS Code-free policy: the adapters (src/vscode, src/cli) call it, never the other way.',
  },
  {
    target: './src/webview',
    from: './src',
    except: ['./webview', './protocol', ...BROWSER_SAFE_CORE],
    message: `src/webview ${NOT_IN_BROWSER} Of our code it imports only src/protocol and ${BROWSER_SAFE_CORE.map((p) => `src/${p.slice(2)}`).join(', ')}.`,
  },
  ...BROWSER_SAFE_CORE.map((dir) => ({
    target: `./src/${dir.slice(2)}`,
    from: './src',
    // links compare labels after removing the invisible characters text defines
    except: dir === './core/links' ? [dir, './core/text'] : [dir],
    message: `src/${dir.slice(2)} is bundled into the chat panel: it imports nothing of ours but itself${dir === './core/links' ? ' and src/core/text' : ''}.`,
  })),
  {
    target: './src/protocol',
    from: './src',
    except: ['./protocol'],
    message: 'src/protocol is shared by the host and the webviews: it imports nothing of ours but itself.',
  },
  { target: './src/vscode', from: ['./src/cli', './src/webview'], message: 'src/vscode and src/cli are sibling adapters over src/core; the webviews are bundles of their own.' },
  { target: './src/cli', from: ['./src/vscode', './src/webview'], message: 'src/vscode and src/cli are sibling adapters over src/core; the webviews are bundles of their own.' },
  { target: './src', from: ['./test', './bench'], message: 'Production code never imports tests or benchmarks.' },
];

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
    files: ['src/**/*.ts'],
    plugins: { import: importPlugin },
    settings: { 'import/resolver': { node: { extensions: ['.ts', '.mjs', '.js', '.json'] } } },
    // Zones are read from this file's directory, wherever ESLint runs from.
    rules: { 'import/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: layerZones }] },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: { 'no-restricted-imports': banImports(['vscode'], 'src/core stays VS Code-free (the CLI, tests and benchmarks run it): put VS Code code in src/vscode.') },
  },
  {
    files: ['src/webview/**/*.ts'],
    rules: { 'no-restricted-imports': banImports(['vscode', 'undici', 'execa', ...nodeBuiltins], `src/webview ${NOT_IN_BROWSER}`) },
  },
  {
    files: BROWSER_SAFE_CORE.map((dir) => `src/${dir.slice(2)}/**/*.ts`),
    rules: { 'no-restricted-imports': banImports(['vscode', 'undici', 'execa', ...nodeBuiltins], `this part of src/core is bundled into the chat panel and ${NOT_IN_BROWSER}`) },
  },
  {
    files: ['src/protocol/**/*.ts'],
    rules: { 'no-restricted-imports': banImports(['vscode', 'undici', 'execa', ...nodeBuiltins], `src/protocol is bundled into the webviews and ${NOT_IN_BROWSER}`) },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', AbortController: 'readonly', fetch: 'readonly', performance: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly', document: 'readonly', window: 'readonly' } },
  },
);
