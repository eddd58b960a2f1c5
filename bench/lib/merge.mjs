// `--only=<parts>` measures some parts; the result file keeps the figures of the parts it did not run from the
// previous file of the same mode, each marked with the run it comes from (`kept_from`), so one part can be
// re-measured without losing, or re-running, the others.
import { TARGETS } from './compose.mjs';

const NOT_RUN = /(^|: )not run(;|$)/;

/** `latest` with the previous run's entries for every figure `latest` did not measure because its part did not run. */
export function keepFiguresNotRun(latest, previous) {
  if (!previous || previous.mode !== latest.mode) return latest;
  const out = { ...latest };
  const kept = {};
  for (const key of Object.keys(TARGETS)) {
    const now = latest[key];
    const before = previous[key];
    if (now?.value === null && NOT_RUN.test(now.reason ?? '') && before && before.value !== null && before.value !== undefined) {
      out[key] = { ...before, kept_from: before.kept_from ?? previous.generated_at };
      kept[key] = out[key].kept_from;
    }
  }
  if (latest.concurrency_curve?.error === 'not run' && previous.concurrency_curve && !previous.concurrency_curve.error) {
    out.concurrency_curve = { ...previous.concurrency_curve, kept_from: previous.concurrency_curve.kept_from ?? previous.generated_at };
  }
  for (const key of ['footprint_details', 'client_bench_triton_stats', 'webview_audit_cases']) {
    if (!(key in latest) && key in previous) out[key] = previous[key];
  }
  out.kept_from_previous_run = kept;
  out.summary = Object.fromEntries(Object.keys(TARGETS).map((k) => [k, { value: out[k].value, met: out[k].met }]));
  return out;
}
