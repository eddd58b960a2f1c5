// The walkthrough's pages (media/walkthrough, English and Chinese): every command in a code block fits the media
// pane beside the steps. The pane does not wrap code; at its default width it showed
// `docker run --rm --gpus all ubuntu nvidia-smi -L` (47 columns) whole and cut the indented
// `sudo nvidia-ctk runtime configure --runtime=docker` (53 columns), so a line longer than 47 is broken with `\`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const MAX_COLUMNS = 47;
const root = join(__dirname, '../../../media/walkthrough');
const pages = [...readdirSync(root).filter((f) => f.endsWith('.md')).map((f) => join(root, f)), ...readdirSync(join(root, 'zh-cn')).map((f) => join(root, 'zh-cn', f))];

/** Lines inside ``` fences, with their indentation. */
function codeLines(markdown: string): string[] {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    else if (inFence) out.push(line);
  }
  return out;
}

test('every code line of the walkthrough fits the media pane (long commands continued with a backslash)', () => {
  assert.ok(pages.length >= 10, `both languages' pages found (${pages.length})`);
  const tooLong = pages.flatMap((p) => codeLines(readFileSync(p, 'utf8')).filter((l) => l.length > MAX_COLUMNS).map((l) => `${p}: ${l}`));
  assert.deepEqual(tooLong, []);
  const docker = readFileSync(join(root, 'docker.md'), 'utf8');
  assert.match(docker, /sudo nvidia-ctk runtime configure \\\n\s+--runtime=docker/, 'the toolkit command, continued on its next line');
});
