import { assistant, startHarness, stateMsg, user } from './support/harness';
(async () => {
  const h = await startHarness();
  const p = await h.open();
  await p.send(stateMsg([], { activeId: null }));
  await p.nextFrames(2);
  await p.page.screenshot({ path: '/tmp/shots/empty.png' });
  await p.send(stateMsg([
    user('u1', 'How do I reverse a list?\n\n```py\nxs = [1, 2, 3]\n```'),
    assistant('a1', 'Use slicing:\n\n```python\nxs[::-1]\n```\n\nOr `xs.reverse()`.', 'complete', { promptTokens: 20, completionTokens: 60, finishReason: 'stop' }),
    user('u2', 'Write a long poem'),
    assistant('a2', 'Roses are red,\nviolets are blue, and the batcher', 'complete', { promptTokens: 30, completionTokens: 96, finishReason: 'length' }),
  ]));
  await p.nextFrames(2);
  await p.page.hover('article[data-id="a1"]');
  await p.page.screenshot({ path: '/tmp/shots/conversation.png' });
  await p.page.click('article[data-id="u1"] button[data-action="editQuestion"]', { force: true });
  await p.nextFrames(2);
  await p.page.screenshot({ path: '/tmp/shots/editing.png' });
  console.log(JSON.stringify(p.errors), JSON.stringify(await p.cspViolations()));
  await h.close();
})();
