// Small statistics for benchmark results. Every reported figure is `{ value, median_of, min, max }`: the median of
// n measured runs (after a warm-up) with the spread kept, so a single lucky or unlucky run on a shared machine
// neither makes nor breaks a target.

/** Median of a non-empty list of finite numbers (mean of the middle two for an even count). */
export function median(values) {
  const xs = finiteSorted(values);
  const mid = Math.floor(xs.length / 2);
  return xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

/** Value at quantile q (0..1) by linear interpolation between the closest ranks. */
export function quantile(values, q) {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile must be within [0, 1], got ${q}`);
  const xs = finiteSorted(values);
  const pos = (xs.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo);
}

/** `{ value, median_of, min, max }` of the runs, rounded to `digits` significant decimals. */
export function summarize(values, digits = 4) {
  const xs = finiteSorted(values);
  return { value: round(median(xs), digits), median_of: xs.length, min: round(xs[0], digits), max: round(xs.at(-1), digits) };
}

/** A figure that is measured once by nature (a file size): value = min = max. */
export function single(value) {
  if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
  return { value, median_of: 1, min: value, max: value };
}

/** Element-wise ratios a[i] / b[i] of runs measured side by side. */
export function pairedRatios(numerators, denominators) {
  if (numerators.length !== denominators.length || numerators.length === 0) {
    throw new RangeError(`paired ratios need two equally long non-empty lists (${numerators.length} vs ${denominators.length})`);
  }
  return numerators.map((n, i) => {
    const d = denominators[i];
    if (!(d > 0)) throw new RangeError(`denominator ${i} is not positive: ${d}`);
    return n / d;
  });
}

export function round(x, digits = 4) {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function finiteSorted(values) {
  if (!Array.isArray(values) || values.length === 0) throw new RangeError('no values to summarize');
  for (const v of values) if (!Number.isFinite(v)) throw new TypeError(`not a finite number: ${v}`);
  return [...values].sort((a, b) => a - b);
}
