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

async function assertRejected(file: string, specifier: string, rule: string): Promise<void> {
  const found = await layerFindings(file, specifier);
  assert.equal(found.length, 1, `${file} importing ${specifier}: ${JSON.stringify(found)}`);
  assert.ok(found[0]!.startsWith(`${rule}: `), found[0]);
}

async function assertAllowed(file: string, specifier: string): Promise<void> {
  assert.deepEqual(await layerFindings(file, specifier), [], `${file} may import ${specifier}`);
}

describe('layers enforced by path (eslint.config.mjs)', () => {
  it('src/core imports neither vscode nor src/vscode, src/cli, src/webview', async () => {
    await assertRejected('src/core/chat/bad.ts', 'vscode', 'no-restricted-imports');
    await assertRejected('src/core/chat/bad.ts', '../../vscode/extension', 'import/no-restricted-paths');
    await assertRejected('src/core/chat/bad.ts', '../../cli/main', 'import/no-restricted-paths');
    await assertRejected('src/core/chat/bad.ts', '../../webview/chat/chatPanel', 'import/no-restricted-paths');
    await assertAllowed('src/core/chat/ok.ts', './conversation');
    await assertAllowed('src/core/chat/ok.ts', '../../protocol');
    await assertAllowed('src/core/chat/ok.ts', 'node:fs');
  });

  it('src/webview imports only src/protocol and browser libraries', async () => {
    for (const bare of ['node:fs', 'fs', 'path', 'crypto', 'child_process', 'fs/promises', 'undici', 'execa', 'vscode']) {
      await assertRejected('src/webview/chat/bad.ts', bare, 'no-restricted-imports');
    }
    await assertRejected('src/webview/chat/bad.ts', '../../core/chat/conversation', 'import/no-restricted-paths');
    await assertRejected('src/webview/chat/bad.ts', '../../vscode/extension', 'import/no-restricted-paths');
    await assertRejected('src/webview/chat/bad.ts', '../../cli/main', 'import/no-restricted-paths');
    await assertAllowed('src/webview/chat/ok.ts', '../../protocol');
    await assertAllowed('src/webview/chat/ok.ts', '../shared/dom');
    await assertAllowed('src/webview/chat/ok.ts', 'dompurify');
  });

  it('src/protocol imports nothing of ours but itself (and nothing browser-unsafe)', async () => {
    await assertRejected('src/protocol/bad.ts', '../core/chat/conversation', 'import/no-restricted-paths');
    await assertRejected('src/protocol/bad.ts', '../webview/shared/dom', 'import/no-restricted-paths');
    await assertRejected('src/protocol/bad.ts', '../vscode/extension', 'import/no-restricted-paths');
    await assertRejected('src/protocol/bad.ts', 'node:path', 'no-restricted-imports');
    await assertAllowed('src/protocol/ok.ts', './limits');
    await assertAllowed('src/protocol/ok.ts', 'zod');
  });

  it('the adapters (src/vscode, src/cli) do not import each other or the webviews', async () => {
    await assertRejected('src/vscode/bad.ts', '../cli/main', 'import/no-restricted-paths');
    await assertRejected('src/vscode/bad.ts', '../webview/chat/chatPanel', 'import/no-restricted-paths');
    await assertRejected('src/cli/bad.ts', '../vscode/extension', 'import/no-restricted-paths');
    await assertAllowed('src/vscode/ok.ts', 'vscode');
    await assertAllowed('src/vscode/ok.ts', '../core/chat/conversation');
    await assertAllowed('src/cli/ok.ts', '../core/chat/conversation');
  });

  it('nothing in src/ imports test/ or bench/', async () => {
    await assertRejected('src/vscode/bad.ts', '../../test/support/server', 'import/no-restricted-paths');
    await assertRejected('src/core/chat/bad.ts', '../../../test/support/server', 'import/no-restricted-paths');
    await assertRejected('src/core/chat/bad.ts', '../../../bench/client', 'import/no-restricted-paths');
    // tests import whatever they test
    await assertAllowed('test/support/ok.ts', '../../src/vscode/extension');
  });
});
