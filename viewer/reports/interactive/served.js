// The served dashboard (viewer/dashboard/page.py): the report's page whose scalar series arrive on demand from the
// JSON API instead of being embedded. Runs in the same closure, after the report's scripts, only in the served page.
// A chart's series are asked for when the chart scrolls into view (GET api/v1/scalars_of_tag: one request per tag,
// every run's series reduced on the server to the chart's pixel width: each pixel column's first, last, least and greatest point), then drawn by the report's own
// makePlot. Every reload interval the page asks GET api/v1/runs what changed and asks again for the series that
// did; the header says when the logdir last changed and whether new runs or tags wait for a reload.

const API = DATA.api;
const SERVED = TFE.served = {requests: 0, polls: 0, pass: API.pass, loaded: new Set(), lastChange: null,
                             newSeries: 0, unknown: new Set()};
let observer = null;
const waiting = new Set();   // charts with pending series, observed until they scroll into view

/** The series of a run's x-axis tag (the x selector on a tag), by run index; empty on the step and time axes. */
function xTagSeries(chart) {
  if (X_BUILTIN.includes(STATE.x)) return [];
  return chart.shown.map(s => XSRC.get(s.run + "\n" + STATE.x)).filter(x => x && x.fetch);
}

/** What makePlot asks: does ``chart`` wait for data, its own series' or those of the x axis' tag? */
TFE.pendingFor = function (chart) {
  return chart.shown.some(s => s.pending) || xTagSeries(chart).some(s => s.pending);
};

/** Called by makePlot for a chart whose series have not arrived: observe it; ask once it is in view. A chart
 * of more runs than ``API.density_above`` is drawn as a density instead (loadDensity). */
TFE.whenPending = function (chart) {
  const dense = chart.shown.length > API.density_above;
  // The page keeps its layout as data arrives, so that the charts found in view at load stay in view: the plot's
  // height and a line for its note are kept while the chart waits.
  chart.plot.style.minHeight = DENSITY_HEIGHT + "px";
  chart.note.style.minHeight = chart.note.style.lineHeight = NOTE_LINE;
  if (chart.density) chart.density.remove();
  chart.density = null;
  chart.note.textContent = dense ? "" : "loading\u2026";
  if (dense && chart.densityShown === densityKey(chart)) { chart.plot.append(chart.densityNode); chart.density = chart.densityNode; return; }
  if (!window.IntersectionObserver) { load(chart); return; }
  if (!observer) observer = new IntersectionObserver(entries => {
    entries.sort((a, b) => a.boundingClientRect.top - b.boundingClientRect.top);   // the top of the page first
    const inView = [], nearby = [];   // nearby: within the margin, asked once those in view have their data
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      const chart = entry.target.__chart, box = entry.boundingClientRect;
      observer.unobserve(entry.target);
      waiting.delete(chart);
      (box.bottom > 0 && box.top < window.innerHeight ? inView : nearby).push(chart);
    }
    Promise.allSettled(inView.map(load)).then(() => nearby.forEach(load));
  }, {rootMargin: "200px"});
  if (waiting.has(chart)) return;
  waiting.add(chart);
  chart.card.__chart = chart;
  observer.observe(chart.card);
};

function apiUrl(route, params) {
  const url = new URL(API.base + route, window.location.href);
  for (const [k, v] of Object.entries(params || {})) {
    if (Array.isArray(v)) for (const item of v) url.searchParams.append(k, item);   // a repeated parameter
    else url.searchParams.set(k, v);
  }
  return url;
}

/** The answer of GET ``route`` with ``params`` (an Error unless it is a 200). */
async function ask(route, params) {
  SERVED.requests++;
  const answer = await fetch(apiUrl(route, params), {credentials: "same-origin", cache: "no-store"});
  if (!answer.ok) throw new Error(route + ": HTTP " + answer.status);
  return answer;
}

async function getJson(route, params) {
  return (await ask(route, params)).json();
}

/** The series of a binary answer (GET ...&encoding=binary, responses.py binary_series_response): the head's runs,
 * each with typed-array views of its columns in the answer's bytes (float64 steps and wall times, float32 values;
 * no number or base64 character to read), runs at the same steps sharing one array of them. */
async function getSeries(route, params) {
  const bytes = await (await ask(route, Object.assign({}, params, {encoding: "binary"}))).arrayBuffer(), size = new DataView(bytes).getUint32(0, true);
  const head = JSON.parse(new TextDecoder().decode(new Uint8Array(bytes, 4, size)));
  const n = head.series.reduce((total, s) => total + s.points, 0), at = Math.ceil((4 + size) / 8) * 8;
  const m = head.shared_steps ? head.series[0].points : n;   // shared: one series' steps, every one's
  const step = new Float64Array(bytes, at, m), wall = new Float64Array(bytes, at + 8 * m, n);
  const value = new Float32Array(bytes, at + 8 * m + 8 * n, n);
  let from = 0;
  return head.series.map(s => {
    const to = from + s.points, got = {run: s.run, step: head.shared_steps ? step : step.subarray(from, to),
                                       wall: wall.subarray(from, to), value: value.subarray(from, to)};
    from = to;
    return got;
  });
}

/** An array the API sent as base64 of its little-endian values, as a ``Type`` (Float32Array, Int32Array...). */
function typedArray(text, Type) {
  const bytes = decodeBase64(text);
  return new Type(bytes.buffer, 0, bytes.length / Type.BYTES_PER_ELEMENT);
}

/** JSON's null, "Infinity" and "-Infinity" (app.py json_number) as numbers. */
function number(v) {
  return v === null ? NaN : v === "Infinity" ? Infinity : v === "-Infinity" ? -Infinity : v;
}

const DENSITY_AT_ONCE = 2;   // densities asked at once: each is a second or more of the server's CPU at 10,000 runs,
const densityQueue = [];     // and a third at once only slows the first two (the charts in view come first)
let densityAsking = 0;

/** Ask for what ``chart`` draws: its series, or its density (queued); a promise of the series' arrival. */
function load(chart) {
  if (chart.shown.length > API.density_above) { densityQueue.push(chart); nextDensity(); return Promise.resolve(); }
  return loadChart(chart);
}

function nextDensity() {
  while (densityAsking < DENSITY_AT_ONCE && densityQueue.length) {
    densityAsking++;
    loadDensity(densityQueue.shift()).finally(() => { densityAsking--; nextDensity(); });
  }
}

/** Ask for the series of ``chart`` that are shown and pending (one request per tag), then draw it. */
async function loadChart(chart) {
  const wanted = chart.shown.concat(xTagSeries(chart)).filter(s => s.pending && !s.asking);
  const width = Math.max(240, chart.plot.clientWidth || 400);
  const byTag = new Map();
  for (const s of wanted) {
    if (!byTag.has(s.tag)) byTag.set(s.tag, new Map());
    byTag.get(s.tag).set(s.fetch.run, s);
    s.asking = true;
  }
  try {
    await Promise.all(Array.from(byTag, ([tag, runs]) => loadTag(tag, runs, width)));
  } catch (err) {
    chart.note.textContent = "could not load: " + err.message;
    return;
  } finally {
    for (const s of wanted) s.asking = false;
  }
  chart.note.textContent = "";
  for (const i of chart.series) { SERIES[i].xs = {}; SERIES[i].weight = null; }   // x and smoothing on the new data
  makePlot(chart);
  requestAnimationFrame(firstScreen);
}

const NAMED_RUNS_MAX_CHARS = 8000;   // run= names in one URL at most (the server's request line stays small)

/** One request for the series of ``tag`` (GET api/v1/scalars_of_tag), filling those of ``runs`` (name -> series):
 * only theirs, named (``run=``), unless that is every run of the tag or too long a URL. */
async function loadTag(tag, runs, width) {
  const names = Array.from(runs.keys()), params = {tag, points: width};
  const ofTag = SERIES.filter(s => s.tag === tag && s.fetch).length;
  if (names.length < ofTag && names.reduce((n, name) => n + name.length + 5, 0) <= NAMED_RUNS_MAX_CHARS) params.run = names;
  for (const got of await getSeries("scalars_of_tag", params)) {
    const s = runs.get(got.run);
    if (!s) continue;
    Object.assign(s, {step: got.step, wall: got.wall, value: got.value});
    s.smoothed = null; s.weight = null; s.xs = {};
    s.pending = false;
    SERVED.loaded.add(s);
  }
  for (const s of runs.values()) s.pending = false;   // a run without the tag any more: drawn as it was
}

/** Zoomed in on the step axis: ask for the zoomed steps in full (``start``/``end``, reduced to the chart's width
 * only within them) and merge them into the series, so the range is drawn at full resolution. */
TFE.onZoom = function (chart, range) {
  if (STATE.x !== "step") return;
  clearTimeout(chart.zoomTimer);
  chart.zoomTimer = setTimeout(() => zoomIn(chart, range), 150);   // once the drag or the wheel settles
};

async function zoomIn(chart, range) {
  const start = Math.floor(range[0]), end = Math.ceil(range[1]), width = Math.max(240, chart.plot.clientWidth || 400);
  const shown = chart.shown.filter(s => s.fetch && !s.pending);
  const tags = Array.from(new Set(shown.map(s => s.tag)));
  try {
    for (const tag of tags) {
      const byRun = new Map(shown.filter(x => x.tag === tag).map(x => [x.fetch.run, x]));
      for (const got of await getSeries("scalars_of_tag", {tag, points: width, start, end})) {
        const s = byRun.get(got.run);
        if (s) merge(s, got);
      }
    }
  } catch (err) {
    chart.note.textContent = "could not load the zoomed range: " + err.message;
    return;
  }
  SERVED.zooms = (SERVED.zooms || 0) + 1;
  refreshData(chart);
}

/** ``s`` with the points of ``got`` added (by step; the point got wins where both have a step). */
function merge(s, got) {
  const byStep = new Map();
  for (let i = 0; i < s.step.length; i++) byStep.set(s.step[i], [s.wall[i], s.value[i]]);
  got.step.forEach((step, i) => byStep.set(step, [got.wall[i], got.value[i]]));
  const steps = Array.from(byStep.keys()).sort((a, b) => a - b);
  s.step = Float64Array.from(steps);
  s.wall = Float64Array.from(steps, k => byStep.get(k)[0]);
  s.value = Float64Array.from(steps, k => byStep.get(k)[1]);
  s.smoothed = null; s.weight = null; s.xs = {};
}

// --- many runs: a density (DenseLines), computed on the server (GET api/v1/density) ----------------------------

const DENSITY_HEIGHT = 260;
const NOTE_LINE = "15px";   // a chart's note: one line of its 11px text

/** What a density was drawn for: the chart's shown runs and the log-y switch. */
function densityKey(chart) {
  return chart.shown.length + "|" + STATE.logy + "|" + STATE.runFilter + "|" + STATE.hidden.length + "|" + TFE.choiceVersion();
}

/** Draw ``chart`` as a density of its shown runs: each pixel's shade is how many runs pass through it (log scale);
 * hovering a pixel names the run with the most weight there (the server's ``owner`` raster). One tag per chart. */
async function loadDensity(chart) {
  const width = Math.max(240, chart.plot.clientWidth || 400), key = densityKey(chart);
  const params = {tag: chart.shown[0].tag, width, height: DENSITY_HEIGHT};
  if (STATE.runFilter && compileRegex(STATE.runFilter).ok) params.runs = STATE.runFilter;
  if (TFE.choiceQuery()) params.where = TFE.choiceQuery();
  if (STATE.logy) params.logy = 1;
  chart.note.textContent = "loading the density of " + chart.shown.length + " runs\u2026";
  chart.onTopDraws = chart.onTopDraws || 0;
  let got;
  try {
    got = await getJson("density", params);
  } catch (err) {
    chart.note.textContent = "could not load: " + err.message;
    return;
  }
  const counts = typedArray(got.density, Float32Array), owner = typedArray(got.owner, Int32Array);
  const canvas = el("canvas", {class: "density", width: got.width, height: got.height});
  const onTop = el("canvas", {class: "density-on-top", width: got.width, height: got.height});
  const image = canvas.getContext("2d").createImageData(got.width, got.height);
  let most = 0;
  for (const c of counts) if (c > most) most = c;
  const scale = most > 0 ? 1 / Math.log1p(most) : 0;
  for (let i = 0; i < counts.length; i++) {
    const a = counts[i] > 0 ? 0.15 + 0.85 * Math.log1p(counts[i]) * scale : 0;
    image.data[4 * i] = 31; image.data[4 * i + 1] = 119; image.data[4 * i + 2] = 180; image.data[4 * i + 3] = Math.round(255 * a);
  }
  canvas.getContext("2d").putImageData(image, 0, 0);
  const axis = el("div", {class: "density-axes"},
    "step " + fmtNumber(got.x_range[0], 6) + " \u2013 " + fmtNumber(got.x_range[1], 6) + " \u00b7 value " +
    fmtNumber(got.y_range[0]) + " \u2013 " + fmtNumber(got.y_range[1]) + (got.logy ? " (log)" : "") + " \u00b7 " +
    got.runs.length + " runs as a density: the darker, the more runs");
  const node = el("div", {class: "density-view", dataset: {runs: got.runs.length}}, canvas, onTop, axis);
  canvas.addEventListener("click", e => {   // pins (or unpins) the run there: drawn on top as a line
    const k = ownerAt(e);
    if (k < 0) return;
    const name = got.runs[k];
    if (chart.pinned.has(name)) chart.pinned.delete(name); else chart.pinned.add(name);
    drawOnTop(chart);
  });
  const ownerAt = e => {
    const box = canvas.getBoundingClientRect();
    const px = Math.floor((e.clientX - box.left) * got.width / box.width), py = Math.floor((e.clientY - box.top) * got.height / box.height);
    return px >= 0 && py >= 0 && px < got.width && py < got.height ? owner[py * got.width + px] : -1;
  };
  canvas.addEventListener("mousemove", e => {
    const box = canvas.getBoundingClientRect();
    const px = Math.floor((e.clientX - box.left) * got.width / box.width), py = Math.floor((e.clientY - box.top) * got.height / box.height);
    const k = px >= 0 && py >= 0 && px < got.width && py < got.height ? owner[py * got.width + px] : -1;
    if (k < 0) { chart.tooltip.classList.add("hidden"); return; }
    if (chart.hovered !== got.runs[k]) { chart.hovered = got.runs[k]; drawOnTop(chart); }
    chart.tooltip.textContent = "";
    chart.tooltip.append(el("div", {class: "density-run"}, got.runs[k]),
                         el("div", null, fmtNumber(counts[py * got.width + px], 3) + " runs through this pixel"));
    chart.tooltip.classList.remove("hidden");
    chart.tooltip.style.left = Math.min(px + 12, got.width - 160) + "px";
    chart.tooltip.style.top = (py + 30) + "px";
  });
  canvas.addEventListener("mouseleave", () => { chart.tooltip.classList.add("hidden"); chart.hovered = null; drawOnTop(chart); });
  chart.note.textContent = "";
  if (chart.density) chart.density.remove();
  chart.plot.append(node);
  chart.density = chart.densityNode = node;
  chart.densityShown = key;
  chart.densityData = got;
  chart.onTopCanvas = onTop;
  chart.pinned = chart.pinned || new Set();
  drawOnTop(chart);
  requestAnimationFrame(firstScreen);
}

// --- on top of a density: the hovered run, the pinned ones, the best ones and the groups' bands, as lines -------

const BEST_ON_TOP = 5;   // with the run list sorted by a value of the chart's tag: its first runs, drawn on top
const ON_TOP_CACHE = new Map();   // "run\ntag\nwidth" -> its series (asked once: GET api/v1/scalars)

/** The runs drawn on top of ``chart``'s density: the hovered one, the pinned ones (a click on the density pins
 * the run there) and, when the run list is sorted by the last, min or max of this chart's tag, its first
 * ``BEST_ON_TOP`` runs. */
function runsOnTop(chart) {
  const tag = chart.shown[0].tag, names = new Set(chart.pinned);
  if (chart.hovered) names.add(chart.hovered);
  const sorted = /^(last|min|max):/.exec(STATE.runSort || "");
  if (sorted && STATE.runSort.slice(sorted[0].length) === tag && TFE.runList) {
    const shown = new Set(chart.shown.map(s => s.fetch.run));
    for (const name of TFE.runList.order().filter(n => shown.has(n)).slice(0, BEST_ON_TOP)) names.add(name);
  }
  return Array.from(names);
}

/** The run list's order changed (its sort): redraw what is on top of the densities. */
TFE.redrawOnTop = () => { for (const chart of TFE.charts) if (chart.densityData) drawOnTop(chart); };

async function seriesOnTop(run, tag, width) {
  const key = run + "\n" + tag + "\n" + width;
  if (!ON_TOP_CACHE.has(key)) {
    ON_TOP_CACHE.set(key, getSeries("scalars", {run, tag, points: width}).then(got => got[0]));
  }
  return ON_TOP_CACHE.get(key);
}

/** Draw the lines on top of ``chart``'s density (``runsOnTop`` in their run colours, each group's mean with
 * --aggregate in the group's colour), in the density's own coordinates (its x and y ranges, log y alike). */
async function drawOnTop(chart) {
  const got = chart.densityData, canvas = chart.onTopCanvas;
  if (!got || !canvas) return;
  const draw = ++chart.onTopDraws, tag = chart.shown[0].tag, names = runsOnTop(chart);
  let lines;
  try {
    lines = await Promise.all(names.map(async name => ({name, color: runColor(DATA.runs.findIndex(r => r.name === name)),
                                                        ...(await seriesOnTop(name, tag, got.width))})));
  } catch (err) {
    chart.note.textContent = "could not load a run to draw on top: " + err.message;
    return;
  }
  if (draw !== chart.onTopDraws) return;   // a newer draw started meanwhile
  for (const i of chart.bands || []) {
    const b = BANDS[i];
    if (b.axis === "step" && (!b.runs.length || b.runs.some(runVisible))) lines.push({name: b.group, color: b.color, step: b.step, value: b.mean, band: true});
  }
  const [x0, x1] = got.x_range, [y0, y1] = got.logy ? got.y_range.map(Math.log10) : got.y_range;
  const px = x => (x - x0) / (x1 - x0) * got.width;
  const py = v => (y1 - (got.logy ? Math.log10(v) : v)) / (y1 - y0) * got.height;
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  for (const line of lines) {
    ctx.beginPath();
    ctx.strokeStyle = line.color;
    ctx.lineWidth = line.name === chart.hovered ? 2.5 : 1.5;
    ctx.setLineDash(line.band ? [6, 3] : []);
    let drawing = false;
    for (let i = 0; i < line.step.length; i++) {
      const y = py(line.value[i]);
      if (!isFinite(y)) { drawing = false; continue; }
      if (drawing) ctx.lineTo(px(line.step[i]), y); else ctx.moveTo(px(line.step[i]), y);
      drawing = true;
    }
    ctx.stroke();
  }
  chart.linesOnTop = lines.map(l => l.name);
}

/** The first screen, for benchmarks/dashboard.py: once every chart in the viewport at load has drawn its first data
 * (lines, or the density of its runs), ``TFE.firstScreenAt = performance.now()`` (ms since navigation start; once). */
let firstScreenCharts = null;   // the charts in the viewport at load (taken when the charts are built)
function firstScreen() {
  if (TFE.firstScreenAt !== undefined) return;
  if (!firstScreenCharts) firstScreenCharts = TFE.charts.filter(c => {
    const box = c.card ? c.card.getBoundingClientRect() : null;
    return box && box.width > 0 && box.bottom > 0 && box.top < window.innerHeight;
  });
  if (firstScreenCharts.every(c => (c.u && c.draws > 0) || c.density)) TFE.firstScreenAt = performance.now();
}

let CHART_OF = null;   // series -> the chart that draws it (the charts partition the series)
function chartOf(s) {
  if (!CHART_OF) CHART_OF = new Map(TFE.charts.flatMap(chart => chart.series.map(i => [SERIES[i], chart])));
  return CHART_OF.get(s);
}

/** Every interval: what changed since the page asked (GET api/v1/runs?after=: the series the server's reload
 * passes changed since the last answer's pass, with their point count and last step); the loaded series that
 * changed are asked for again, the others are marked pending (asked for when drawn). */
async function poll() {
  let listed;
  try {
    listed = await getJson("runs", {after: SERVED.pass});
  } catch (err) {
    status("the server did not answer (" + err.message + ")");
    return;
  }
  SERVED.pass = listed.pass;
  SERVED.polls++;
  if (TFE.updateRunStats) TFE.updateRunStats(listed);
  const bySeries = new Map(SERIES.map(s => [s.fetch.run + "\n" + s.fetch.tag, s]));
  const stale = new Set();
  let newest = SERVED.lastChange;
  for (const run of listed.runs) {
    for (const [tag, info] of Object.entries(run.scalars)) {
      const wall = number(info.last_wall_time);
      if (isFinite(wall) && (newest === null || wall > newest.wall)) newest = {wall, run: run.run};
      const key = run.run + "\n" + tag, s = bySeries.get(key);
      if (!s) { SERVED.unknown.add(key); continue; }   // new since the page loaded: shown after a reload
      if (info.points === s.fetch.points && info.last_step === s.fetch.last_step) continue;
      s.fetch.points = info.points; s.fetch.last_step = info.last_step;
      s.pending = true;
      stale.add(chartOf(s));
    }
  }
  SERVED.lastChange = newest;
  SERVED.newSeries = SERVED.unknown.size;
  for (const chart of stale) {
    if (chart.u) loadChart(chart);   // drawn: redraw with the new points
    else if (chart.densityShown) loadDensity(chart);
  }
  status();
}

function status(problem) {
  const node = document.getElementById("served-status") || (() => {
    const header = document.querySelector("header");
    if (!header) return null;
    const p = el("p", {id: "served-status"});
    header.append(p);
    if (API.tensorboard) {   // tfevents serve: TensorBoard's own UI, forwarded by this server
      header.append(el("p", {id: "tensorboard-link"}, el("a", {href: API.tensorboard}, "TensorBoard's UI")));
    }
    return p;
  })();
  if (!node) return;
  const parts = ["live: asks the server every " + API.interval + " s"];
  if (SERVED.lastChange) parts.push("last change " + fmtWall(SERVED.lastChange.wall) + " (" + SERVED.lastChange.run + ")");
  if (SERVED.newSeries) parts.push(SERVED.newSeries + " new series: reload the page to see them");
  if (problem) parts.push(problem);
  node.textContent = parts.join(" \u00b7 ");
}

// --- the run query box: the run list's filter in the run query language, answered by the server ------------------

const QUERY_DELAY = 400;   // ms after the last key before the query is asked (Enter asks at once)

/** ``GET api/v1/runs?where=Q``: the names of the runs the query chooses, or the server's error (position, caret). */
async function askQuery(where) {
  SERVED.requests++;
  const answer = await fetch(apiUrl("runs", {where}), {credentials: "same-origin", cache: "no-store"});
  const got = await answer.json().catch(() => ({}));
  if (!answer.ok) return {error: got.error || "runs: HTTP " + answer.status};
  return {names: (got.runs || []).map(r => r.run)};
}

/** A box under the run filter: a query such as ``lr < 0.01 and "val/acc".max > 0.9 and "bad" not in labels``
 * chooses the runs listed and drawn (TFE.chooseRuns("where", ...)); a query that does not parse or names no
 * column says so, with the server's caret line, and chooses nothing until mended; empty: every run. */
function queryBox() {
  const filter = document.getElementById("run-filter");
  if (!filter || document.getElementById("run-where")) return;
  const error = el("pre", {id: "run-where-error", class: "query-error", hidden: true,
    style: {color: "#b71c1c", fontSize: "11px", whiteSpace: "pre-wrap", margin: "2px 0", overflowX: "auto"}});
  let timer = null, asked = 0;
  const box = el("input", {type: "search", id: "run-where", spellcheck: false,
    placeholder: "Query runs: lr < 0.01 and loss.min < 0.5", title: "the run query language (README: Run queries)",
    value: STATE.runWhere || "", style: {marginTop: "4px"}});
  async function apply() {
    const where = box.value.trim(), mine = ++asked;
    STATE.runWhere = where;
    saveState();
    if (!where) { error.hidden = true; box.classList.remove("invalid"); TFE.chooseRuns("where", null); return; }
    let got;
    try {
      got = await askQuery(where);
    } catch (err) {
      got = {error: "could not ask the server: " + err.message};
    }
    if (mine !== asked) return;   // a later query was asked meanwhile
    box.classList.toggle("invalid", !!got.error);
    error.hidden = !got.error;
    error.textContent = got.error || "";
    if (!got.error) TFE.chooseRuns("where", got.names, where);
  }
  box.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(apply, QUERY_DELAY); });
  box.addEventListener("keydown", e => { if (e.key === "Enter") { clearTimeout(timer); apply(); } });
  filter.after(box, error);
  if (box.value) apply();
  TFE.queryBox = {apply, box};
}

/** The page was built with the data as of its load (``API.newest``: the newest point then): the first poll waits an
 * interval, so the first screen's requests have the server to themselves. */
function startPolling() {
  if (!TFE.charts.length && !TFE.ready) { setTimeout(startPolling, 100); return; }
  queryBox();
  if (API.newest) SERVED.lastChange = API.newest;
  status();
  firstScreen();   // (after the query box and the status line: the charts in view once they are laid out)
  if (API.interval > 0) setInterval(poll, API.interval * 1000);
  else poll();
}
startPolling();
