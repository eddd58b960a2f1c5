// One streamed greedy request to the model's /generate_stream, timed from sending to the final event. Every
// request carries the same set of inputs: Triton's dynamic batcher only merges requests whose inputs match.
import { modelName } from './test-servers.mjs';

export async function timedStreamRequest(url, index, maxNewTokens) {
  const body = { prompt: `benchmark request ${index}: explain this code`, history: '[]', temperature: 0, top_p: 1, max_new_tokens: maxNewTokens };
  const started = performance.now();
  const res = await fetch(`${url}/v2/models/${modelName}/generate_stream`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`request ${index}: HTTP ${res.status} ${text.slice(0, 500)}`);
  const events = text.split('\n\n').filter((b) => b.startsWith('data:')).map((b) => JSON.parse(b.slice(5)));
  const final = events.at(-1);
  if (!final || final.error !== undefined || final.completion_tokens === undefined) throw new Error(`request ${index}: no final event: ${JSON.stringify(final)?.slice(0, 500)}`);
  return { ms, tokens: Number(final.completion_tokens), events: events.length };
}

/** `concurrency` requests at once; tokens/s over the wall time of the whole group, and each request's latency. */
export async function concurrentRound(url, concurrency, maxNewTokens) {
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: concurrency }, (_, i) => timedStreamRequest(url, i, maxNewTokens)));
  const seconds = (performance.now() - started) / 1000;
  const tokens = results.reduce((n, r) => n + r.tokens, 0);
  return { seconds, tokens, tokens_per_second: tokens / seconds, latencies_ms: results.map((r) => r.ms) };
}

/**
 * One streamed request, read as it arrives: ms from sending to the first delta (the first event that carries
 * text before the final one; the final's time if the whole answer came with it) and to the final event.
 */
export async function streamWithTimings(url, body) {
  const started = performance.now();
  const res = await fetch(`${url}/v2/models/${modelName}/generate_stream`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`HTTP ${res.status} ${(await res.text()).slice(0, 500)}`);
  const decoder = new TextDecoder();
  let buffer = '';
  let firstDeltaMs;
  let final;
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (!block.startsWith('data:')) continue;
      const event = JSON.parse(block.slice(5));
      if (event.error !== undefined) throw new Error(`stream error: ${event.error}`);
      const isFinal = event.finish_reason !== undefined;
      if (firstDeltaMs === undefined && (isFinal || event.response)) firstDeltaMs = performance.now() - started;
      if (isFinal) final = event;
    }
  }
  if (!final) throw new Error('the stream ended without its final event');
  return { firstDeltaMs, totalMs: performance.now() - started, tokens: Number(final.completion_tokens) };
}
