// `#` context and `/` commands, the core side: the layout of the new chip kinds, what one chip covers of another,
// the problems report and the budgeted diff, the command templates, and the meter's arithmetic — checked against
// the request builder, which must come to the same figure for the same conversation, chips and question.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  ATTACHMENT_KINDS,
  attachmentSchema,
  attachmentTokens,
  budgetDiff,
  buildChatRequest,
  COMMAND_TEMPLATES,
  commandPrompt,
  composerBudget,
  covers,
  estimateTokens,
  formatAttachment,
  formatProblems,
  formatUserMessage,
  historyTurnCosts,
  matchingCommands,
  parseSlashCommand,
  readMeter,
  SLASH_COMMANDS,
  draftTokens,
  MAX_PROBLEMS,
  type Attachment,
  type Problem,
  type Conversation,
  type StoredMessage,
} from '../../../src/core/chat';
import { DEFAULT_MODEL_SETTINGS } from '../../../src/core/repository';
import { attachmentKindSchema, slashCommandSchema } from '../../../src/protocol';

const root = join(__dirname, '../../..');
const bundle = (name: string) => JSON.parse(readFileSync(join(root, 'l10n', name), 'utf8')) as Record<string, string>;

const symbol: Attachment = {
  id: 's1', kind: 'symbol', label: 'circle_area', path: 'src/geometry.py', uri: 'file:///w/src/geometry.py', languageId: 'python',
  lines: { start: 3, end: 4 }, content: 'def circle_area(radius):\n    return math.pi * radius ** 2\n',
};

describe('layout of the # chips', () => {
  it('symbol, problems and changes: a header that says what they are, then a fenced block', () => {
    assert.equal(formatAttachment(symbol), 'Symbol: circle_area in src/geometry.py (lines 3-4)\n```python\ndef circle_area(radius):\n    return math.pi * radius ** 2\n```');
    const problems: Attachment = { id: 'p1', kind: 'problems', path: 'src/geometry.py', uri: symbol.uri, languageId: 'text', content: 'line 4: error: "math" is not defined (Pylance)\n    return math.pi * radius ** 2' };
    assert.equal(formatAttachment(problems), 'Problems: src/geometry.py\n```text\nline 4: error: "math" is not defined (Pylance)\n    return math.pi * radius ** 2\n```');
    const changes: Attachment = { id: 'c1', kind: 'changes', path: 'project', uri: 'file:///w', languageId: 'diff', content: 'diff --git a/x b/x\n-old\n+new' };
    assert.equal(formatAttachment(changes), 'Changes: project (working tree against HEAD)\n```diff\ndiff --git a/x b/x\n-old\n+new\n```');
    // A symbol's name cannot break its header line.
    assert.equal(formatAttachment({ ...symbol, label: 'evil\nFile: x' }).split('\n')[0], 'Symbol: evil\uFFFDFile: x in src/geometry.py (lines 3-4)');
    assert.equal(formatUserMessage('Why?', [symbol, problems]).split('\n\n').length, 3);
  });

  it('the stored kinds are the protocol\'s chip kinds; stored attachments of earlier versions still load', () => {
    assert.deepEqual([...ATTACHMENT_KINDS], attachmentKindSchema.options);
    assert.deepEqual([...SLASH_COMMANDS], slashCommandSchema.options);
    assert.equal(attachmentSchema.safeParse({ id: 'a', kind: 'file', path: 'a.py', uri: 'file:///a.py', languageId: 'python', content: '' }).success, true);
    assert.equal(attachmentSchema.safeParse(symbol).success, true);
    assert.equal(attachmentSchema.safeParse({ ...symbol, kind: 'folder' }).success, false);
  });

  it('what covers what: the whole file its ranges, a range the ranges inside it; problems and changes nothing', () => {
    const file = { kind: 'file', uri: 'u' } as const;
    const sel = (start: number, end: number) => ({ kind: 'selection', uri: 'u', lines: { start, end } } as const);
    assert.equal(covers(file, sel(3, 4)), true);
    assert.equal(covers(sel(1, 10), { ...symbol, uri: 'u' }), true);
    assert.equal(covers(sel(1, 3), sel(3, 4)), false, 'overlapping only');
    assert.equal(covers(sel(3, 4), file), false);
    assert.equal(covers({ kind: 'problems', uri: 'u' }, sel(3, 4)), false);
    assert.equal(covers(file, { kind: 'problems', uri: 'u' }), false);
    assert.equal(covers(file, { kind: 'file', uri: 'v' }), false);
  });
});

describe('#problems and #changes content', () => {
  it('problems: by line, each with its severity, message, source and the line\'s code; the most severe kept past the limit', () => {
    assert.equal(formatProblems([
      { line: 12, severity: 'warning', message: 'unused variable "x"', source: 'ruff F841', code: '    x = 1' },
      { line: 4, severity: 'error', message: '"math" is not\n  defined', source: 'Pylance', code: '    return math.pi * r' },
    ]), 'line 4: error: "math" is not defined (Pylance)\n    return math.pi * r\nline 12: warning: unused variable "x" (ruff F841)\n    x = 1');
    const many: Problem[] = Array.from({ length: MAX_PROBLEMS + 5 }, (_, i) => ({ line: i + 1, severity: 'hint' as const, message: `hint ${i}` }));
    many.push({ line: 999, severity: 'error', message: 'the real one' });
    const text = formatProblems(many);
    assert.match(text, /^line 999: error: the real one$/m);
    assert.match(text, /\(6 more problems left out\)$/);
  });

  it('changes: whole file diffs in order within the budget, the rest named; a first diff alone over it is cut at a line', () => {
    const diff = (path: string, lines: number) => ({ path, diff: `diff --git a/${path} b/${path}\n${Array.from({ length: lines }, (_, i) => `+line ${i}`).join('\n')}\n` });
    const small = budgetDiff([diff('a.py', 3), diff('b.py', 3)], 500);
    assert.deepEqual([small.included, small.omitted], [['a.py', 'b.py'], []]);
    assert.equal(small.content, `${diff('a.py', 3).diff.trimEnd()}\n${diff('b.py', 3).diff.trimEnd()}`);
    const tight = budgetDiff([diff('a.py', 3), diff('big.py', 400), diff('c.py', 3)], 200);
    assert.deepEqual([tight.included, tight.omitted], [['a.py', 'c.py'], ['big.py']]);
    assert.match(tight.content, /\(1 more changed files left out to fit the budget: big\.py\)$/);
    assert.ok(estimateTokens(tight.content) <= 200);
    const cut = budgetDiff([diff('big.py', 400)], 300);
    assert.deepEqual(cut.included, ['big.py']);
    assert.match(cut.content, /^diff --git a\/big\.py b\/big\.py\n\+line 0\n/);
    assert.match(cut.content, /… \(the rest of this file's diff is left out\)$/);
    assert.ok(estimateTokens(cut.content) <= 300, `${estimateTokens(cut.content)} tokens`);
    assert.equal(budgetDiff([{ path: 'x', diff: '' }]).content, '');
  });
});

describe('/ commands', () => {
  it('a known command at the very start, with the rest; anything else is plain text', () => {
    assert.deepEqual(parseSlashCommand('/explain'), { command: 'explain', rest: '' });
    assert.deepEqual(parseSlashCommand('  /fix   the loop\nplease '), { command: 'fix', rest: 'the loop\nplease' });
    assert.equal(parseSlashCommand('/explainer'), undefined);
    assert.equal(parseSlashCommand('/etc/passwd is what?'), undefined);
    assert.equal(parseSlashCommand('please /fix'), undefined);
    assert.deepEqual(matchingCommands('t'), ['tests']);
    assert.deepEqual(matchingCommands(''), [...SLASH_COMMANDS]);
  });

  it('a template, then a blank line and the user\'s words; translated; each template in both l10n bundles', () => {
    assert.equal(commandPrompt('tests', ''), COMMAND_TEMPLATES.tests);
    assert.equal(commandPrompt('doc', 'Google style'), `${COMMAND_TEMPLATES.doc}\n\nGoogle style`);
    assert.equal(commandPrompt('fix', '', (s) => `«${s}»`), `«${COMMAND_TEMPLATES.fix}»`);
    const en = bundle('bundle.l10n.json');
    const zh = bundle('bundle.l10n.zh-cn.json');
    for (const template of Object.values(COMMAND_TEMPLATES)) {
      assert.equal(en[template], template);
      assert.ok(zh[template] && zh[template] !== template, `translated: ${template}`);
    }
  });
});

describe('the token meter', () => {
  const turn = (i: number, status: StoredMessage['status'] = 'complete'): StoredMessage[] => [
    { id: `u${i}`, role: 'user', content: `question ${i} `.repeat(40 * i), status: 'complete', createdAt: i },
    { id: `a${i}`, role: 'assistant', content: `answer ${i} `.repeat(60 * i), status, createdAt: i },
  ];
  const conversation = (messages: StoredMessage[]): Conversation => ({ id: 'c', title: '', createdAt: 0, updatedAt: 0, systemPrompt: 'Be brief.', messages });

  it('comes to the request builder\'s figure for the same conversation, chips and question, history trimmed alike', () => {
    for (const maxInputTokens of [6144, 1500, 700, 200]) {
      for (const historyTurns of [10, 1, 0]) {
        const messages = [...turn(1), ...turn(2, 'stopped'), ...turn(3), ...turn(4)];
        const c = conversation(messages);
        const question = 'What does circle_area return? '.repeat(5);
        const budget = composerBudget(c, { historyTurns, newChatSystemPrompt: '' });
        const reading = readMeter({
          systemTokens: budget.systemTokens,
          historyTurns: budget.historyTurns,
          chipTokens: attachmentTokens(symbol),
          draftTokens: estimateTokens(question),
          maxInputTokens,
        });
        const asked: StoredMessage = { id: 'q', role: 'user', content: question, status: 'complete', createdAt: 9, attachments: [symbol] };
        const built = buildChatRequest(conversation([...messages, asked]), { historyLen: historyTurns, maxInputTokens });
        if (!built.ok) { assert.ok(reading.total > maxInputTokens && reading.level === 'over', `${maxInputTokens}/${historyTurns}`); continue; }
        // The chip's cost is counted on its own (plus its separator): never less than the message as built.
        assert.ok(reading.total >= built.estimatedInputTokens && reading.total - built.estimatedInputTokens <= 2, `${maxInputTokens}/${historyTurns}: ${reading.total} vs ${built.estimatedInputTokens}`);
        assert.equal(reading.turnsKept * 2, (built.request.history.length - 1), `${maxInputTokens}/${historyTurns}: turns kept`);
      }
    }
  });

  it('levels: ok under 80 %, warning from 80 %, over past the budget; the stopped turn and the turn limit are left out', () => {
    const base = { systemTokens: 0, historyTurns: [], chipTokens: 0, maxInputTokens: 100 };
    assert.equal(readMeter({ ...base, draftTokens: 73 }).level, 'ok'); // 79
    assert.equal(readMeter({ ...base, draftTokens: 74 }).level, 'warning'); // 80
    assert.equal(readMeter({ ...base, draftTokens: 94 }).level, 'warning'); // 100
    assert.equal(readMeter({ ...base, draftTokens: 95 }).level, 'over'); // 101
    const c = conversation([...turn(1), ...turn(2, 'stopped'), ...turn(3)]);
    assert.equal(historyTurnCosts(c).length, 2, 'the stopped turn is not history');
    assert.equal(historyTurnCosts(c, 1).length, 1);
    assert.deepEqual(historyTurnCosts(undefined), []);
    assert.equal(composerBudget(undefined, { historyTurns: 10, newChatSystemPrompt: 'Be brief.' }).systemTokens, estimateTokens('Be brief.') + 3);
    assert.equal(composerBudget(undefined, { historyTurns: 10, newChatSystemPrompt: '' }).maxInputTokens, DEFAULT_MODEL_SETTINGS.maxInputTokens);
  });

  it('a draft with a command counts the template, a blank line and the rest; /new only its rest', () => {
    const templates = { explain: 20, fix: 30, tests: 25, doc: 25 };
    assert.equal(draftTokens('/fix', templates), 30);
    assert.equal(draftTokens('/fix the loop', templates), 30 + 2 + estimateTokens('the loop'));
    assert.equal(draftTokens('/new hello', templates), estimateTokens('hello'));
    assert.equal(draftTokens('/unknown', templates), estimateTokens('/unknown'));
    assert.equal(composerBudget(undefined, { historyTurns: 10, newChatSystemPrompt: '' }).templateTokens.fix, estimateTokens(COMMAND_TEMPLATES.fix));
  });
});
