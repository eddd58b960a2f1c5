// The layer rules of eslint.config.mjs fire: the project's own config (copied verbatim) lints small files in a
// throwaway tree shaped like the repository (so every import resolves, whatever the real tree holds today), one
// deliberately bad import each, and the imports each layer is allowed stay clean.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ESLint } from 'eslint';

const root = join(__dirname, '../../..');
const LAYER_RULES = new Set(['import/no-restricted-paths', 'no-restricted-imports']);

/** Files the probes import: one per part of the tree. */
const TREE = [
  'src/core/chat/conversation.ts',
  'src/core/text/invisibleCharacters.ts',
  'src/core/links/linkPolicy.ts',
  'src/cli/main.ts',
  'src/vscode/extension.ts',
  'src/webview/chat/chatPanel.ts',
  'src/webview/shared/dom.ts',
  'src/protocol/index.ts',
  'src/protocol/limits.ts',
  'test/support/server.ts',
  'bench/client.ts',
];

let fixture: string;
let eslint: ESLint;

before(() => {
  fixture = mkdtempSync(join(tmpdir(), 'lint-layers-'));
  for (const file of TREE) {
    mkdirSync(dirname(join(fixture, file)), { recursive: true });
    writeFileSync(join(fixture, file), 'export const probe = 1;\n');
  }
  // The repository's config file next to the tree (its paths are read from its own directory) and its packages.
  copyFileSync(join(root, 'eslint.config.mjs'), join(fixture, 'eslint.config.mjs'));
  symlinkSync(join(root, 'node_modules'), join(fixture, 'node_modules'), 'dir');
  eslint = new ESLint({ cwd: fixture });
});

after(() => {
  if (fixture) rmSync(fixture, { recursive: true, force: true });
});

/** The layer-rule findings for `file` holding `import '<specifier>'`. */
async function layerFindings(file: string, specifier: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import '${specifier}';\n`, { filePath: join(fixture, file) });
  assert.ok(result, 'linted');
  return result.messages.filter((m) => m.ruleId && LAYER_RULES.has(m.ruleId)).map((m) => `${m.ruleId}: ${m.message}`);
}

const PATHS = 'import/no-restricted-paths';
const NAMES = 'no-restricted-imports';

/** [file, what it imports, the rule that must refuse it]: one deliberately bad import per row. */
type Rejected = [file: string, specifier: string, rule: string];
/** [file, what it imports]: imports the layer is allowed. */
type Allowed = [file: string, specifier: string];

const LAYERS: { rule: string; rejected: Rejected[]; allowed: Allowed[] }[] = [
  {
    rule: 'src/core imports neither vscode nor src/vscode, src/cli, src/webview',
    rejected: [
      ['src/core/chat/bad.ts', 'vscode', NAMES],
      ['src/core/chat/bad.ts', '../../vscode/extension', PATHS],
      ['src/core/chat/bad.ts', '../../cli/main', PATHS],
      ['src/core/chat/bad.ts', '../../webview/chat/chatPanel', PATHS],
    ],
    allowed: [['src/core/chat/ok.ts', './conversation'], ['src/core/chat/ok.ts', '../../protocol'], ['src/core/chat/ok.ts', 'node:fs']],
  },
  {
    rule: 'src/webview imports only src/protocol, the browser-safe parts of src/core and browser libraries',
    rejected: [
      ...['node:fs', 'fs', 'path', 'crypto', 'child_process', 'fs/promises', 'undici', 'execa', 'vscode']
        .map((bare): Rejected => ['src/webview/chat/bad.ts', bare, NAMES]),
      ['src/webview/chat/bad.ts', '../../core/chat/conversation', PATHS],
      ['src/webview/chat/bad.ts', '../../vscode/extension', PATHS],
      ['src/webview/chat/bad.ts', '../../cli/main', PATHS],
    ],
    allowed: [
      ['src/webview/chat/ok.ts', '../../protocol'], ['src/webview/chat/ok.ts', '../shared/dom'], ['src/webview/chat/ok.ts', 'dompurify'],
      ['src/webview/chat/ok.ts', '../../core/text/invisibleCharacters'], ['src/webview/chat/ok.ts', '../../core/links/linkPolicy'],
    ],
  },
  {
    rule: 'the browser-safe parts of src/core (text, links) import nothing of ours but themselves (links: and text), and nothing a browser lacks',
    rejected: [
      ['src/core/text/bad.ts', '../chat/conversation', PATHS],
      ['src/core/text/bad.ts', '../links/linkPolicy', PATHS],
      ['src/core/links/bad.ts', '../../protocol', PATHS],
      ['src/core/links/bad.ts', 'node:url', NAMES],
      ['src/core/text/bad.ts', 'vscode', NAMES],
    ],
    allowed: [['src/core/text/ok.ts', './invisibleCharacters'], ['src/core/links/ok.ts', './linkPolicy'], ['src/core/links/ok.ts', '../text/invisibleCharacters']],
  },
  {
    rule: 'src/protocol imports nothing of ours but itself (and nothing a browser lacks)',
    rejected: [
      ['src/protocol/bad.ts', '../core/chat/conversation', PATHS],
      ['src/protocol/bad.ts', '../webview/shared/dom', PATHS],
      ['src/protocol/bad.ts', '../vscode/extension', PATHS],
      ['src/protocol/bad.ts', 'node:path', NAMES],
    ],
    allowed: [['src/protocol/ok.ts', './limits'], ['src/protocol/ok.ts', 'zod']],
  },
  {
    rule: 'the adapters (src/vscode, src/cli) do not import each other or the webviews',
    rejected: [
      ['src/vscode/bad.ts', '../cli/main', PATHS],
      ['src/vscode/bad.ts', '../webview/chat/chatPanel', PATHS],
      ['src/cli/bad.ts', '../vscode/extension', PATHS],
    ],
    allowed: [['src/vscode/ok.ts', 'vscode'], ['src/vscode/ok.ts', '../core/chat/conversation'], ['src/cli/ok.ts', '../core/chat/conversation']],
  },
  {
    rule: 'nothing in src/ imports test/ or bench/',
    rejected: [
      ['src/vscode/bad.ts', '../../test/support/server', PATHS],
      ['src/core/chat/bad.ts', '../../../test/support/server', PATHS],
      ['src/core/chat/bad.ts', '../../../bench/client', PATHS],
    ],
    // tests import whatever they test
    allowed: [['test/support/ok.ts', '../../src/vscode/extension']],
  },
];

describe('layers enforced by path (eslint.config.mjs)', () => {
  for (const layer of LAYERS) {
    it(layer.rule, async () => {
      for (const [file, specifier, rule] of layer.rejected) {
        const found = await layerFindings(file, specifier);
        assert.equal(found.length, 1, `${file} importing ${specifier}: ${JSON.stringify(found)}`);
        assert.ok(found[0]!.startsWith(`${rule}: `), found[0]);
      }
      for (const [file, specifier] of layer.allowed) {
        assert.deepEqual(await layerFindings(file, specifier), [], `${file} may import ${specifier}`);
      }
    });
  }
});
