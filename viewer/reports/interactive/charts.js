// Static SVG charts drawn in the page: distributions (TensorBoard's percentile bands), histograms (its offset
// "ridge" view) and precision-recall curves (with a step slider). Numbers come from viewer/plots/histograms.py
// (basis-point compression, re-binning) through the embedded arrays; labels are set with textContent. The pieces
// painted in a run's colour carry ``data-paint`` (fill / stroke / both): colour.js repaints them when the
// "Colour by" choice changes; the PR curves are redrawn then.

const SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) node.setAttribute(k, v);
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

/** About ``count`` round tick values covering [lo, hi]. */
function ticks(lo, hi, count) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, count), mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map(m => m * mag).find(s => s >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}

/** An SVG frame of ``w`` x ``h`` with axes: returns {root, sx, sy, plot} (scales map data to pixels). */
function frame(w, h, xr, yr, opts) {
  const m = {l: 52, r: 10, t: 8, b: 28}, pw = w - m.l - m.r, ph = h - m.t - m.b;
  const sx = v => m.l + (v - xr[0]) / ((xr[1] - xr[0]) || 1) * pw;
  const sy = v => m.t + ph - (v - yr[0]) / ((yr[1] - yr[0]) || 1) * ph;
  const root = svg("svg", {viewBox: "0 0 " + w + " " + h, width: opts && opts.fixed ? w : "100%", class: "svg-chart", role: "img"});
  const axes = svg("g", {class: "axes"});
  for (const t of ticks(xr[0], xr[1], opts && opts.xTicks || 5))
    axes.append(svg("line", {x1: sx(t), x2: sx(t), y1: m.t, y2: m.t + ph, class: "grid"}),
                svg("text", {x: sx(t), y: h - 10, "text-anchor": "middle"}, fmtNumber(t, 4)));
  if (!(opts && opts.noY))
    for (const t of ticks(yr[0], yr[1], 4))
      axes.append(svg("line", {x1: m.l, x2: m.l + pw, y1: sy(t), y2: sy(t), class: "grid"}),
                  svg("text", {x: m.l - 4, y: sy(t) + 4, "text-anchor": "end"}, fmtNumber(t, 3)));
  axes.append(svg("rect", {x: m.l, y: m.t, width: pw, height: ph, class: "box"}));
  if (opts && opts.xLabel) axes.append(svg("text", {x: m.l + pw, y: h - 1, "text-anchor": "end", class: "label"}, opts.xLabel));
  if (opts && opts.yLabel) axes.append(svg("text", {x: m.l + 4, y: m.t + 12, class: "label"}, opts.yLabel));
  root.append(axes);
  const plot = svg("g");
  root.append(plot);
  return {root, sx, sy, plot, m, pw, ph};
}

function extent(values) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) if (isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
  if (lo === Infinity) return [0, 1];
  if (lo === hi) return [lo - 0.5, hi + 0.5];
  return [lo, hi];
}

function card(run, tag, ...content) {
  return el("div", {class: "card", dataset: {run, tag}}, cardTitle(tag, run), content);
}

// --- distributions ----------------------------------------------------------------------------------------

/** An SVG path through the finite points ``(xs[i], ys[i])``, broken where a value is not finite. */
function polyline(f, n, xAt, yAt, reverse) {
  let d = "", pen = false;
  for (let k = 0; k < n; k++) {
    const i = reverse ? n - 1 - k : k, x = xAt(i), y = yAt(i);
    if (!isFinite(x) || !isFinite(y)) { pen = false; continue; }
    d += (pen || (reverse && d) ? "L" : "M") + f.sx(x).toFixed(1) + "," + f.sy(y).toFixed(1);
    pen = true;
  }
  return d;
}

function distributionCard(d) {
  const steps = arr(d.step), bands = arr(d.bands), n = steps.length, color = runColor(d.run);
  const xr = n > 1 ? extent(steps) : [steps[0] - 1, steps[0] + 1], yr = extent(bands);
  const f = frame(440, 240, xr, yr, {xLabel: "step"});
  const v = (i, k) => bands[i * 9 + k], x = i => steps[i];
  for (let k = 0; k < 4; k++) {          // outermost band first, inner bands darker (as TensorBoard)
    const top = polyline(f, n, x, i => v(i, 8 - k)), bottom = polyline(f, n, x, i => v(i, k), true);
    if (!top || !bottom) continue;
    f.plot.append(svg("path", {d: top + bottom.replace(/^M/, "L") + "Z", fill: color, "fill-opacity": 0.18 + 0.12 * k,
                               stroke: n === 1 ? color : "none", "stroke-width": n === 1 ? 6 : 0, "data-paint": n === 1 ? "both" : "fill"}));
  }
  const median = polyline(f, n, x, i => v(i, 4));
  if (median) f.plot.append(svg("path", {d: median, fill: "none", stroke: color, "stroke-width": 1.5, "data-paint": "stroke"}));
  return card(d.run, d.tag, f.root);
}

// --- histograms (offset view) ---------------------------------------------------------------------------

function histogramCard(h) {
  const steps = arr(h.step), edges = arr(h.edges), counts = arr(h.counts), m = steps.length, bins = edges.length - 1;
  const w = 440, hgt = 300, color = runColor(h.run);
  const f = frame(w, hgt, [edges[0], edges[bins]], [0, 1], {noY: true, xLabel: "value"});
  let peak = 0;
  for (const c of counts) if (c > peak) peak = c;
  peak = peak || 1;
  const rowGap = f.ph * 0.62 / Math.max(1, m - 1), ridge = f.ph * 0.38;   // ridges overlap like TensorBoard's
  const rows = svg("g");
  for (let r = 0; r < m; r++) {             // oldest at the top and drawn first (behind), newest in front
    const base = f.m.t + ridge + r * rowGap;
    let d = "M" + f.sx(edges[0]).toFixed(1) + "," + base.toFixed(1);
    for (let b = 0; b < bins; b++) {
      const y = base - counts[r * bins + b] / peak * ridge, xc = f.sx((edges[b] + edges[b + 1]) / 2);
      d += "L" + xc.toFixed(1) + "," + y.toFixed(1);
    }
    d += "L" + f.sx(edges[bins]).toFixed(1) + "," + base.toFixed(1) + "Z";
    const t = m > 1 ? r / (m - 1) : 1;
    rows.append(svg("path", {d, fill: color, "fill-opacity": (0.15 + 0.55 * t).toFixed(2), stroke: color, "stroke-width": 0.7, "data-paint": "both"},
                    svg("title", null, "step " + steps[r])));
  }
  f.plot.append(rows);
  const every = Math.max(1, Math.ceil(m / 6));
  for (let r = 0; r < m; r += every)
    f.root.append(svg("text", {x: w - 12, y: f.m.t + ridge + r * rowGap - 2, "text-anchor": "end", class: "step-label"}, String(steps[r])));
  return card(h.run, h.tag, f.root);
}

function kindSection(id, name, items, makeCard) {
  section(id, name, items.length, body => {
    for (const [group, members] of groupByPrefix(items, i => i.tag))
      body.append(groupBox(group, members.length, members.map(makeCard)));
  });
}

kindSection("distributions", "Distributions", DATA.distributions, distributionCard);
kindSection("histograms", "Histograms", DATA.histograms, histogramCard);

// --- PR curves ------------------------------------------------------------------------------------------

/** One chart per tag, a curve per run at the step the slider picks (each run's nearest logged step). */
function prCard(tag, entries) {
  const steps = Array.from(new Set(entries.flatMap(e => e.items.map(i => i.step)))).sort((a, b) => a - b);
  const slot = el("div", {class: "pr-plot"}), label = el("span", {class: "step-value"});
  const slider = el("input", {type: "range", min: 0, max: steps.length - 1, value: steps.length - 1, class: "step-slider",
                              oninput: () => draw()});
  function draw() {
    const target = steps[+slider.value];
    label.textContent = "step " + target;
    const f = frame(400, 320, [0, 1], [0, 1], {xLabel: "recall", yLabel: "precision", fixed: true});
    for (const e of entries) {
      if (!runVisible(e.run)) continue;
      const item = e.items.reduce((best, it) => Math.abs(it.step - target) < Math.abs(best.step - target) ? it : best);
      const p = arr(item.precision), r = arr(item.recall);
      let d = "";
      for (let i = 0; i < p.length; i++) if (isFinite(p[i]) && isFinite(r[i]))
        d += (d ? "L" : "M") + f.sx(r[i]).toFixed(1) + "," + f.sy(p[i]).toFixed(1);
      f.plot.append(svg("path", {d, fill: "none", stroke: runColor(e.run), "stroke-width": 1.6, class: "pr-line", "data-run": e.run},
                        svg("title", null, runName(e.run) + " step " + item.step)));
    }
    slot.textContent = "";
    slot.append(f.root);
  }
  draw();
  const node = el("div", {class: "card", dataset: {tag}}, el("div", {class: "card-title"}, el("span", {class: "tag"}, tag)),
                  slot, steps.length > 1 ? el("div", {class: "slider-row"}, slider, label) : label);
  node.redraw = draw;
  return node;
}

section("pr-curves", "PR curves", new Set(DATA.pr_curves.map(p => p.tag)).size, body => {
  const byTag = new Map();
  for (const e of DATA.pr_curves) { if (!byTag.has(e.tag)) byTag.set(e.tag, []); byTag.get(e.tag).push(e); }
  for (const [group, tags] of groupByPrefix(Array.from(byTag.keys()), t => t))
    body.append(groupBox(group, tags.length, tags.map(t => prCard(t, byTag.get(t)))));
}, what => {
  if (what === "runs" || what === "colour") for (const node of document.querySelectorAll("#pr-curves .card")) node.redraw();
});

// --- embeddings (PCA scatter) -----------------------------------------------------------------------------

const CATEGORY_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
  "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
  "#dbdb8d", "#9edae5"];

function embeddingCard(e) {
  if (e.error) return card(e.run, e.tag, el("p", {class: "empty"}, "not drawn: " + e.error));
  const xs = arr(e.x), ys = arr(e.y), cat = e.category ? arr(e.category) : null;
  const f = frame(440, 360, extent(xs), extent(ys), {xLabel: "PC 1 (" + (100 * e.ratio[0]).toFixed(1) + "%)",
                                                      yLabel: "PC 2 (" + (100 * e.ratio[1]).toFixed(1) + "%)"});
  const paths = new Map();
  for (let i = 0; i < xs.length; i++) {       // one path of tiny squares per category: fast for thousands of points
    const k = cat ? cat[i] : 0;
    paths.set(k, (paths.get(k) || "") + "M" + (f.sx(xs[i]) - 1.5).toFixed(1) + "," + (f.sy(ys[i]) - 1.5).toFixed(1) + "h3v3h-3z");
  }
  for (const [k, d] of paths) f.plot.append(svg("path", {d, fill: cat ? CATEGORY_COLORS[k % 20] : "#1f77b4", "fill-opacity": 0.8}));
  const legend = cat ? el("div", {class: "legend"}, el("b", null, e.label + ": "), e.categories.map((name, k) =>
    el("span", {class: "legend-item"}, el("i", {class: "swatch", style: {background: CATEGORY_COLORS[k % 20]}}), name || "(empty)"))) : null;
  return card(e.run, e.tag, f.root, el("div", {class: "muted"}, e.points + " points × " + e.dims + " dims" +
              (e.shown < e.points ? " (" + e.shown + " shown)" : "")), legend);
}

kindSection("embeddings", "Embeddings", DATA.embeddings, embeddingCard);
