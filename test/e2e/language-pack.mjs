// A stub VS Code language pack, so that code-server runs with a display language other than English on a machine
// that cannot download Microsoft's packs. VS Code only switches its locale (vscode.env.language, package.nls.<lang>.json,
// l10n/bundle.l10n.<lang>.json) when a language pack for it is installed; this one translates nothing of VS Code
// itself (its own UI stays English), which is all our checks need: they look at the extension's strings only.
import { mkdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { getRunRoot, installExtension, projectRoot } from './lib.mjs';

export async function installStubLanguagePack({ locale, extensionsDir, userDataDir }) {
  const dir = join(getRunRoot(), `language-pack-${locale}`);
  const name = `e2e-language-pack-${locale}`;
  mkdirSync(join(dir, 'translations'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({
    name, publisher: 'e2e', version: '1.0.0', license: 'MIT', displayName: `Stub language pack (${locale}) for tests`,
    engines: { vscode: '^1.99.0' }, categories: ['Language Packs'],
    contributes: { localizations: [{ languageId: locale, languageName: locale, localizedLanguageName: locale,
      translations: [{ id: 'vscode', path: './translations/main.i18n.json' }] }] },
  }, null, 2));
  writeFileSync(join(dir, 'translations/main.i18n.json'), JSON.stringify({ version: '1.0.0', contents: {} }));
  writeFileSync(join(dir, 'LICENSE'), 'MIT\n');
  const vsix = join(dir, `${name}.vsix`);
  const r = spawnSync(join(projectRoot, 'node_modules/.bin/vsce'), ['package', '--allow-missing-repository', '--out', vsix],
    { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`packaging the stub language pack failed:\n${r.stdout}${r.stderr}`);
  installExtension({ vsix, extensionsDir, userDataDir });
  // The server picks language packs from <user data>/languagepacks.json, which only the desktop app's install path
  // writes; the command-line install does not, so write the entry it would have written.
  writeFileSync(join(userDataDir, 'languagepacks.json'), JSON.stringify({
    [locale]: {
      hash: `e2e${Date.now().toString(16)}`,
      label: locale,
      extensions: [{ extensionIdentifier: { id: `e2e.${name}` }, version: '1.0.0' }],
      translations: { vscode: join(extensionsDir, `e2e.${name}-1.0.0/translations/main.i18n.json`) },
    },
  }));
}
