// HTML shell of our webviews. The Content-Security-Policy allows nothing but our own
// files and scripts carrying this page's nonce: no inline code, no eval, no network.
import { randomBytes } from 'node:crypto';

export interface WebviewHtmlOptions {
  /** `webview.cspSource`: the origin VS Code serves local resources from. */
  cspSource: string;
  nonce: string;
  title: string;
  /** BCP-47 language of the UI (vscode.env.language). */
  lang: string;
  /** `asWebviewUri` strings. */
  styles: readonly string[];
  /** Our bundles (`asWebviewUri` strings); pages have no inline script. */
  scripts: readonly string[];
}

/** 16 random bytes, base64: unguessable per page load. */
export function makeNonce(): string {
  return randomBytes(16).toString('base64');
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource}`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
  ].join('; ');
}

const escapeAttr = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function buildWebviewHtml(o: WebviewHtmlOptions): string {
  if (!/^[A-Za-z0-9+/=]{16,}$/.test(o.nonce)) throw new Error('nonce must be base64 of at least 16 characters');
  const styles = o.styles.map((href) => `  <link rel="stylesheet" href="${escapeAttr(href)}">`).join('\n');
  const scripts = o.scripts.map((src) => `  <script nonce="${o.nonce}" src="${escapeAttr(src)}"></script>`).join('\n');
  return `<!DOCTYPE html>
<html lang="${escapeAttr(o.lang)}">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${escapeAttr(contentSecurityPolicy(o.cspSource, o.nonce))}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <title>${escapeAttr(o.title)}</title>
${styles}
</head>
<body>
  <div id="root"></div>
${scripts}
</body>
</html>
`;
}
