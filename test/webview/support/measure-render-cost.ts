// Prints the streaming render cost for 4k and 8k tokens (or the counts given): `node --import tsx test/webview/support/measure-render-cost.ts [4000 8000]`.
import { startHarness } from './harness';
import { measureStreamingRenderCost } from './render-cost';

async function main(): Promise<void> {
  const counts = process.argv.slice(2).map(Number).filter((n) => n > 0);
  const harness = await startHarness();
  try {
    for (const tokens of counts.length ? counts : [4000, 8000]) {
      const panel = await harness.open();
      const r = await measureStreamingRenderCost(panel, { tokens, tokensPerFrame: 8, priorTurns: 10 });
      console.log(JSON.stringify(r));
      await panel.page.close();
    }
  } finally {
    await harness.close();
  }
}

main().catch((e) => { console.error(e); process.exitCode = 1; });
