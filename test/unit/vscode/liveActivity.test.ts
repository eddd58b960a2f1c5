// Live activity in the real extension code (fake `vscode`, stub Triton in external mode with a metrics endpoint):
// the status bar says "generating (n)" with a spinner while answers run, the Server Status view shows what runs
// and what waits as it happens, Explain threads are titled and anchored on their lines and say where they wait,
// and an answer whose connection was lost (the server still up) is offered for Retry.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { isProtocolError, parseHostToStatusView, type StatusLayout, type StatusUpdate } from '../../../src/protocol';
import { activateExtension, resolveChatView, waitFor, type ExtensionModule } from './support/activate';
import { createFakeVscode, installVscodeModule, MarkdownString, Position, Selection, Uri, type FakeThread } from './support/fakeVscode';
import { startStubTriton, type StubTriton } from './support/stubTriton';

/** What the stub's metrics say: the rows are its running streams, `waiting` is set by the test; `second`: a second
 * model instance (tritonChatglm.gpus with two GPUs) with that many rows. */
const server: { waiting: number; second?: number; team?: Record<string, number> } = { waiting: 0 };
let stub: StubTriton;
let storage: string;
let fake: ReturnType<typeof createFakeVscode>;
let uninstall: () => void;
let ext: ExtensionModule;
const posted: Record<string, unknown>[] = [];
let receive: (m: unknown) => void;

function metricsText(): string {
  const labels = '{instance="chatglm3-6b_0_0",model="chatglm3-6b",version="1"}';
  return [
    `nv_inference_pending_request_count{model="chatglm3-6b",version="1"} 0`,
    `chatglm3_active_rows${labels} ${stub.active}`,
    `chatglm3_waiting_requests${labels} ${server.waiting}`,
    `chatglm3_decode_steps_total${labels} 10`,
    `chatglm3_decode_rows_total${labels} 10`,
    `chatglm3_generated_tokens_total${labels} 12`,
    `chatglm3_first_tokens_total${labels} 2`,
    `chatglm3_first_token_seconds_total${labels} 0.1`,
    ...(server.second === undefined ? [] : [
      `chatglm3_active_rows{device="cuda:1",instance="chatglm3-6b_1_0",model="chatglm3-6b",version="1"} ${server.second}`,
      `chatglm3_decode_steps_total{device="cuda:1",instance="chatglm3-6b_1_0",model="chatglm3-6b",version="1"} 4`,
      `chatglm3_generated_tokens_total{device="cuda:1",instance="chatglm3-6b_1_0",model="chatglm3-6b",version="1"} 30`,
      // quantization auto: the first GPU's memory plan kept float16, the second's chose int8.
      `chatglm3_weights_info{dtype="float16",instance="chatglm3-6b_0_0",model="chatglm3-6b",quantization="none",version="1"} 1`,
      `chatglm3_weights_info{dtype="float16",device="cuda:1",instance="chatglm3-6b_1_0",model="chatglm3-6b",quantization="int8",version="1"} 1`,
    ]),
  ].join('\n');
}

before(async () => {
  stub = await startStubTriton({ metrics: metricsText, team: () => server.team });
  storage = mkdtempSync(join(tmpdir(), 'tcg-live-'));
  fake = createFakeVscode({
    'tritonChatglm.serverMode': 'external',
    'tritonChatglm.externalUrl': stub.url,
    'tritonChatglm.externalMetricsUrl': `${stub.url}/metrics`,
    'tritonChatglm.explainMaxConcurrency': 1,
  });
  uninstall = installVscodeModule(fake.vscode);
  ext = await activateExtension(storage);
  await waitFor(() => fake.rec.context.get('tritonChatglm.modelState') === 'ready', 'the model to be ready');
  ({ receive } = resolveChatView(fake, posted));
  receive({ type: 'ready' });
});

after(async () => {
  await ext?.deactivate();
  uninstall?.();
  await stub?.close();
  rmSync(storage, { recursive: true, force: true });
});

const bar = () => fake.rec.statusBar[0]!;
const tooltip = () => (bar().tooltip as MarkdownString | undefined)?.value ?? '';

test('Server Status of a team server shows each replica as the proxy sees it; a plain Triton is asked once, then never', async () => {
  server.team = { r0: 200, r1: 502 };
  await fake.vscode.commands.executeCommand('tritonChatglm.showServerStatus');
  const panel = fake.rec.panels.at(-1)!;
  const updates = () => (panel.webview.posted as StatusUpdate[]).filter((m) => m.type === 'update');
  try {
    panel.webview.receive({ type: 'ready' });
    const team = await waitFor(() => updates().find((m) => m.lists.replicas?.length), 'an update with the replicas') as StatusUpdate;
    assert.ok(!isProtocolError(parseHostToStatusView(team)), 'the update passes the protocol');
    assert.deepEqual(team.lists.replicas, ['r0: ready', 'r1: not ready (HTTP 502)']);
    assert.ok(!team.hidden.includes('replicas'));
    // The same address now answers as plain Triton does (404): the list is hidden, and not asked for again.
    delete server.team;
    const asked = () => stub.requests.filter((r) => r.path === '/team/replicas').length;
    const before = asked();
    const plain = await waitFor(() => updates().find((m) => m.hidden.includes('replicas')), 'an update without replicas') as StatusUpdate;
    const count = updates().length;
    await waitFor(() => updates().length >= count + 2, 'two more refreshes');
    assert.equal(asked(), before + 1, 'one question, then none');
    assert.equal(plain.note.includes('team proxy'), false, 'no note: a server without replicas is not a fault');
  } finally {
    delete server.team;
    panel.dispose();
  }
});

test('while an answer runs: "generating (1)" with a spinner, the tooltip names it, Server Status shows it live', async () => {
  assert.match(bar().text, /^\$\(check\) ChatGLM: ready$/);
  assert.match(tooltip(), /Model: ChatGLM3-6B \(chatglm3-6b\), ready/, 'the tooltip names the served model');
  posted.length = 0;
  receive({ type: 'send', text: 'tell me something slow' });
  await waitFor(() => /generating \(1\)/.test(bar().text), 'the status bar to say generating');
  assert.equal(bar().text, '$(loading~spin) ChatGLM: generating (1)');
  assert.match(tooltip(), /Generating 1 answer:\n\n- tell me something slow/);

  await fake.vscode.commands.executeCommand('tritonChatglm.showServerStatus');
  const panel = fake.rec.panels.at(-1)!;
  panel.webview.receive({ type: 'ready' });
  const layout = await waitFor(() => panel.webview.posted.find((m) => (m as { type: string }).type === 'layout'), 'the layout') as StatusLayout;
  assert.ok(!isProtocolError(parseHostToStatusView(layout)), 'the layout passes the protocol');
  assert.deepEqual(layout.sections.map((s) => s.id), ['replicas', 'now', 'instances', 'schedulerCharts', 'schedulerTotals', 'tritonCharts', 'tritonTotals', 'gpus', 'gpuCharts']);
  // Plain words: every figure explained in its tooltip, no engine jargon in the labels (issue #33).
  const figures = layout.sections.flatMap((s) => (s.kind === 'table' ? s.rows : s.kind === 'charts' ? s.charts : []));
  assert.deepEqual(figures.filter((f) => !f.help).map((f) => f.label), [], 'every figure has a tooltip');
  assert.deepEqual(figures.concat(layout.sections.map((s) => ({ id: s.id, label: s.heading }))).map((f) => f.label).filter((l) => /\b(rows?|decode|prefill|batch(es|ing)?|executions?)\b/i.test(l)), []);
  assert.equal(figures.find((f) => f.id === 'activeRows')?.label, 'Answers being written');
  const live = await waitFor(() => (panel.webview.posted as StatusUpdate[]).find((m) => m.type === 'update' && m.figures.activeRows === '1'), 'an update with the running row') as StatusUpdate;
  assert.equal(live.figures.thisWindow, '1 generating, 0 queued');
  assert.equal(live.figures.generatedTokens, '12');
  assert.deepEqual(live.hidden, ['gpu', 'instances', 'replicas'], 'the stub has no GPU metrics, one instance and no team proxy: GPU cards, per-instance rows and replicas hidden, the scheduler\'s shown');
  assert.match(live.note, /no GPU metrics/);
  assert.ok(live.series.activeRows!.d.startsWith('M'), 'the active-rows sparkline has a point');
  assert.deepEqual([live.series.activeRows!.top, live.series.activeRows!.empty], ['1 answer', false], 'its y axis tops at 1 answer');
  assert.equal(live.series.gpuUtilizationPct!.empty, true, 'no GPU figures: that chart is still collecting');

  receive({ type: 'stop' });
  await waitFor(() => bar().text === '$(check) ChatGLM: ready', 'the status bar back to ready');
  assert.doesNotMatch(tooltip(), /Generating/);
  // The view's "from this window" row follows at once, without waiting for the next poll.
  await waitFor(() => (panel.webview.posted as StatusUpdate[]).at(-1)?.figures.thisWindow === '0 generating, 0 queued', 'the row to drop to 0');
  panel.dispose();
});

test('explain: threads titled and anchored on the selected lines; waiting ones say where they wait', async () => {
  const text = ['def a():', '    return 1', '', 'def b():', '    return 2', ''].join('\n');
  const lines = text.split('\n');
  const offsetAt = (p: Position) => lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
  fake.vscode.window.activeTextEditor = {
    document: {
      uri: Uri.file('/w/geometry.py'), fileName: '/w/geometry.py', languageId: 'python', offsetAt,
      getText: (r: Selection) => text.slice(offsetAt(r.start), offsetAt(r.end)),
      lineAt: (n: number) => ({ text: lines[n]! }),
    },
    // Whole lines, as Expand Line Selection makes them: each ends at column 0 of the next line.
    selections: [new Selection(new Position(0, 0), new Position(2, 0)), new Selection(new Position(3, 0), new Position(5, 0))],
  };
  // One explanation at a time (explainMaxConcurrency 1); the stub holds a lone explanation ~3 s and its metrics
  // report one request waiting at the server meanwhile.
  server.waiting = 1;
  const threadsBefore = fake.rec.threads.length;
  const done = fake.vscode.commands.executeCommand('tritonChatglm.explainSelection') as Promise<void>;
  const threads = await waitFor(() => fake.rec.threads.length === threadsBefore + 2 && fake.rec.threads.slice(threadsBefore), 'two threads');
  const body = (t: FakeThread) => t.comments[0]?.body.value ?? '';
  // Two threads: brief, each title says where it waits until its answer's first sentence replaces that; the
  // whole of what they say is in their comments once they are shown in full.
  assert.match(threads[1]!.label ?? '', /^Explanation of geometry\.py:4–5: Queued behind 1 request\.$/);
  for (const t of threads) await fake.vscode.commands.executeCommand('tritonChatglm.showFullExplanation', t);
  assert.deepEqual(threads.map((t) => t.label), ['Explanation of geometry.py:1–2', 'Explanation of geometry.py:4–5']);
  assert.deepEqual(threads.map((t) => [t.range.start.line, t.range.start.character, t.range.end.line, t.range.end.character]), [[0, 0, 1, 12], [3, 0, 4, 12]],
    'anchored on the lines the selections cover, not on the line after them');
  await waitFor(() => /Queued behind 1 request\./.test(body(threads[1]!)), 'the second explanation to say it is queued behind the first');
  assert.match(body(threads[1]!), /One explanation is sent at a time \(tritonChatglm\.explainMaxConcurrency\)\./);
  assert.equal(threads[1]!.comments[0]!.label, 'queued');
  // Once the request is at the stub, its metrics count it as the one row generating.
  await waitFor(() => /^Next in line at the server\. The server is generating 1 answer; a row is free when it ends\./.test(body(threads[0]!)), 'the first to say it waits at the server');
  assert.match(tooltip(), /1 explanation queued in this window/);
  assert.match(bar().text, /generating \(1\)/);
  server.waiting = 0;
  await done;
  for (const t of threads) {
    assert.match(body(t), /^Explains \d+ chars\./);
    assert.equal(t.comments[0]!.label, undefined, 'finished: no waiting label');
  }
  await fake.vscode.commands.executeCommand('tritonChatglm.showExplanationBrief', threads[0]);
  assert.match(threads[0]!.label ?? '', /^Explanation of geometry\.py:1–2: Explains \d+ chars\.$/, 'brief: the first sentence');
  assert.equal(bar().text, '$(check) ChatGLM: ready');
  assert.doesNotMatch(tooltip(), /queued/);
});

test('a connection lost while the server runs: the answer fails as "connection lost" and Retry asks the same question again', async () => {
  await fake.vscode.commands.executeCommand('tritonChatglm.newChat');
  posted.length = 0;
  const question = 'please lose the connection';
  receive({ type: 'send', text: question });
  const error = await waitFor(() => posted.find((m) => m.type === 'error' && m.retry), 'an error with Retry') as { message: string; retry: string };
  assert.match(error.message, /connection to the server was lost/);
  const state = [...posted].reverse().find((m) => m.type === 'state') as { messages: { id: string; role: string; status: string; content: string; error?: string }[] };
  const failed = state.messages.at(-1)!;
  assert.equal(failed.id, error.retry, 'Retry names the failed answer');
  assert.equal(failed.status, 'failed');
  assert.equal(failed.content, 'half an ', 'the partial answer is kept');
  assert.match(failed.error ?? '', /lost while the answer was being written; the server is still running/);
  assert.doesNotMatch(failed.error ?? '', /not running or cannot be reached/);
  assert.ok(fake.rec.log.some((l) => /answer failed \[connection-lost\]/.test(l)));

  posted.length = 0;
  receive({ type: 'retry', messageId: error.retry });
  const done = await waitFor(() => posted.find((m) => m.type === 'messageDone' && m.status === 'complete'), 'the retried answer') as { messageId: string };
  const final = (await waitFor(() => {
    const s = [...posted].reverse().find((m) => m.type === 'state') as typeof state | undefined;
    return s?.messages.at(-1)?.status === 'complete' && s;
  }, 'the final state')).messages;
  assert.deepEqual(final.map((m) => [m.role, m.status]), [['user', 'complete'], ['assistant', 'failed'], ['user', 'complete'], ['assistant', 'complete']]);
  assert.equal(final[2]!.content, question, 'the same question asked again');
  assert.equal(final[1]!.content, 'half an ', 'the failed partial answer stays, marked');
  assert.equal(final[3]!.id, done.messageId);
  const streams = () => stub.requests.filter((r) => r.path.endsWith('generate_stream'));
  const asked = streams().filter((r) => r.body.prompt === question);
  assert.equal(asked.length, 2);
  assert.equal(asked[1]!.body.history, '[]', 'the failed turn is not sent to the model as history');
  // A retry of anything but a failed answer of the conversation asks nothing.
  const count = streams().length;
  receive({ type: 'retry', messageId: final[3]!.id });
  receive({ type: 'retry', messageId: 'm-unknown' });
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(streams().length, count);
});

test('Server Status\'s title bar: Stop Answers, Unload, Restart, Show Logs; Stop Answers stops what runs, enabled only then', async () => {
  const manifest = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as { contributes: { menus: Record<string, { command: string; when?: string; group?: string }[]> } };
  const onStatus = manifest.contributes.menus['editor/title']!.filter((m) => m.when?.includes("activeWebviewPanelId == 'tritonChatglm.status'"));
  assert.deepEqual(onStatus.map((m) => [m.command, m.group]), [
    ['tritonChatglm.stopAnswers', 'navigation@1'], ['tritonChatglm.unloadModel', 'navigation@2'],
    ['tritonChatglm.restartServer', 'navigation@3'], ['tritonChatglm.showServerLogs', 'navigation@4'],
  ]);
  await waitFor(() => bar().text === '$(check) ChatGLM: ready', 'nothing running');
  assert.equal(fake.rec.context.get('tritonChatglm.answering'), false);
  posted.length = 0;
  receive({ type: 'send', text: 'tell me something slow' });
  await waitFor(() => fake.rec.context.get('tritonChatglm.answering') === true, 'Stop Answers enabled while the answer runs');
  await fake.vscode.commands.executeCommand('tritonChatglm.stopAnswers');
  await waitFor(() => fake.rec.context.get('tritonChatglm.answering') === false, 'Stop Answers disabled again');
  assert.equal(bar().text, '$(check) ChatGLM: ready');
  const last = posted.filter((m) => m.type === 'state').at(-1) as { messages: { role: string; status: string }[] } | undefined;
  const done = posted.filter((m) => m.type === 'messageDone').at(-1) as { status?: string } | undefined;
  assert.equal(done?.status ?? last?.messages.at(-1)?.status, 'stopped');
});

test('Server Status with two model instances: the rows are their sum, and one line per instance says where it runs', async () => {
  server.second = 3;
  try {
    await fake.vscode.commands.executeCommand('tritonChatglm.showServerStatus');
    const panel = fake.rec.panels.at(-1)!;
    panel.webview.receive({ type: 'ready' });
    const update = await waitFor(() => (panel.webview.posted as StatusUpdate[]).find((m) => m.type === 'update' && m.lists.instances?.length === 2), 'an update with two instances') as StatusUpdate;
    assert.ok(!isProtocolError(parseHostToStatusView(update)), 'the update passes the protocol');
    assert.ok(!update.hidden.includes('instances'), 'the per-instance rows are shown');
    assert.equal(update.figures.activeRows, String(stub.active + 3), 'the summed rows');
    assert.equal(update.figures.generatedTokens, '42');
    assert.match(update.lists.instances![0]!, /^chatglm3-6b_0_0 on –: \d+ generating, 0 waiting, .+ tokens\/s, 12 tokens in finished answers$/);
    assert.match(update.lists.instances![1]!, /^chatglm3-6b_1_0 on cuda:1: 3 generating, 0 waiting, .+ tokens\/s, 30 tokens in finished answers$/);
    // Each GPU's memory plan chose: both choices are named (a text longer than a number, posted all the same).
    assert.equal(update.figures.weights, 'float16 (not quantized); int8 (8-bit quantized weights), float16 activations');
    panel.dispose();
  } finally {
    delete server.second;
  }
});
