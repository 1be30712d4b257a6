// The smoothings, one definition each, as viewer/smoothing.py defines them (formulas in its docstring; the
// browser tests hold these to its numbers): "ema" TensorBoard's debiased EMA (weight, x ignored), "twema" W&B's
// time-weighted EMA (weight; decay by x), "window" / "window-centred" running averages (points), "gaussian"
// (sigma in x units). NaN and ±inf values (and points of non-finite x, for the kinds that read x) pass through
// unchanged and are left out of the other points' averages. Every view of the page smooths through
// smoothSeries, and the sidebar's control (report.js) offers the kinds.

const SMOOTH_KINDS = ["ema", "twema", "window", "window-centred", "gaussian"];
const SMOOTH_LABELS = {ema: "EMA (TensorBoard)", twema: "Time-weighted EMA (W&B)", window: "Running average",
                       "window-centred": "Running average, centred", gaussian: "Gaussian (sigma in x units)"};
const TWEMA_VIEWPORT_SCALE = 1000;   // smoothing.py TWEMA_VIEWPORT_SCALE
const GAUSSIAN_TRUNCATE = 4;         // smoothing.py GAUSSIAN_TRUNCATE

/** TensorBoard's smoothing (vz_line_chart2 resmoothDataset): kind "ema". */
function ema(values, weight) {
  const n = values.length, out = new Float64Array(n);
  let constant = true;
  for (let i = 1; i < n; i++) if (!(values[i] === values[0])) { constant = false; break; }
  if (n > 0 && !(values[0] === values[0])) constant = false;
  if (n === 0 || constant) { out.set(values); return out; }
  // 1 - w**n is exactly 1 once w**n < 2**-54 (half the spacing of doubles below 1; smoothing.py's rule): from
  // there on no power is taken (at w = 0.6 after 74 points), the same numbers ~10x sooner
  let last = 0, count = 0, whole = weight === 1;   // w == 1: TensorBoard divides by 1
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (!isFinite(v)) { out[i] = v; continue; }
    last = last * weight + (1 - weight) * v;
    count++;
    let debias = 1;
    if (!whole) { const p = Math.pow(weight, count); if (p < 2 ** -54) whole = true; else debias = 1 - p; }
    out[i] = last / debias;
  }
  return out;
}

/** W&B's time-weighted EMA of finite points (Float64Arrays x, y): its published loop. */
function twema(x, y, p) {
  const n = y.length, out = new Float64Array(n), s = Math.min(Math.sqrt(p), 0.999);
  let lo = Infinity, hi = -Infinity;
  for (let i = 0; i < n; i++) { if (x[i] < lo) lo = x[i]; if (x[i] > hi) hi = x[i]; }
  const span = hi - lo, scaled = span > 0 && isFinite(span);
  let last = 0, debias = 0;
  for (let k = 0; k < n; k++) {
    const dx = scaled ? (x[k] - x[k > 0 ? k - 1 : 0]) / span * TWEMA_VIEWPORT_SCALE : 0;
    const a = Math.pow(s, dx);
    last = last * a + y[k];
    debias = debias * a + 1;
    out[k] = last / debias;
  }
  return out;
}

/** Mean of each point's window of ``m`` finite points, trailing or centred, from a running total. */
function windowMean(y, m, centred) {
  const n = y.length, out = new Float64Array(n), total = new Float64Array(n + 1), base = y[0];
  for (let i = 0; i < n; i++) total[i + 1] = total[i] + (y[i] - base);
  for (let k = 0; k < n; k++) {
    const lo = centred ? Math.max(k - Math.floor(m / 2), 0) : Math.max(k + 1 - m, 0);
    const hi = centred ? Math.min(k + (m - 1) - Math.floor(m / 2) + 1, n) : k + 1;
    out[k] = (total[hi] - total[lo]) / (hi - lo) + base;
  }
  return out;
}

/** Gaussian-weighted mean over the finite points within GAUSSIAN_TRUNCATE sigma of each point's x, summed
 * over its neighbours in ascending x. */
function gaussian(x, y, sigma) {
  const n = y.length;
  let sorted = true;
  for (let i = 1; i < n; i++) if (x[i] < x[i - 1]) { sorted = false; break; }
  const order = sorted ? null : Array.from(x.keys()).sort((a, b) => x[a] - x[b] || a - b);
  const xs = sorted ? x : Float64Array.from(order, i => x[i]), ys = sorted ? y : Float64Array.from(order, i => y[i]);
  const reach = GAUSSIAN_TRUNCATE * sigma, res = new Float64Array(n);
  let lo = 0, hi = 0;
  for (let k = 0; k < n; k++) {
    const from = xs[k] - reach, to = xs[k] + reach;
    while (lo < n && xs[lo] < from) lo++;
    while (hi < n && xs[hi] <= to) hi++;
    let num = 0, den = 0;
    for (let i = lo; i < hi; i++) {
      const d = (xs[i] - xs[k]) / sigma, w = Math.exp(-0.5 * d * d);
      num += w * ys[i];
      den += w;
    }
    res[k] = num / den;
  }
  if (sorted) return res;
  const out = new Float64Array(n);
  order.forEach((i, k) => { out[i] = res[k]; });
  return out;
}

/** ``y`` smoothed by ``kind`` with ``param`` (smoothing.py's ``smooth(x, y, kind, param)``); ``x`` is read by
 * twema and gaussian. Returns a Float64Array of y's length. */
function smoothSeries(x, y, kind, param) {
  if (kind === "ema") return ema(y, param);
  const n = y.length, out = Float64Array.from(y), keep = [];
  const readsX = kind === "twema" || kind === "gaussian";
  for (let i = 0; i < n; i++) if (isFinite(y[i]) && (!readsX || isFinite(x[i]))) keep.push(i);
  if (!keep.length) return out;
  const ys = Float64Array.from(keep, i => y[i]), xs = readsX ? Float64Array.from(keep, i => x[i]) : null;
  let res;
  if (kind === "twema") res = twema(xs, ys, param);
  else if (kind === "gaussian") res = param > 0 ? gaussian(xs, ys, param) : ys;
  else if (kind === "window" || kind === "window-centred") res = windowMean(ys, param, kind === "window-centred");
  else throw new Error("unknown smoothing kind " + kind);
  keep.forEach((i, k) => { out[i] = res[k]; });
  return out;
}

/** Does ``kind`` with ``param`` leave the points as they are (smoothing.py ``Smoothing.raw``)? */
function smoothIsRaw(kind, param) {
  return param === (kind === "window" || kind === "window-centred" ? 1 : 0);
}

/** Does the page's smoothing now leave the points as they are (then the raw lines are the only ones)? */
function smoothingIsRaw() {
  const {kind, param} = currentSmoothing();
  return smoothIsRaw(kind, param);
}

/** The page's smoothing now: the kind chosen and its parameter (the EMA's weight is STATE.smoothing, the
 * report's ``smoothing`` option; the other kinds' parameters are kept per kind in STATE.smoothParams). */
function currentSmoothing() {
  const kind = SMOOTH_KINDS.includes(STATE.smoothKind) ? STATE.smoothKind : "ema";
  return {kind, param: kind === "ema" ? STATE.smoothing : STATE.smoothParams[kind]};
}

/** The sidebar control's range for ``kind``: weights in [0, 0.999], windows of 1-200 points (the number box
 * takes more), sigma from 0 to a tenth of the widest series' x span (``span``). */
function smoothControlRange(kind, span) {
  if (kind === "ema" || kind === "twema") return {min: 0, max: 0.999, step: 0.001};
  if (kind === "window" || kind === "window-centred") return {min: 1, max: 200, step: 1};
  const top = span > 0 && isFinite(span) ? Number((span / 10).toPrecision(2)) : 100;
  return {min: 0, max: top, step: top / 1000};
}

/** A parameter typed or slid for ``kind``, brought into its range. */
function clampSmoothParam(kind, v) {
  v = +v;
  if (kind === "ema" || kind === "twema") return Math.min(0.999, Math.max(0, v || 0));
  if (kind === "window" || kind === "window-centred") return Math.max(1, Math.round(v) || 1);
  return Math.max(0, isFinite(v) ? v : 0);
}

TFE.smoothing = {KINDS: SMOOTH_KINDS, smooth: smoothSeries, ema, twema, windowMean, gaussian, isRaw: smoothIsRaw,
                 current: currentSmoothing};
TFE.smooth = ema;
