// The chips waiting above the input: the current file suggested (default), always attached (only by default in a
// trusted workspace) or never offered; a chip of the file's own code replaces it, so no code goes twice; chips that
// cover others; duplicates merged; a limit; and what goes with the next question.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_ATTACHMENTS, type Attachment } from '../../../src/core/chat/attachments';
import { PendingAttachments, type ActiveFile } from '../../../src/core/chat/attachmentsPending';
import { LIMITS } from '../../../src/protocol/limits';

const geometry: ActiveFile = { uri: 'file:///w/geometry.py', path: 'geometry.py', languageId: 'python' };
const selection = (id: string, start: number, end: number, uri = geometry.uri): Attachment => ({
  id, kind: 'selection', path: 'geometry.py', uri, languageId: 'python', lines: { start, end }, content: `lines ${start}-${end}`,
});
const wholeFile = (id: string, uri = geometry.uri): Attachment => ({ id, kind: 'file', path: 'geometry.py', uri, languageId: 'python', content: 'all' });
const problems = (id: string, uri = geometry.uri): Attachment => ({ id, kind: 'problems', path: 'geometry.py', uri, languageId: 'text', content: 'line 1: error: x' });
const activeAttachment = wholeFile('active');

describe('pending attachments: the current file', () => {
  it('suggest (the default): a dashed suggestion that sends nothing until clicked, then an ordinary chip; back after the send', () => {
    const p = new PendingAttachments(true);
    p.setActiveFile(geometry);
    assert.equal(p.currentFileMode, 'suggest');
    assert.deepEqual(p.activeFile, { file: geometry, suggested: true, enabled: false, byDefault: true });
    assert.equal(p.activeFileToSend(), undefined, 'a general question goes without the file');
    // The click attaches the file as a chip of its own (the adapter reads it): the suggestion gives way to it.
    assert.equal(p.add(wholeFile('f1')), 'added');
    assert.equal(p.activeFile, undefined);
    assert.deepEqual(p.forSend(undefined).map((a) => a.id), ['f1']);
    p.sent(['f1']);
    const next = p.activeFile as { suggested: boolean } | undefined; // read again: the assertion above narrowed it
    assert.equal(next?.suggested, true, 'suggested again for the next question');
  });

  it('always, trusted workspace: on by default and first; a click leaves it out, and the choice holds for the next file', () => {
    const p = new PendingAttachments(true, 'always');
    p.setActiveFile(geometry);
    assert.deepEqual(p.activeFile, { file: geometry, suggested: false, enabled: true, byDefault: true });
    p.add(problems('p1'));
    assert.equal(p.activeFileToSend(), geometry, 'problems of the file are no code of it');
    assert.deepEqual(p.forSend(activeAttachment).map((a) => a.id), ['active', 'p1']);
    p.toggleActiveFile(false);
    p.setActiveFile({ ...geometry, uri: 'file:///w/other.py', path: 'other.py' });
    assert.deepEqual([p.activeFile?.enabled, p.activeFile?.byDefault], [false, false]);
  });

  it('always, untrusted workspace: shown but off until switched on; granting trust turns the default on unless the user chose', () => {
    const p = new PendingAttachments(false, 'always');
    p.setActiveFile(geometry);
    assert.equal(p.activeFile?.enabled, false);
    assert.equal(p.activeFileToSend(), undefined);
    p.toggleActiveFile(true);
    assert.equal(p.activeFileToSend(), geometry);
    const q = new PendingAttachments(false, 'always');
    q.setActiveFile(geometry);
    q.setTrusted(true);
    assert.equal(q.activeFile?.enabled, true);
    const r = new PendingAttachments(false, 'always');
    r.setActiveFile(geometry);
    r.toggleActiveFile(false);
    r.setTrusted(true);
    assert.equal(r.activeFile?.enabled, false, 'the user said no');
  });

  it('a refused active file (too large) is shown but never sent', () => {
    const p = new PendingAttachments(true, 'always');
    p.setActiveFile({ ...geometry, refusal: { reason: 'too-large', bytes: 10_000_000 } });
    assert.equal(p.activeFile?.enabled, false);
    p.toggleActiveFile(true);
    assert.equal(p.activeFileToSend(), undefined);
  });

  it('never: no chip at all; switching the mode takes effect at once', () => {
    const p = new PendingAttachments(true, 'never');
    p.setActiveFile(geometry);
    assert.equal(p.activeFile, undefined);
    assert.equal(p.activeFileToSend(), undefined);
    p.setMode('always');
    assert.equal(p.activeFileToSend(), geometry);
  });

  it('a selection of the file replaces its current-file chip: two selections send the two selections, not the file too', () => {
    for (const mode of ['suggest', 'always'] as const) {
      const p = new PendingAttachments(true, mode);
      p.setActiveFile(geometry);
      p.add(selection('s1', 1, 2));
      p.add(selection('s2', 5, 6));
      assert.equal(p.activeFile, undefined, mode);
      assert.equal(p.activeFileToSend(), undefined, mode);
      assert.deepEqual(p.forSend(undefined).map((a) => a.id), ['s1', 's2'], mode);
      // A selection of another file leaves this file's chip alone.
      const q = new PendingAttachments(true, mode);
      q.setActiveFile(geometry);
      q.add(selection('o1', 1, 2, 'file:///w/other.py'));
      assert.notEqual(q.activeFile, undefined, mode);
    }
  });
});

describe('pending attachments: chips', () => {
  it('code inside a chip is not attached again; a whole file or a bigger range takes the place of what it contains', () => {
    const p = new PendingAttachments(true);
    assert.equal(p.add(wholeFile('f1')), 'added');
    assert.equal(p.add(selection('s1', 3, 4)), 'covered');
    assert.deepEqual(p.items.map((a) => a.id), ['f1']);

    const q = new PendingAttachments(true);
    q.add(selection('s1', 3, 4));
    q.add(selection('s2', 10, 12));
    q.add(selection('o1', 3, 4, 'file:///w/other.py'));
    assert.equal(q.add(selection('big', 1, 11)), 'replaced', 'lines 1-11 contain 3-4 (not 10-12, which only overlaps)');
    assert.deepEqual(q.items.map((a) => a.id), ['s2', 'o1', 'big']);
    assert.equal(q.add(selection('in', 5, 6)), 'covered');
    assert.equal(q.add(wholeFile('f1')), 'replaced');
    assert.deepEqual(q.items.map((a) => a.id), ['o1', 'f1']);
  });

  it('problems and changes cover nothing; the same file\'s problems twice keep one chip with the newer text', () => {
    const p = new PendingAttachments(true);
    p.add(wholeFile('f1'));
    assert.equal(p.add(problems('p1')), 'added');
    assert.equal(p.add({ ...problems('p2'), content: 'newer' }), 'replaced');
    assert.deepEqual(p.items.map((a) => [a.id, a.kind, a.content]), [['f1', 'file', 'all'], ['p1', 'problems', 'newer']]);
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

  it('removing a chip and sending a question take its attachments off; the current-file chip stays', () => {
    const p = new PendingAttachments(true, 'always');
    p.setActiveFile(geometry);
    p.add(selection('s1', 1, 1, 'file:///w/other.py'));
    p.add(selection('s2', 2, 2, 'file:///w/other.py'));
    assert.equal(p.remove('s1'), true);
    assert.equal(p.remove('s1'), false);
    p.sent(p.forSend(activeAttachment).map((a) => a.id));
    assert.deepEqual(p.items, []);
    assert.equal(p.activeFile?.enabled, true);
  });
});
