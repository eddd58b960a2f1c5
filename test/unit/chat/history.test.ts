// The history list's policy (core/chat/history.ts): date groups in the local calendar, Explain apart, relative ages.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConversationSummary } from '../../../src/core/chat/conversation';
import { groupHistory, messageSnippet, relativeAge } from '../../../src/core/chat/history';

const at = (y: number, mo: number, d: number, h = 12, mi = 0) => new Date(y, mo - 1, d, h, mi).getTime();
const NOW = at(2025, 3, 10, 9, 30);
const summary = (id: string, updatedAt: number, kind: 'chat' | 'explain' = 'chat'): ConversationSummary =>
  ({ id, title: id, createdAt: updatedAt, updatedAt, messageCount: 2, kind });

describe('groupHistory', () => {
  it('chats by day (today, yesterday, older), newest first, Explain conversations apart; empty groups left out', () => {
    const groups = groupHistory([
      summary('older-1', at(2025, 3, 1)),
      summary('today-early', at(2025, 3, 10, 0, 1)),
      summary('yesterday-late', at(2025, 3, 9, 23, 59)),
      summary('explain-old', at(2025, 2, 1), 'explain'),
      summary('today-late', at(2025, 3, 10, 9, 0)),
      summary('explain-new', at(2025, 3, 10, 8), 'explain'),
      summary('yesterday-start', at(2025, 3, 9, 0, 0)),
      summary('older-2', at(2025, 3, 8, 23, 59)),
    ], NOW);
    assert.deepEqual(groups.map((g) => [g.key, g.conversations.map((c) => c.id)]), [
      ['today', ['today-late', 'today-early']],
      ['yesterday', ['yesterday-late', 'yesterday-start']],
      ['older', ['older-2', 'older-1']],
      ['explain', ['explain-new', 'explain-old']],
    ]);
    assert.deepEqual(groupHistory([summary('x', at(2025, 3, 10, 1))], NOW).map((g) => g.key), ['today']);
    assert.deepEqual(groupHistory([], NOW), []);
  });
});

describe('relativeAge', () => {
  it('counts seconds as now, then minutes and hours, calendar days, weeks, months and years', () => {
    const cases: Array<[number, number, string]> = [
      [NOW - 20_000, 0, 'second'],
      [NOW + 5_000, 0, 'second'], // a clock that went back a little is still "now"
      [NOW - 5 * 60_000, -5, 'minute'],
      [at(2025, 3, 10, 6, 0), -3, 'hour'],
      [at(2025, 3, 9, 22, 0), -1, 'day'], // 11.5 hours ago, but yesterday on the calendar
      [at(2025, 3, 7), -3, 'day'],
      [at(2025, 2, 24), -2, 'week'],
      [at(2024, 12, 1), -3, 'month'],
      [at(2023, 1, 1), -2, 'year'],
    ];
    for (const [then, value, unit] of cases) assert.deepEqual(relativeAge(then, NOW), { value, unit }, new Date(then).toString());
  });

  it('reads naturally through Intl.RelativeTimeFormat in English and Chinese', () => {
    const words = (lang: string, then: number) => {
      const { value, unit } = relativeAge(then, NOW);
      return new Intl.RelativeTimeFormat(lang, { numeric: 'auto' }).format(value, unit);
    };
    assert.equal(words('en', at(2025, 3, 9, 22)), 'yesterday');
    assert.equal(words('en', NOW - 5 * 60_000), '5 minutes ago');
    assert.equal(words('zh-cn', at(2025, 3, 9, 22)), '昨天');
    assert.equal(words('zh-cn', NOW - 1000), '现在');
  });
});

describe('messageSnippet', () => {
  const long = `${'a '.repeat(40)}the batcher merges requests ${'b '.repeat(40)}`;
  it('finds the query in any message, case-insensitive, with some words around it', () => {
    assert.equal(messageSnippet([{ content: 'What is a decorator?' }, { content: 'A decorator wraps a function.' }], 'WRAPS'), 'A decorator wraps a function.');
    const s = messageSnippet([{ content: long }], 'batcher merges')!;
    assert.ok(s.startsWith('…') && s.endsWith('…'), s);
    assert.ok(s.includes('the batcher merges requests'));
    assert.ok(s.length < long.length);
  });
  it('collapses whitespace (a query over a line break matches); nothing for no match or an empty query', () => {
    assert.equal(messageSnippet([{ content: 'line one\n\n  line two' }], 'one line'), 'line one line two');
    assert.equal(messageSnippet([{ content: 'hello' }], 'bye'), undefined);
    assert.equal(messageSnippet([{ content: 'hello' }], '   '), undefined);
  });
});
