// The chips waiting above the input: the active file on by default only in a trusted workspace, manual attachments
// everywhere, the user's choice kept, duplicates merged, a limit, and what goes with the next question.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_ATTACHMENTS, type Attachment } from '../../../src/core/chat/attachments';
import { PendingAttachments, type ActiveFile } from '../../../src/core/chat/attachmentsPending';
import { LIMITS } from '../../../src/protocol/limits';

const geometry: ActiveFile = { uri: 'file:///w/geometry.py', path: 'geometry.py', languageId: 'python' };
const selection = (id: string, start: number, end: number, uri = geometry.uri): Attachment => ({
  id, kind: 'selection', path: 'geometry.py', uri, languageId: 'python', lines: { start, end }, content: `lines ${start}-${end}`,
});
const wholeFile = (id: string): Attachment => ({ id, kind: 'file', path: 'geometry.py', uri: geometry.uri, languageId: 'python', content: 'all' });
const activeAttachment = wholeFile('active');

describe('pending attachments', () => {
  it('trusted workspace: the active file is on by default and goes first', () => {
    const p = new PendingAttachments(true);
    p.setActiveFile(geometry);
    assert.deepEqual(p.activeFile, { file: geometry, enabled: true, byDefault: true });
    p.add(selection('s1', 3, 4));
    assert.equal(p.activeFileToSend(), geometry);
    assert.deepEqual(p.forSend(activeAttachment).map((a) => a.id), ['active', 's1']);
  });

  it('untrusted workspace: the active file is never attached by default, manual attachments still are', () => {
    const p = new PendingAttachments(false);
    p.setActiveFile(geometry);
    assert.equal(p.activeFile?.enabled, false);
    assert.equal(p.activeFileToSend(), undefined);
    assert.equal(p.add(selection('s1', 3, 4)), 'added');
    assert.deepEqual(p.forSend(undefined).map((a) => a.id), ['s1']);
    // ...and when the user switches the chip on, the file goes.
    p.toggleActiveFile(true);
    assert.equal(p.activeFileToSend(), geometry);
  });

  it('granting trust turns the default on, unless the user chose', () => {
    const p = new PendingAttachments(false);
    p.setActiveFile(geometry);
    p.setTrusted(true);
    assert.equal(p.activeFile?.enabled, true);
    const q = new PendingAttachments(false);
    q.setActiveFile(geometry);
    q.toggleActiveFile(false);
    q.setTrusted(true);
    assert.equal(q.activeFile?.enabled, false, 'the user said no');
  });

  it('the user\'s choice holds for the next active file too', () => {
    const p = new PendingAttachments(true);
    p.setActiveFile(geometry);
    p.toggleActiveFile(false);
    p.setActiveFile({ ...geometry, uri: 'file:///w/other.py', path: 'other.py' });
    assert.deepEqual([p.activeFile?.enabled, p.activeFile?.byDefault], [false, false]);
  });

  it('a refused active file (too large) is shown but never sent', () => {
    const p = new PendingAttachments(true);
    p.setActiveFile({ ...geometry, refusal: { reason: 'too-large', bytes: 10_000_000 } });
    assert.equal(p.activeFile?.enabled, false);
    p.toggleActiveFile(true);
    assert.equal(p.activeFileToSend(), undefined);
  });

  it('the active file is not sent twice when the same file is attached whole; a selection of it does not count', () => {
    const p = new PendingAttachments(true);
    p.setActiveFile(geometry);
    p.add(selection('s1', 1, 2));
    assert.equal(p.activeFileToSend(), geometry);
    p.add(wholeFile('f1'));
    assert.equal(p.activeFileToSend(), undefined);
  });

  it('the same code attached twice keeps one chip (its first id, the newer text); a limit per question', () => {
    const p = new PendingAttachments(true);
    assert.equal(p.add(selection('s1', 3, 4)), 'added');
    assert.equal(p.add({ ...selection('s2', 3, 4), content: 'newer' }), 'replaced');
    assert.deepEqual(p.items.map((a) => [a.id, a.content]), [['s1', 'newer']]);
    assert.equal(p.add(selection('s3', 3, 4, 'file:///w/other.py')), 'added', 'other file, same lines');
    for (let i = p.items.length; i < MAX_ATTACHMENTS; i += 1) p.add(selection(`x${i}`, i + 10, i + 10));
    assert.equal(p.add(selection('over', 999, 999)), 'full');
    assert.equal(p.items.length, MAX_ATTACHMENTS);
    assert.ok(MAX_ATTACHMENTS + 1 <= LIMITS.attachments, 'a full question with the current file still fits the protocol');
  });

  it('removing a chip and sending a question take its attachments off; the active-file chip stays', () => {
    const p = new PendingAttachments(true);
    p.setActiveFile(geometry);
    p.add(selection('s1', 1, 1));
    p.add(selection('s2', 2, 2));
    assert.equal(p.remove('s1'), true);
    assert.equal(p.remove('s1'), false);
    p.sent(p.forSend(activeAttachment).map((a) => a.id));
    assert.deepEqual(p.items, []);
    assert.equal(p.activeFile?.enabled, true);
  });
});
