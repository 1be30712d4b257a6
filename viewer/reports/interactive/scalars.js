// Scalars: one uPlot chart per tag (or per --group value), every visible run overlaid, the raw series faint
// behind its smoothed line (smoothing.js: TensorBoard's debiased EMA unless the sidebar chooses another kind).
// Hover shows each run's step, wall time, smoothed and raw value; drag zooms, double-click resets; each chart
// downloads its every point as CSV. Long series are drawn M4
// downsampled (per pixel column: first, last, min, max of raw and smoothed), re-done for the zoomed range.
// With --aggregate the page also holds each group of runs reduced per step (collect.py _aggregates:
// tfevents.summaries.aggregate's numbers); in the "bands" view a chart draws each group's centre line (mean or
// median) over a shaded band (mean ± std or min–max: uPlot's bands between the edges' series), against steps.

const SC = DATA.scalars;
let SERIES = [];   // filled by buildScalars once the buffer is loaded
let BANDS = [];    // the aggregates, likewise

/** The series smoothed as the sidebar says (smoothing.js), cached per kind, parameter and x axis. */
function smoothed(s) {
  const {kind, param} = currentSmoothing(), key = kind + "|" + param + "|" + STATE.x;
  if (s.weight !== key) { s.smoothed = smoothOnX(s, kind, param); s.weight = key; }
  return s.smoothed;
}

/** The widest x span of the series in the current x axis (the Gaussian's sigma slider reaches a tenth of it). */
function xSpan() {
  let span = 0;
  for (const s of SERIES) {   // max - min of the x values there are (on a tag's axis some points have none)
    let lo = Infinity, hi = -Infinity;
    for (const v of xsOf(s, STATE.x).x) if (isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
    if (hi > lo) span = Math.max(span, hi - lo);
  }
  return span;
}
TFE.xSpan = xSpan;

/** ``s`` smoothed on the current x axis: on a tag's axis only the points that have an x (those the chart draws,
 * as ``tfevents plot --x TAG`` smooths the points it keeps), NaN at the others. */
function smoothOnX(s, kind, param) {
  const {x, dropped} = xsOf(s, STATE.x);
  if (!dropped) return smoothSeries(kind === "ema" ? null : x, s.value, kind, param);
  const keep = [];
  for (let i = 0; i < x.length; i++) if (x[i] === x[i]) keep.push(i);
  const part = smoothSeries(kind === "ema" ? null : Float64Array.from(keep, i => x[i]),
                            Float64Array.from(keep, i => s.value[i]), kind, param);
  const out = new Float64Array(x.length).fill(NaN);
  keep.forEach((i, k) => { out[i] = part[k]; });
  return out;
}

const X_BUILTIN = ["step", "relative", "wall"];
let XSRC = new Map();   // run + "\n" + tag -> {step, value}: every scalar series a run's x can be taken from

/** The x of each point of ``s`` on the tag ``tag``'s axis, by tfevents.summaries.reader.x_axis.x_at_steps's rule:
 * the value the run logged for ``tag`` at the point's step; else the linear interpolation between that series'
 * points around the step (np.interp's arithmetic), only inside its step range; else NaN (the point is dropped
 * and counted). That series is first put in step order with one point per step (the last logged) and its
 * non-finite values left out. */
function xFromTag(s, tag) {
  const src = XSRC.get(s.run + "\n" + tag), n = s.step.length, out = new Float64Array(n).fill(NaN);
  if (!src) return out;
  const idx = Array.from(src.step.keys()).sort((a, b) => src.step[a] - src.step[b] || a - b);
  let xs = [], vs = [];
  for (const i of idx) {
    if (xs.length && xs[xs.length - 1] === src.step[i]) { xs.pop(); vs.pop(); }
    xs.push(src.step[i]); vs.push(src.value[i]);
  }
  const fin = vs.map(v => isFinite(v));
  xs = xs.filter((_, k) => fin[k]); vs = vs.filter((_, k) => fin[k]);
  const m = xs.length;
  for (let i = 0; i < n; i++) {
    const st = s.step[i];
    if (!m || st < xs[0] || st > xs[m - 1]) continue;
    let lo = 0, hi = m - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (xs[mid] < st) lo = mid + 1; else hi = mid; }
    if (xs[lo] === st) { out[i] = vs[lo]; continue; }
    const slope = (vs[lo] - vs[lo - 1]) / (xs[lo] - xs[lo - 1]);
    out[i] = slope * (st - xs[lo - 1]) + vs[lo - 1];
  }
  return out;
}
TFE.xFromTag = xFromTag;

/** The series' x values in the current axis mode (Float64Array, cached per mode): step, wall or relative time,
 * or any scalar tag (``xFromTag``); ``order`` their ascending order (null when it is the points' own), leaving
 * out the points without an x, ``dropped`` their count. */
function xsOf(s, mode) {
  if (s.xs[mode]) return s.xs[mode];
  if (mode === "step" && STEP_XS.has(s.step)) return (s.xs[mode] = STEP_XS.get(s.step));
  const n = s.step.length, out = new Float64Array(n);
  if (mode === "step") out.set(s.step);
  else if (mode === "wall") out.set(s.wall);
  else if (mode !== "relative") out.set(xFromTag(s, mode));
  else for (let i = 0; i < n; i++) out[i] = s.wall[i] - s.wall[0];
  let sorted = true, dropped = 0;
  for (let i = 0; i < n; i++) if (out[i] !== out[i]) dropped++;
  for (let i = 1; i < n; i++) if (out[i] < out[i - 1]) { sorted = false; break; }
  const order = sorted && !dropped ? null
    : Array.from(out.keys()).filter(i => out[i] === out[i]).sort((a, b) => out[a] - out[b] || a - b);
  s.xs[mode] = {x: out, order, dropped};
  if (mode === "step") STEP_XS.set(s.step, s.xs[mode]);
  return s.xs[mode];
}
const STEP_XS = new WeakMap();   // a steps array -> xsOf's answer on the step axis: the served page's runs at the
                                 // same steps share one array of them (served.js getSeries), and so one x

/** Indices (ascending x) kept for display: every point in [lo, hi] when they are few, else per bucket of
 * the range the first, last, min and max of ``a`` and ``b`` (M4); plus the neighbours just outside. */
function m4(x, order, a, b, lo, hi, buckets) {
  const n = order ? order.length : x.length, at = k => (order ? order[k] : k);
  let first = 0, last = n - 1;
  while (first < n && x[at(first)] < lo) first++;
  while (last >= 0 && x[at(last)] > hi) last--;
  const keep = [];
  if (first > 0) keep.push(at(first - 1));
  if (last - first + 1 <= 4 * buckets) {
    for (let k = first; k <= last; k++) keep.push(at(k));
  } else {
    const scale = buckets / ((hi - lo) || 1);
    let bucket = -1, picks = null;
    const flush = () => { if (picks) keep.push(...new Set(picks.filter(i => i >= 0)).values()); };
    let aMin, aMax, bMin, bMax, iaMin, iaMax, ibMin, ibMax, prev;
    for (let k = first; k <= last; k++) {
      const i = at(k), bk = Math.min(buckets - 1, Math.floor((x[i] - lo) * scale));
      if (bk !== bucket) {
        if (picks) { picks.push(iaMin, iaMax, ibMin, ibMax, prev); picks.sort((p, q) => p - q); flush(); }
        bucket = bk; picks = [i]; aMin = bMin = Infinity; aMax = bMax = -Infinity; iaMin = iaMax = ibMin = ibMax = -1;
      }
      const va = a[i], vb = b[i];
      if (va < aMin) { aMin = va; iaMin = i; } if (va > aMax) { aMax = va; iaMax = i; }
      if (vb < bMin) { bMin = vb; ibMin = i; } if (vb > bMax) { bMax = vb; ibMax = i; }
      if (!isFinite(va)) picks.push(i);
      prev = i;
    }
    if (picks) { picks.push(iaMin, iaMax, ibMin, ibMax, prev); picks.sort((p, q) => p - q); flush(); }
  }
  if (last < n - 1 && last >= -1) keep.push(at(last + 1));
  return keep;
}
TFE.m4 = m4;

function visibleSeries(chart) {
  return chart.series.map(i => SERIES[i]).filter(s => runVisible(s.run));
}

/** chartData's answer, without aligning or picking, when there is nothing to align or pick (a sweep's runs
 * logged at the same steps): every shown series has the same strictly increasing x, no more points than m4 keeps
 * whole, and only values that are drawn (finite; positive on log y). Its x and the series' own value and smoothed
 * arrays, uncopied (the general path's arrays hold the same numbers); null otherwise. */
function sharedData(shown, mode, logy, width) {
  if (!shown.length) return null;
  const x = xsOf(shown[0], mode).x, n = x.length;
  if (!n || n > 4 * width) return null;
  for (let i = 1; i < n; i++) if (!(x[i] > x[i - 1])) return null;
  const drawn = ys => {   // (v - v is 0 for a finite v, NaN for NaN and ±inf: sooner than isFinite on typed arrays)
    if (logy) { for (let i = 0; i < n; i++) if (!(ys[i] > 0) || ys[i] - ys[i] !== 0) return false; return true; }
    for (let i = 0; i < n; i++) if (ys[i] - ys[i] !== 0) return false;
    return true;
  };
  const data = [x];
  for (const s of shown) {
    const own = xsOf(s, mode);
    if (own.order || own.dropped || own.x.length !== n) return null;
    if (own.x !== x) for (let i = 0; i < n; i++) if (own.x[i] !== x[i]) return null;
    const sm = smoothed(s);
    if (!drawn(s.value) || !drawn(sm)) return null;
    data.push(s.value, sm);
  }
  return data;
}

/** uPlot's aligned data for a chart: one shared x (the union of the kept points' x) and, per series, raw
 * then smoothed y with null where the series has no point (spanGaps joins them). */
function chartData(chart, range) {
  if (chart.bandView) return bandData(chart, range);
  const mode = STATE.x, logy = STATE.logy, shown = chart.shown;
  const width = Math.max(200, chart.width || 400);
  const picks = [], logx = STATE.logx && mode !== "wall";   // on log x the points at x <= 0 are not drawn
  const shared = range || logx ? null : sharedData(shown, mode, logy, width);
  if (shared) return shared;
  let lo = Infinity, hi = -Infinity;
  for (const s of shown) {
    const {x} = xsOf(s, mode);
    for (let i = 0; i < x.length; i++) { if (logx && !(x[i] > 0)) continue; if (x[i] < lo) lo = x[i]; if (x[i] > hi) hi = x[i]; }
  }
  for (const s of shown) {
    const {x, order} = xsOf(s, mode), sm = smoothed(s);
    let idx = m4(x, order, s.value, sm, lo, hi, width);
    if (range && range[0] > lo || range && range[1] < hi) {
      idx = Array.from(new Set(idx.concat(m4(x, order, s.value, sm, range[0], range[1], width))));
      idx.sort((p, q) => x[p] - x[q] || p - q);
    }
    picks.push(logx ? idx.filter(i => x[i] > 0) : idx);
  }
  const all = [];
  shown.forEach((s, k) => { const {x} = xsOf(s, mode); for (const i of picks[k]) all.push(x[i]); });
  const xsU = Float64Array.from(new Set(all)).sort();
  const pos = new Map();
  xsU.forEach((v, i) => pos.set(v, i));
  const data = [xsU];
  shown.forEach((s, k) => {
    const {x} = xsOf(s, mode), sm = smoothed(s);
    const raw = new Array(xsU.length).fill(null), smo = new Array(xsU.length).fill(null);
    for (const i of picks[k]) {
      const p = pos.get(x[i]);
      const rv = s.value[i], sv = sm[i];
      raw[p] = isFinite(rv) && (!logy || rv > 0) ? rv : null;
      smo[p] = isFinite(sv) && (!logy || sv > 0) ? sv : null;
    }
    data.push(raw, smo);
  });
  return data;
}

function quantile(sorted, q) {
  const p = (sorted.length - 1) * q, i = Math.floor(p), f = p - i;
  return i + 1 < sorted.length ? sorted[i] + f * (sorted[i + 1] - sorted[i]) : sorted[i];
}

/** The y range: all visible points, or their 5th to 95th percentile ("ignore outliers"), padded 5%. */
function yRange(u, dmin, dmax) {
  const x0 = u.scales.x.min, x1 = u.scales.x.max, xs = u.data[0], n = xs.length;
  let i0 = 0, i1 = n - 1;
  if (x0 != null) { while (i0 < n && xs[i0] < x0) i0++; while (i1 >= 0 && xs[i1] > x1) i1--; }
  let lo = Infinity, hi = -Infinity, count = 0;
  for (let k = 1; k < u.data.length; k++) {
    if (!u.series[k].show) continue;
    const ys = u.data[k];
    for (let i = i0; i <= i1; i++) { const v = ys[i]; if (v !== null) { count++; if (v < lo) lo = v; if (v > hi) hi = v; } }
  }
  if (!count) return STATE.logy ? [1, 10] : [0, 1];
  if (STATE.outliers) {
    const vals = new Float64Array(count);
    let j = 0;
    for (let k = 1; k < u.data.length; k++) {
      if (!u.series[k].show) continue;
      const ys = u.data[k];
      for (let i = i0; i <= i1; i++) if (ys[i] !== null) vals[j++] = ys[i];
    }
    vals.sort();
    lo = quantile(vals, 0.05); hi = quantile(vals, 0.95);
  }
  if (STATE.logy) return uPlot.rangeLog(lo, hi, 10, true);
  const pad = (hi - lo) * 0.05 || Math.abs(lo) * 0.1 || 1;
  return [lo - pad, hi + pad];
}

function xAxisValues(u, splits) {
  if (STATE.x === "relative") return splits.map(v => fmtDuration(v));
  return splits.map(v => fmtNumber(v, 6));
}

// --- bands: each group of runs as its centre line over a shaded band ------------------------------------

/** Is the chart drawn as bands: the bands view is chosen and the chart has aggregates. */
function bandView(chart) { return STATE.view === "bands" && chart.bands.some(i => bandOnAxis(BANDS[i])); }

/** Is a group drawn on the current x axis: groups aligned on steps (``axis`` "step") go with the step and time axes
 * (drawn against steps), groups aligned on a tag (``report --aggregate --x TAG``) with that tag's axis only. */
function bandOnAxis(b) { return b.axis && b.axis !== "step" ? STATE.x === b.axis : X_BUILTIN.includes(STATE.x); }

/** A group's band is shown while any of its runs is (the statistics are those of all its runs). */
function visibleBands(chart) {
  return chart.bands.map(i => BANDS[i]).filter(b => bandOnAxis(b) && (!b.runs.length || b.runs.some(runVisible)));
}

/** ``[lower, upper]`` of a group for the band chosen: mean ∓ std (no std, one run: the mean), or min and max;
 * ``null`` for no band (viewer/plots/bands.py band_edges). */
function bandEdges(b) {
  if (STATE.band === "std") {
    const n = b.mean.length, lo = new Float64Array(n), hi = new Float64Array(n);
    for (let i = 0; i < n; i++) { const sd = b.std[i] === b.std[i] ? b.std[i] : 0; lo[i] = b.mean[i] - sd; hi[i] = b.mean[i] + sd; }
    return [lo, hi];
  }
  return STATE.band === "minmax" ? [b.min, b.max] : null;
}

/** The centre line and band edges drawn for a group: smoothed as a run's series is (x: the steps), cached
 * per (smoothing, centre, band). */
function bandLines(b) {
  const {kind, param} = currentSmoothing(), key = kind + "|" + param + "|" + STATE.center + "|" + STATE.band;
  if (b.key === key) return b.lines;
  const edges = bandEdges(b), sm = v => (smoothIsRaw(kind, param) ? v : smoothSeries(b.step, v, kind, param));
  b.lines = {center: sm(b[STATE.center]), lower: edges ? sm(edges[0]) : null, upper: edges ? sm(edges[1]) : null};
  b.key = key;
  return b.lines;
}
TFE.bandLines = bandLines;

/** uPlot's data for a bands chart: the union of the kept steps, then per group lower, upper and centre (null
 * where the group has no row). Kept rows: M4 of the edges and of the centre (``m4``). */
function bandData(chart, range) {
  const shown = chart.shownBands, logy = STATE.logy, width = Math.max(200, chart.width || 400), picks = [];
  let lo = Infinity, hi = -Infinity;
  for (const b of shown) if (b.step.length) { lo = Math.min(lo, b.step[0]); hi = Math.max(hi, b.step[b.step.length - 1]); }
  for (const b of shown) {
    const L = bandLines(b), lower = L.lower || L.center, upper = L.upper || L.center;
    let idx = [];
    for (const [r0, r1] of range && (range[0] > lo || range[1] < hi) ? [[lo, hi], range] : [[lo, hi]])
      idx = idx.concat(m4(b.step, null, lower, upper, r0, r1, width), m4(b.step, null, L.center, L.center, r0, r1, width));
    idx = Array.from(new Set(idx)).sort((p, q) => p - q);
    picks.push(STATE.logx ? idx.filter(i => b.step[i] > 0) : idx);
  }
  const all = [];
  shown.forEach((b, k) => { for (const i of picks[k]) all.push(b.step[i]); });
  const xsU = Float64Array.from(new Set(all)).sort(), pos = new Map();
  xsU.forEach((v, i) => pos.set(v, i));
  const data = [xsU], ok = v => isFinite(v) && (!logy || v > 0) ? v : null;
  shown.forEach((b, k) => {
    const L = bandLines(b), cols = [L.lower, L.upper, L.center].map(() => new Array(xsU.length).fill(null));
    for (const i of picks[k]) {
      const p = pos.get(b.step[i]);
      if (L.lower) { cols[0][p] = ok(L.lower[i]); cols[1][p] = ok(L.upper[i]); }
      cols[2][p] = ok(L.center[i]);
    }
    data.push(...cols);
  });
  return data;
}

/** The bands chart's uPlot series (per group: lower edge, upper edge, centre) and bands (fill between edges). */
function bandSeries(chart) {
  const series = [{}], bands = [];
  chart.shownBands.forEach((b, k) => {
    const label = b.group + " (" + b.runs.length + " run" + (b.runs.length === 1 ? "" : "s") + ")", edge = STATE.band !== "none";
    series.push({label: label + " lower", stroke: b.color + "66", width: 1, spanGaps: true, show: edge, points: {show: false}},
                {label: label + " upper", stroke: b.color + "66", width: 1, spanGaps: true, show: edge, points: {show: false}},
                {label, stroke: b.color, width: 1.8, spanGaps: true, points: {show: lonePoint, size: 7, fill: b.color}});
    if (edge) bands.push({series: [2 + 3 * k, 1 + 3 * k], fill: b.color + BAND_ALPHA_HEX});
  });
  return {series, bands};
}
const BAND_ALPHA_HEX = "40";   // the band's fill: the group's colour at alpha 0x40/255 (about viewer/plots/bands.py's 0.25)
TFE.bandAlpha = parseInt(BAND_ALPHA_HEX, 16) / 255;

function bandTooltipRows(chart, u) {
  const left = u.cursor.left;
  if (left == null || left < 0) return null;
  const xv = u.posToVal(left, "x"), rows = [];
  for (const b of chart.shownBands) {
    let loK = 0, hiK = b.step.length - 1;
    while (loK < hiK) { const mid = (loK + hiK) >> 1; if (b.step[mid] < xv) loK = mid + 1; else hiK = mid; }
    if (loK > 0 && Math.abs(b.step[loK - 1] - xv) <= Math.abs(b.step[loK] - xv)) loK--;
    rows.push([b, loK]);
  }
  return rows;
}

function showBandTooltip(chart, u) {
  const tip = chart.tooltip, rows = bandTooltipRows(chart, u);
  if (!rows) { tip.classList.add("hidden"); return; }
  const body = el("tbody");
  for (const [b, i] of rows) {
    const L = bandLines(b);
    body.append(el("tr", null, el("td", null, el("i", {class: "swatch", style: {background: b.color}})),
      el("td", {class: "name"}, b.group), el("td", null, fmtNumber(L.center[i])),
      el("td", null, L.lower ? fmtNumber(L.lower[i]) + " – " + fmtNumber(L.upper[i]) : ""),
      el("td", null, String(b.count[i])), el("td", null, String(b.step[i]))));
  }
  tip.textContent = "";
  tip.append(el("table", null, el("thead", null, el("tr", null, ["", "Group", STATE.center, {std: "± std", minmax: "min – max", none: ""}[STATE.band], "Runs", X_BUILTIN.includes(STATE.x) ? "Step" : STATE.x]
    .map(h => el("th", null, h)))), body));
  placeTooltip(chart, u);
}

/** The bands chart's rows as CSV: group,tag,step,mean,std,min,max,median,count (tfevents.summaries.aggregate's). */
function bandCsv(chart) {
  const stats = ["mean", "std", "min", "max", "median", "count"];
  const onTag = !X_BUILTIN.includes(STATE.x);   // groups aligned on a tag: their x values in an x column
  const lines = ["group,tag," + (onTag ? "x," : "step,") + stats.join(",")];
  const q = v => /[",\n\r]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v;
  for (const b of visibleBands(chart))
    for (let i = 0; i < b.step.length; i++) lines.push([q(b.group), q(b.tag), b.step[i]].concat(stats.map(s => b[s][i])).join(","));
  return lines.join("\n") + "\n";
}

function tooltipRows(chart, u) {
  const left = u.cursor.left;
  if (left == null || left < 0) return null;
  const xv = u.posToVal(left, "x"), mode = STATE.x, rows = [];
  const multiTag = new Set(chart.shown.map(s => s.tag)).size > 1;
  for (const s of chart.shown) {
    const {x, order} = xsOf(s, mode);
    let loK = 0, hiK = (order ? order.length : x.length) - 1;
    if (hiK < 0) continue;
    const at = k => (order ? order[k] : k);
    while (loK < hiK) { const mid = (loK + hiK) >> 1; if (x[at(mid)] < xv) loK = mid + 1; else hiK = mid; }
    let i = at(loK);
    if (loK > 0 && Math.abs(x[at(loK - 1)] - xv) <= Math.abs(x[i] - xv)) i = at(loK - 1);
    rows.push([s, i]);
  }
  return {multiTag, rows};
}

function showTooltip(chart, u) {
  const tip = chart.tooltip, info = tooltipRows(chart, u);
  if (!info) { tip.classList.add("hidden"); return; }
  const body = el("tbody");
  for (const [s, i] of info.rows) {
    const sm = smoothed(s);
    body.append(el("tr", null, el("td", null, swatch(s.run)),
      el("td", {class: "name"}, info.multiTag ? runName(s.run) + ": " + s.tag : runName(s.run)),
      el("td", null, fmtNumber(sm[i])), el("td", null, fmtNumber(s.value[i])), el("td", null, String(s.step[i])),
      el("td", null, fmtWall(s.wall[i])), el("td", null, fmtDuration(s.wall[i] - s.wall[0]))));
  }
  tip.textContent = "";
  tip.append(el("table", null, el("thead", null, el("tr", null, ["", "Run", "Smoothed", "Value", "Step", "Time", "Relative"]
    .map(h => el("th", null, h)))), body));
  placeTooltip(chart, u);
}

function placeTooltip(chart, u) {
  const tip = chart.tooltip;
  tip.classList.remove("hidden");
  const box = chart.card.getBoundingClientRect(), over = u.over.getBoundingClientRect();
  const x = over.left - box.left + u.cursor.left, y = over.top - box.top + u.cursor.top;
  tip.style.left = Math.max(0, Math.min(x + 14, box.width - tip.offsetWidth - 4)) + "px";
  tip.style.top = (y + 14 + tip.offsetHeight > box.height ? Math.max(0, y - tip.offsetHeight - 10) : y + 14) + "px";
}

/** The chart's every point as CSV: run,tag,step,wall_time,value (one row per logged value). */
function chartCsv(chart) {
  if (bandView(chart)) return bandCsv(chart);
  const onTag = !X_BUILTIN.includes(STATE.x);   // on a tag's axis: an x column, the points without an x left out
  const lines = ["run,tag,step,wall_time,value" + (onTag ? ",x" : "")];
  const q = v => /[",\n\r]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v;
  for (const s of visibleSeries(chart)) {
    const name = q(runName(s.run)), tag = q(s.tag), xs = onTag ? xsOf(s, STATE.x).x : null;
    for (let i = 0; i < s.step.length; i++) {
      if (onTag && xs[i] !== xs[i]) continue;
      lines.push(name + "," + tag + "," + s.step[i] + "," + s.wall[i] + "," + s.value[i] + (onTag ? "," + xs[i] : ""));
    }
  }
  return lines.join("\n") + "\n";
}
TFE.chartCsv = chartCsv;
TFE.chartData = chartData;

function downloadCsv(chart) {
  const url = URL.createObjectURL(new Blob([chartCsv(chart)], {type: "text/csv"}));
  const name = chart.title.replace(/[^A-Za-z0-9_.-]+/g, "_") + ".csv";
  const a = el("a", {href: url, download: name});
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const LINEAR = uPlot.paths.linear();
const X_PIXELS = new WeakMap();   // uPlot chart -> its x values' pixels on the last scale and plot box asked for

/** uPlot's linear paths (``uPlot.paths.linear``, spanning gaps), for a chart's lines: the same points joined, at
 * the same rounded pixels (``round(left + width * (x - min) / (max - min))``, ``round(top + height * (1 - (y -
 * min) / (max - min)))``), but each x worked out once per draw for all the series (uPlot works out both, through
 * its scale's functions, for each point of each series: most of a chart of 100 runs' drawing). Linear axes left
 * to right and bottom to top only, and no more points than uPlot joins one by one (below 4 a pixel column); uPlot's
 * own builder otherwise. */
function linePaths(u, k, i0, i1) {
  const sx = u.scales.x, sy = u.scales[u.series[k].scale], box = u.bbox;
  if (sx.distr !== 1 || sy.distr !== 1 || sx.ori !== 0 || sx.dir !== 1 || sy.dir !== 1 || i1 - i0 >= box.width * 4)
    return LINEAR(u, k, i0, i1);
  const xs = u._data[0], ys = u._data[k];
  let px = X_PIXELS.get(u);
  if (!px || px.xs !== xs || px.min !== sx._min || px.max !== sx._max || px.left !== box.left || px.width !== box.width) {
    const at = new Float64Array(xs.length), min = sx._min, span = sx._max - min;
    for (let i = 0; i < xs.length; i++) at[i] = Math.round(box.left + box.width * ((xs[i] - min) / span));
    px = {xs, min: sx._min, max: sx._max, left: box.left, width: box.width, at};
    X_PIXELS.set(u, px);
  }
  while (i0 <= i1 && ys[i0] == null) i0++;   // uPlot's: from the first point with a value to the last
  while (i1 >= i0 && ys[i1] == null) i1--;
  const stroke = new Path2D(), at = px.at, min = sy._min, span = sy._max - min, top = box.top, height = box.height;
  for (let i = i0; i <= i1; i++) {
    const v = ys[i];
    if (v != null) stroke.lineTo(at[i], Math.round(top + height * (1 - (v - min) / span)));
  }
  return {stroke, fill: null, clip: null, band: null, gaps: null, flags: 1};   // flags: uPlot's BAND_CLIP_FILL
}
TFE.linePaths = linePaths;

/** uPlot's points.show: a series with one point in view draws no line, so draw that point (as TensorBoard does). */
function lonePoint(u, k, i0, i1) {
  const ys = u.data[k];
  let n = 0;
  for (let i = i0; i <= i1 && n < 2; i++) if (ys[i] !== null) n++;
  return n === 1;
}

// A chart of more runs than this draws its smoothed lines 1 px wide, not 1.5: that many lines overlap anyway, and
// a 1 px line is a hairline to the canvas, drawn about ten times sooner (where the canvas is drawn in software, as
// in a browser without a GPU: 100 runs' lines of 1,000 points, 70 ms -> 7 ms).
const THIN_ABOVE = 20;

function makePlot(chart) {
  if (chart.u) { chart.u.destroy(); chart.u = null; }
  chart.shown = visibleSeries(chart);
  chart.bandView = bandView(chart);
  chart.shownBands = chart.bandView ? visibleBands(chart) : [];
  chart.card.classList.toggle("hidden", !chart.shown.length || !tagVisible(chart.title) && !chart.shown.some(s => tagVisible(s.tag)));
  if (!chart.shown.length) return;
  if (TFE.pendingFor && TFE.pendingFor(chart)) { TFE.whenPending(chart); return; }   // served: asked for (served.js)
  const lost = X_BUILTIN.includes(STATE.x) ? 0 : chart.bandView ? chart.shownBands.reduce((n, b) => n + (b.dropped || 0), 0)
    : chart.shown.reduce((n, s) => n + xsOf(s, STATE.x).dropped, 0);
  chart.note.textContent = lost ? lost + " point" + (lost === 1 ? "" : "s") + " without " + STATE.x + " dropped" : "";
  if (chart.bandView) { if (chart.shownBands.length) makeBandPlot(chart); return; }
  const multiTag = new Set(chart.shown.map(s => s.tag)).size > 1, tags = Array.from(new Set(chart.shown.map(s => s.tag)));
  const series = [{}], thin = chart.shown.length > THIN_ABOVE;
  for (const s of chart.shown) {
    const label = multiTag ? runName(s.run) + ": " + s.tag : runName(s.run), dash = [[], [6, 3], [2, 2], [8, 3, 2, 3]][tags.indexOf(s.tag) % 4];
    series.push({label: label + " (raw)", stroke: runColor(s.run) + "40", width: 1, spanGaps: true, dash, paths: linePaths,
                 show: !smoothingIsRaw(), points: {show: lonePoint}},
                {label, stroke: runColor(s.run), width: thin ? 1 : 1.5, spanGaps: true, dash, paths: linePaths,
                 points: {show: lonePoint, size: 7, fill: runColor(s.run)}});
  }
  mountPlot(chart, {series}, STATE.x === "wall", STATE.x === "wall" ? undefined : xAxisValues, showTooltip);
}

/** The uPlot chart of `chart` (options both kinds of chart share, then `extra`): x as time or not, its axis
    labels, the tooltip function. */
function mountPlot(chart, extra, xTime, xValues, tooltip) {
  const width = Math.max(240, chart.plot.clientWidth || 400);
  chart.width = width;
  const opts = Object.assign({
    width, height: 260, legend: {show: false},
    cursor: {drag: {x: true, y: false}, points: {size: 6}},
    scales: {x: {time: xTime, distr: STATE.logx && !xTime ? 3 : 1}, y: {distr: STATE.logy ? 3 : 1, range: yRange}},
    axes: [{values: xValues, size: 36, font: "11px system-ui, sans-serif"},
           {size: 56, font: "11px system-ui, sans-serif", values: (u, splits) => splits.map(v => fmtNumber(v, 4))}],
    hooks: {
      setCursor: [u => tooltip(chart, u)],
      setScale: [(u, key) => { if (key === "x") rezoom(chart, u); }],
      draw: [() => { chart.draws++; }],
    },
  }, extra);
  chart.range = null;
  chart.u = new uPlot(opts, chartData(chart, null), chart.plot);
  chart.u.over.addEventListener("mouseleave", () => chart.tooltip.classList.add("hidden"));
}

/** A bands chart: x is the step (a group's runs share no wall time), uPlot's bands fill between the edges. */
function makeBandPlot(chart) {
  const {series, bands} = bandSeries(chart);
  mountPlot(chart, {series, bands}, false, (u, splits) => splits.map(v => fmtNumber(v, 6)), showBandTooltip);
}

/** After a zoom (or its reset), re-pick the drawn points so the zoomed range is at full resolution. */
function rezoom(chart, u) {
  if (chart.rezooming) return;
  const lo = u.scales.x.min, hi = u.scales.x.max;
  const xs = u.data[0];
  const full = xs.length && lo <= xs[0] && hi >= xs[xs.length - 1];
  const range = full ? null : [lo, hi];
  if (JSON.stringify(range) === JSON.stringify(chart.range)) return;
  chart.range = range;
  chart.rezooming = true;
  try { u.setData(chartData(chart, range), false); u.setScale("x", {min: lo, max: hi}); } finally { chart.rezooming = false; }
  if (range && TFE.onZoom) TFE.onZoom(chart, range);   // served: the range asked for in full (served.js)
}

function refreshData(chart) {
  if (!chart.u) return;
  const {min, max} = chart.u.scales.x;
  chart.rezooming = true;
  try {
    chart.u.setData(chartData(chart, chart.range), !chart.range);
    if (chart.range) chart.u.setScale("x", {min, max});
  } finally { chart.rezooming = false; }
  if (!chart.bandView) chart.u.series.forEach((s, k) => { if (k > 0 && k % 2 === 1) chart.u.setSeries(k, {show: !smoothingIsRaw()}); });
}

const NO_POINTS = {step: new Int32Array(0), wall: new Float64Array(0), value: new Float32Array(0)};

function buildScalars(body) {
  // the served page's series come without arrays, with fetch = [points, last_step] (served.js asks for them)
  SERIES = SC.series.map(s => ({run: s.run, tag: s.tag, step: s.step ? arr(s.step) : NO_POINTS.step,
                                wall: s.wall ? arr(s.wall) : NO_POINTS.wall, value: s.value ? arr(s.value) : NO_POINTS.value,
                                smoothed: null, weight: null, xs: {}, pending: !!s.fetch,
                                fetch: s.fetch && {run: DATA.runs[s.run].name, tag: s.tag, points: s.fetch[0],
                                                   last_step: s.fetch[1]}}));
  XSRC = new Map(SERIES.map(s => [s.run + "\n" + s.tag, s]));
  for (const s of SC.x_only || []) XSRC.set(s.run + "\n" + s.tag, {step: arr(s.step), value: arr(s.value)});
  BANDS = SC.aggregates.map(a => Object.assign({}, a, {step: arr(a.step), mean: arr(a.mean), std: arr(a.std), min: arr(a.min),
                                                       max: arr(a.max), median: arr(a.median), count: arr(a.count), key: null}));
  TFE.bands = BANDS;
  const charts = SC.charts.map(c => ({title: c.title, series: c.series, bands: c.bands || [], u: null, draws: 0}));
  TFE.charts = charts;
  const groups = groupByPrefix(charts, c => c.title);
  for (const [name, members] of groups) {
    const cards = members.map(chart => {
      chart.plot = el("div", {class: "plot"});
      chart.tooltip = el("div", {class: "tooltip hidden"});
      chart.note = el("div", {class: "x-note"});   // the points without an x on a tag's axis, counted
      chart.card = el("div", {class: "card scalar-card", dataset: {scalar: "1", chart: chart.title}},
        el("div", {class: "card-head"}, el("span", {class: "tag"}, chart.title),
           el("button", {type: "button", class: "csv", title: "Download every point of this chart as CSV",
                         onclick: () => downloadCsv(chart)}, "CSV")),
        chart.plot, chart.note, chart.tooltip);
      return chart.card;
    });
    body.append(groupBox(name, members.length, cards));
  }
  for (const chart of charts) makePlot(chart);
  if (window.ResizeObserver) {
    const observer = new ResizeObserver(() => {
      for (const chart of charts) {
        if (!chart.u) continue;
        const w = Math.max(240, chart.plot.clientWidth);
        if (Math.abs(w - chart.u.width) > 2) { chart.width = w; chart.u.setSize({width: w, height: 260}); }
      }
    });
    observer.observe(body);
  }
}

function updateScalars(what) {
  if (what === "smoothing") { for (const c of TFE.charts) refreshData(c); return; }
  if (what === "outliers") { for (const c of TFE.charts) refreshData(c); return; }
  if (what === "tags" || what === "all") {
    for (const c of TFE.charts) if (c.card) c.card.classList.toggle("hidden", !c.shown || !c.shown.length || !(tagVisible(c.title) || c.shown.some(s => tagVisible(s.tag))));
    return;
  }
  for (const c of TFE.charts) makePlot(c);
}

section("scalars", "Scalars", SC.charts.length, buildScalars, updateScalars);
