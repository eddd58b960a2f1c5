// The cut points of incremental rendering: a wrong cut would render half a code block or a list as something else.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findStableBoundary, openFenceOf } from '../../src/webview/chat/streaming';

describe('findStableBoundary', () => {
  it('cuts after a blank line once the next line starts unindented', () => {
    assert.equal(findStableBoundary('para one\n\n', 0), 0, 'next line unknown yet');
    assert.equal(findStableBoundary('para one\n\nP', 0), 10);
    assert.equal(findStableBoundary('para one\n\npara two\n\n- item', 0), 20);
    assert.equal(findStableBoundary('1. item\n\n    continued', 0), 0, 'indented continuation belongs to the list');
  });

  it('never cuts inside a fence; cuts right after it closes', () => {
    const open = 'intro\n\n```python\nx = 1\n\n\ny = 2\n';
    assert.equal(findStableBoundary(open, 0), 7);
    const closed = `${open}\`\`\`\nafter`;
    assert.equal(findStableBoundary(closed, 0), closed.indexOf('after'));
    assert.equal(findStableBoundary('~~~~\na\n~~~\n\nb\n~~~~\nz', 0), '~~~~\na\n~~~\n\nb\n~~~~\n'.length, 'a shorter closer does not close');
    assert.equal(findStableBoundary('```js\na\n````\nrest', 0), '```js\na\n````\n'.length, 'a longer closer does');
    assert.equal(findStableBoundary('``` not `a` fence\n\nnext', 0), '``` not `a` fence\n\n'.length, 'backticks in the info string: not a fence');
  });

  it('resumes from a previous boundary', () => {
    const text = 'a\n\nb\n\nc\n\nd';
    const first = findStableBoundary(text.slice(0, 5), 0);
    assert.equal(first, 3);
    assert.equal(findStableBoundary(text, first), text.length - 1);
  });
});

describe('openFenceOf', () => {
  it('finds the unclosed fence at the end of the tail, with its info string', () => {
    assert.deepEqual(openFenceOf('text\n```ts title\nconst a = 1;\n'), { start: 5, codeStart: 17, info: 'ts title' });
    assert.equal(openFenceOf('```ts\na\n```\n'), undefined);
    assert.equal(openFenceOf('```ts'), undefined, 'the opener line is not complete yet');
  });
});
