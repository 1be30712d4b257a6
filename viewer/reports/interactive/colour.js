// tfevents interactive report: runs coloured by a value (issue 35). The sidebar's "Colour by" control (#colour-by,
// in the run list's box) offers the run list's sort columns (runlist.js runSortColumns: each hparam and the last /
// min / max of each scalar tag) besides "run" (each run's own colour, viewer/colors.py, the default). report.js
// runColor(i) answers through colourOf(i) here, so every chart, the run list's swatches, the HParams table and its
// parallel coordinates follow the one choice (STATE.colourBy, kept in sessionStorage as the other controls).
//
// The rule (tests/viewer/test_colour_brush.py computes the same in Python):
// - numbers (every run's value a finite number, booleans not): viridis, VIRIDIS's 11 stops (matplotlib's viridis at
//   0, 0.1, ..., 1). A value's position t is (v - lo) / (hi - lo) over the runs' lo = min and hi = max, or on a log
//   scale (log10(v) - log10(lo)) / (log10(hi) - log10(lo)) when every value is positive and log10(hi) - log10(lo) > 2
//   (more than two decades); t = 0.5 when hi == lo. Then s = t * 10, k = min(9, floor(s)), f = s - k, and each of
//   r, g, b is round-half-up(stop[k] + (stop[k + 1] - stop[k]) * f);
// - anything else (strings, booleans, a mix): one colour per distinct value (its text), the values in sorted order
//   (numbers by value, then booleans, then strings) taking viewer/colors.py's colours in turn (tab10, then golden-
//   angle hues);
// - a run without the value: NO_VALUE_COLOUR.
// The legend (#colour-legend) shows the gradient with its lo / hi ticks (and "log"), or a swatch per value.

const VIRIDIS = ["#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c", "#22a884", "#44bf70", "#7ad151",
                 "#bddf26", "#fde725"];
const CATEGORY_PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                          "#bcbd22", "#17becf"];   // viewer/colors.py PALETTE
const NO_VALUE_COLOUR = "#c8c8c8";

let COLOURING = null;   // the current colouring: {key, kind, colours, ...}; null: to be computed

/** ``#rrggbb`` of viridis at ``t`` in [0, 1] (the stops linearly interpolated, channels rounded half up). */
function viridis(t) {
  const n = VIRIDIS.length, s = Math.min(1, Math.max(0, t)) * (n - 1), k = Math.min(n - 2, Math.floor(s)), f = s - k;
  const a = hexRgb(VIRIDIS[k]), b = hexRgb(VIRIDIS[k + 1]);
  return rgbHex(a.map((c, j) => Math.floor(c + (b[j] - c) * f + 0.5)));
}
TFE.viridis = viridis;

function hexRgb(hex) { return [1, 3, 5].map(j => parseInt(hex.slice(j, j + 2), 16)); }
function rgbHex(rgb) { return "#" + rgb.map(c => c.toString(16).padStart(2, "0")).join(""); }

/** Python's round(): halves to even (viewer/colors.py rounds its golden-angle colours so). */
function roundHalfEven(x) {
  const r = Math.round(x);
  return Math.abs(x - Math.trunc(x)) === 0.5 && r % 2 ? r - 1 : r;
}

/** The ``k``-th categorical colour: viewer/colors.py's order (tab10, then hues spaced by the golden angle). */
function categoryColour(k) {
  if (k < CATEGORY_PALETTE.length) return CATEGORY_PALETTE[k];
  const g = k - CATEGORY_PALETTE.length, h = (0.13 + g * 0.618033988749895) % 1.0;
  const [s, v] = g % 2 === 0 ? [0.75, 0.80] : [0.55, 0.60];
  const i = Math.floor(h * 6.0), f = h * 6.0 - i, p = v * (1.0 - s), q = v * (1.0 - s * f), t = v * (1.0 - s * (1.0 - f));
  const rgb = [[v, t, p], [q, v, p], [p, v, t], [p, q, v], [t, p, v], [v, p, q]][i % 6];   // colorsys.hsv_to_rgb
  return rgbHex(rgb.map(c => roundHalfEven(c * 255)));
}

/** A run's value in a colour column ("hp:NAME", "last:TAG", "min:TAG", "max:TAG"): a finite number, a string, a
 * boolean, or null. */
function colourValue(run, column) {
  const colon = column.indexOf(":"), kind = column.slice(0, colon), name = column.slice(colon + 1);
  const own = (o, k) => !!o && Object.prototype.hasOwnProperty.call(o, k);
  let v = null;
  if (kind === "hp") v = own(run.hparams, name) ? run.hparams[name] : null;
  else if (kind in STAT_FIELD && own(run.stats, name)) v = run.stats[name][STAT_FIELD[kind]];
  if (typeof v === "number") return isFinite(v) ? v : null;
  return typeof v === "string" || typeof v === "boolean" ? v : null;
}

/** Sorted order of categorical values: numbers by value, then booleans, then strings (by code points). */
function categoryOrder(a, b) {
  const rank = v => typeof v === "number" ? 0 : typeof v === "boolean" ? 1 : 2, ra = rank(a), rb = rank(b);
  if (ra !== rb) return ra - rb;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The colouring for STATE.colourBy, computed once per choice (``invalidateColours`` drops it). */
function colouring() {
  const key = STATE.colourBy || "run";
  if (COLOURING && COLOURING.key === key) return COLOURING;
  const runs = DATA.runs;
  if (key === "run") return (COLOURING = {key, kind: "run", colours: null});
  const values = runs.map(r => colourValue(r, key)), present = values.filter(v => v !== null);
  const missing = values.length - present.length;
  if (present.length && present.every(v => typeof v === "number")) {
    let lo = Infinity, hi = -Infinity;
    for (const v of present) { if (v < lo) lo = v; if (v > hi) hi = v; }
    const log = lo > 0 && Math.log10(hi) - Math.log10(lo) > 2;
    const at = log ? v => (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) : v => (v - lo) / (hi - lo);
    const position = v => hi === lo ? 0.5 : at(v);
    return (COLOURING = {key, kind: "numeric", lo, hi, log, missing, position,
                         colours: values.map(v => v === null ? NO_VALUE_COLOUR : viridis(position(v)))});
  }
  const texts = new Map();   // a value's text -> the first value of that text (the sort key)
  for (const v of present) if (!texts.has(String(v))) texts.set(String(v), v);
  const order = Array.from(texts.values()).sort(categoryOrder).map(String);
  const colourOfText = new Map(order.map((t, k) => [t, categoryColour(k)]));
  return (COLOURING = {key, kind: "category", missing, categories: order.map(t => [t, colourOfText.get(t)]),
                       colours: values.map(v => v === null ? NO_VALUE_COLOUR : colourOfText.get(String(v)))});
}

/** Run ``i``'s colour now (report.js runColor). */
function colourOf(i) {
  const c = colouring();
  return c.colours ? c.colours[i] : DATA.runs[i].color;
}

function invalidateColours() { COLOURING = null; }

/** What the page shows of the colouring, for tests and the legend: {column, kind, lo, hi, log, categories}. */
TFE.colouring = () => {
  const c = colouring();
  return {column: c.key, kind: c.kind, lo: c.lo, hi: c.hi, log: c.log, missing: c.missing || 0,
          categories: c.categories || null, noValue: NO_VALUE_COLOUR, stops: VIRIDIS};
};
TFE.runColour = i => colourOf(i);

/** The legend of the colouring: a gradient with its ends' values, or a swatch per value (and one for no value). */
function fillColourLegend(node) {
  const c = colouring();
  node.replaceChildren();
  node.classList.toggle("hidden", c.kind === "run");
  node.dataset.kind = c.kind;
  if (c.kind === "run") return;
  const none = c.missing ? el("span", {class: "legend-item", dataset: {missing: "1", colour: NO_VALUE_COLOUR}},
    el("i", {class: "swatch", style: {background: NO_VALUE_COLOUR}}), "no value (" + c.missing + ")") : null;
  if (c.kind === "numeric") {
    Object.assign(node.dataset, {min: String(c.lo), max: String(c.hi), scale: c.log ? "log" : "linear"});
    const bar = el("div", {class: "colour-bar", style: {background: "linear-gradient(to right, " +
      VIRIDIS.map((s, k) => s + " " + (100 * k / (VIRIDIS.length - 1)) + "%").join(", ") + ")"}});
    node.append(bar, el("div", {class: "colour-ticks"},
      el("span", {class: "tick-min", title: String(c.lo)}, fmtNumber(c.lo)),
      c.log ? el("span", {class: "tick-scale"}, "log") : null,
      el("span", {class: "tick-max", title: String(c.hi)}, fmtNumber(c.hi))));
    if (none) node.append(none);
    return;
  }
  delete node.dataset.min; delete node.dataset.max; delete node.dataset.scale;
  node.append(...c.categories.map(([text, colour]) => el("span", {class: "legend-item", title: text, dataset: {category: text, colour}},
    el("i", {class: "swatch", style: {background: colour}}), text)));
  if (none) node.append(none);
}

/** The static pieces painted with a run's colour when they were built: the cards' title swatches and the SVG
 * elements marked ``data-paint`` ("fill", "stroke" or "both") inside a card of one run (charts.js). */
function repaintRunColours() {
  for (const card of document.querySelectorAll(".card[data-run]")) {
    const colour = runColor(+card.dataset.run);
    for (const sw of card.querySelectorAll(".card-title .swatch")) sw.style.background = colour;
    for (const node of card.querySelectorAll("[data-paint]")) {
      const paint = node.getAttribute("data-paint");
      if (paint !== "stroke") node.setAttribute("fill", colour);
      if (paint !== "fill") node.setAttribute("stroke", colour);
    }
  }
}

/** Choose the colouring ``column`` ("run" or a sort column) and recolour everything. */
function setColourBy(column) {
  STATE.colourBy = column;
  invalidateColours();
  if (TFE.colourLegend) fillColourLegend(TFE.colourLegend);
  if (TFE.runList) TFE.runList.refresh();
  changed("colour");
  repaintRunColours();
}
TFE.setColourBy = setColourBy;

/** After the served page's poll changed the runs' stats: the colouring again when it is by a stat and any colour
 * moved (the charts are redrawn only then). */
function coloursAfterStats() {
  const before = colouring();
  if (before.kind === "run" || (STATE.colourBy || "").startsWith("hp:")) return;
  invalidateColours();
  const after = colouring();
  if (after.colours.some((c, i) => c !== before.colours[i]) || after.lo !== before.lo || after.hi !== before.hi) {
    if (TFE.colourLegend) fillColourLegend(TFE.colourLegend);
    changed("colour");
    repaintRunColours();
  }
}

/** The "Colour by" control and its legend (placed in the run list's box by runlist.js). */
function colourControl() {
  if (typeof STATE.colourBy !== "string") STATE.colourBy = "run";
  const select = el("select", {id: "colour-by", title: "Colour the runs by a hyperparameter or a scalar's value",
                               style: {flex: "1", minWidth: "0"}, onchange: e => setColourBy(e.target.value)});
  /** The options: the run list's sort columns now (the served page's poll may bring new scalar tags). */
  function fillOptions() {
    const {hparams, scalars} = runSortColumns(), option = ([v, label]) => el("option", {value: v}, label);
    select.replaceChildren(el("option", {value: "run"}, "run (own colour)"),
      hparams.length ? el("optgroup", {label: "hyperparameters"}, hparams.map(option)) : null,
      scalars.length ? el("optgroup", {label: "scalars"}, scalars.map(option)) : null);
    select.value = STATE.colourBy;
    if (select.value !== STATE.colourBy) { select.value = "run"; STATE.colourBy = "run"; }
  }
  fillOptions();
  TFE.refreshColourOptions = fillOptions;
  const legend = el("div", {id: "colour-legend", class: "colour-legend"});
  TFE.colourLegend = legend;
  invalidateColours();
  fillColourLegend(legend);
  return el("div", {class: "colour-control"},
    el("div", {class: "row", style: {marginTop: "4px"}}, el("span", {class: "muted"}, "Colour by"), select), legend);
}
