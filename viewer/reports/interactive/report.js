// tfevents interactive report: the page's core. Reads the embedded data (JSON + one base64 buffer of typed
// arrays), builds the sidebar (tag filter, smoothing, x axis, log y, outliers, runs) and the sections, and
// keeps the controls' state across reloads (sessionStorage). Every user string is inserted as text
// (textContent), never as HTML; the only HTML inserted is text summaries already cleaned by safe_html.py.
// runlist.js (the sidebar's run list), smoothing.js, scalars.js, charts.js and panels.js follow this file in the
// same script.

const ARRAYS = {f64: Float64Array, f32: Float32Array, i32: Int32Array, u8: Uint8Array};
const TFE = window.__tfe = {sections: [], charts: [], ready: false};
const DATA = JSON.parse(document.getElementById("tfe-data").textContent);
TFE.data = DATA;
let BUFFER = null;

// --- data -------------------------------------------------------------------------------------------

/** The bytes of base64 ``text``: the browser's own decoder where it has one (``Uint8Array.fromBase64``, several
 * times sooner), else this loop. */
function decodeBase64(text) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
  const table = new Uint8Array(128);
  const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (let i = 0; i < 64; i++) table[abc.charCodeAt(i)] = i;
  let n = text.length;
  while (n > 0 && (text.charCodeAt(n - 1) === 61 || text.charCodeAt(n - 1) <= 32)) n--;   // '=' padding
  const out = new Uint8Array((n * 3) >> 2);
  let j = 0, i = 0;
  for (; i + 4 <= n; i += 4) {
    const v = (table[text.charCodeAt(i)] << 18) | (table[text.charCodeAt(i + 1)] << 12) |
              (table[text.charCodeAt(i + 2)] << 6) | table[text.charCodeAt(i + 3)];
    out[j++] = v >> 16; out[j++] = (v >> 8) & 255; out[j++] = v & 255;
  }
  const rest = n - i;
  if (rest >= 2) {
    const v = (table[text.charCodeAt(i)] << 18) | (table[text.charCodeAt(i + 1)] << 12) |
              (rest > 2 ? table[text.charCodeAt(i + 2)] << 6 : 0);
    out[j++] = v >> 16;
    if (rest > 2) out[j++] = (v >> 8) & 255;
  }
  return out;
}

/** The embedded buffer: base64, inflated with the browser's DecompressionStream when compressed. */
async function loadBuffer() {
  const node = document.getElementById("tfe-blob"), bytes = decodeBase64(node.textContent.trim());
  if (node.dataset.encoding !== "deflate") return bytes;
  if (!window.DecompressionStream)
    throw new Error("this browser cannot inflate the report's data (no DecompressionStream): open the file in a current Chrome, Edge, Firefox or Safari");
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A typed array view of one embedded array, ``[dtype, byte offset, length]`` (after ``loadBuffer``). */
function arr(ref) {
  const [type, offset, length] = ref;
  return new ARRAYS[type](BUFFER.buffer, offset, length);
}
TFE.arr = arr;

// --- small DOM helpers ---------------------------------------------------------------------------------

/** An element; string children become text nodes; ``on*`` attributes become listeners. */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "style" && typeof v === "object") Object.assign(node.style, v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k in node && typeof v !== "string") node[k] = v;
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function fmtNumber(v, digits) {
  if (v === null || v === undefined) return "";
  if (typeof v !== "number") return String(v);
  if (!isFinite(v)) return String(v);
  if (v !== 0 && (Math.abs(v) >= 1e6 || Math.abs(v) < 1e-4)) return v.toExponential((digits || 4) - 1);
  return String(+v.toPrecision(digits || 4));
}

function fmtDuration(seconds) {
  const s = Math.abs(seconds), sign = seconds < 0 ? "-" : "";
  if (s < 60) return sign + +s.toPrecision(3) + "s";
  if (s < 3600) return sign + Math.floor(s / 60) + "m " + Math.round(s % 60) + "s";
  if (s < 86400) return sign + Math.floor(s / 3600) + "h " + Math.round((s % 3600) / 60) + "m";
  return sign + Math.floor(s / 86400) + "d " + Math.round((s % 86400) / 3600) + "h";
}

function fmtWall(seconds) {
  const d = new Date(seconds * 1000);
  return isNaN(d) ? "" : d.toLocaleString();
}

function runName(i) { return DATA.runs[i].name; }
/** Run ``i``'s colour now: its own (viewer/colors.py) or by the "Colour by" choice (colour.js colourOf), the one
 * place every chart, swatch and line asks. */
function runColor(i) { return colourOf(i); }
function swatch(run) { return el("i", {class: "swatch", style: {background: runColor(run)}}); }

/** "tag (run)" heading as text nodes. */
function cardTitle(tag, run) {
  return el("div", {class: "card-title", title: tag + " (" + runName(run) + ")"},
            swatch(run), el("span", {class: "tag"}, tag), " ", el("small", null, "(" + runName(run) + ")"));
}

// --- state --------------------------------------------------------------------------------------------

const STORE_KEY = "tfevents-report:" + DATA.title;
const STATE = Object.assign({smoothing: DATA.options.smoothing, x: DATA.options.x, logy: DATA.options.logy,
                             view: DATA.options.view || "runs", center: DATA.options.center || "mean",
                             band: DATA.options.band || "std",
                             smoothKind: (DATA.options.smooth || {}).kind || "ema",
                             smoothParams: Object.assign({twema: 0.6, window: 10, "window-centred": 10, gaussian: null},
                                                         DATA.options.smooth ? {[DATA.options.smooth.kind]: DATA.options.smooth.param} : {}),
                             outliers: false, tagFilter: "", runFilter: "", hidden: [], hpStat: {}}, loadState());
TFE.state = STATE;
if (!("logx" in STATE)) STATE.logx = !!DATA.options.logx;

function loadState() {
  try { return JSON.parse(sessionStorage.getItem(STORE_KEY) || "{}") || {}; } catch (e) { return {}; }
}
function saveState() {
  try { sessionStorage.setItem(STORE_KEY, JSON.stringify(STATE)); } catch (e) { /* storage disabled */ }
}

const REGEX_CACHE = new Map();   // the filters' texts compiled once (runVisible asks per series)
function compileRegex(text) {
  if (!text) return {re: null, ok: true};
  if (!REGEX_CACHE.has(text)) {
    if (REGEX_CACHE.size > 50) REGEX_CACHE.clear();
    try { REGEX_CACHE.set(text, {re: new RegExp(text), ok: true}); } catch (e) { REGEX_CACHE.set(text, {re: null, ok: false}); }
  }
  return REGEX_CACHE.get(text);
}

/** Sets of run names that choose runs besides the regex, by who chose: the served page's query (``where``), the
 * HParams brush (``brush``); null or absent: no choice. A run is listed and drawn when it matches the regex and is
 * in every set. ``TFE.chooseRuns(who, names, where)`` sets one (an array or Set; null clears it) and redraws;
 * ``where`` is the same choice in the run query language (summaries/runs/query.py), which the served page sends
 * to the server for what it computes there (the density); ``TFE.choiceQuery()`` joins the active ones. */
const RUN_CHOICES = {}, RUN_CHOICE_QUERIES = {};
let RUN_CHOICE_VERSION = 0;
function runChosen(name) {
  for (const set of Object.values(RUN_CHOICES)) if (set && !set.has(name)) return false;
  return true;
}
function runMatches(i) {
  const {re} = compileRegex(STATE.runFilter);
  return (!re || runTextMatches(i, re)) && runChosen(runName(i));   // runlist.js: the name or a label
}
TFE.chooseRuns = (who, names, where) => {
  RUN_CHOICES[who] = names == null ? null : names instanceof Set ? names : new Set(names);
  RUN_CHOICE_QUERIES[who] = names == null ? null : where || null;
  RUN_CHOICE_VERSION++;
  if (TFE.runList) TFE.runList.refresh();
  changed("runs");
};
TFE.runChoices = RUN_CHOICES;
TFE.choiceQuery = () => Object.values(RUN_CHOICE_QUERIES).filter(q => q).map(q => "(" + q + ")").join(" and ");
TFE.choiceVersion = () => RUN_CHOICE_VERSION;

/** Is run ``i`` shown: not unticked (runlist.js hiddenRuns), matching the run regex and chosen (RUN_CHOICES). */
function runVisible(i) {
  return !hiddenRuns().has(runName(i)) && runMatches(i);
}
function tagVisible(tag) {
  const {re} = compileRegex(STATE.tagFilter);
  return !re || re.test(tag);
}
TFE.runVisible = runVisible;

/** Tell every section what changed (``smoothing``, ``x``, ``logy``, ``outliers``, ``runs``, ``tags``, ``view``,
 * ``center``, ``band``). */
function changed(what) {
  saveState();
  for (const s of TFE.sections) if (s.update) s.update(what);
  for (const node of document.querySelectorAll("[data-run], [data-tag]")) {
    if (node.dataset.scalar) continue;
    const run = node.dataset.run, tag = node.dataset.tag;
    const show = (run === undefined || runVisible(+run)) && (tag === undefined || tagVisible(tag));
    node.classList.toggle("hidden", !show);
  }
  for (const group of document.querySelectorAll(".group")) {
    const cards = group.querySelectorAll(".card");
    group.classList.toggle("hidden", cards.length > 0 && !Array.from(cards).some(c => !c.classList.contains("hidden")));
  }
}
TFE.changed = changed;

// --- sidebar ------------------------------------------------------------------------------------------

function sidebar() {
  const tagInput = el("input", {type: "search", id: "tag-filter", placeholder: "Filter tags (regex)", value: STATE.tagFilter,
    oninput: e => { STATE.tagFilter = e.target.value; tagInput.classList.toggle("invalid", !compileRegex(e.target.value).ok); changed("tags"); }});
  // the smoothing's kind, and one slider whose meaning follows it (weight, window points, or sigma in x units)
  const smoothKind = el("select", {id: "smoothing-kind", title: "Smoothing"},
    SMOOTH_KINDS.map(k => el("option", {value: k, selected: currentSmoothing().kind === k}, SMOOTH_LABELS[k])));
  const smoothNumber = el("input", {type: "number", id: "smoothing-value"});
  const smoothRange = el("input", {type: "range", id: "smoothing"});
  const fitSmoothing = () => {
    const {kind, param} = currentSmoothing(), r = smoothControlRange(kind, TFE.xSpan() || 100 * (param || 1));
    if (kind === "gaussian" && STATE.smoothParams.gaussian === null) STATE.smoothParams.gaussian = r.max / 10;
    Object.assign(smoothRange, r);
    Object.assign(smoothNumber, {min: r.min, max: kind === "ema" || kind === "twema" ? r.max : "", step: r.step});
    smoothRange.value = smoothNumber.value = currentSmoothing().param;
  };
  const setSmoothing = v => {
    const {kind} = currentSmoothing();
    v = clampSmoothParam(kind, v);
    if (kind === "ema") STATE.smoothing = v; else STATE.smoothParams[kind] = v;
    smoothRange.value = v; smoothNumber.value = v; changed("smoothing");
  };
  smoothRange.addEventListener("input", e => setSmoothing(e.target.value));
  smoothNumber.addEventListener("change", e => setSmoothing(e.target.value));
  smoothKind.addEventListener("change", e => { STATE.smoothKind = e.target.value; fitSmoothing(); changed("smoothing"); });
  fitSmoothing();
  const xRadios = ["step", "relative", "wall"].map(x => el("label", null,
    el("input", {type: "radio", name: "x-axis", value: x, checked: STATE.x === x,
                 onchange: () => { STATE.x = x; changed("x"); }}), {step: "Step", relative: "Relative", wall: "Wall"}[x]));
  // any scalar tag of the shown runs as the x axis (scalars.js xFromTag); a radio button resets it
  const xTag = el("select", {id: "x-tag", title: "A scalar tag as the horizontal axis (e.g. samples seen)"},
    el("option", {value: ""}, "tag…"),
    ((DATA.scalars || {}).x_tags || []).map(t => el("option", {value: t, selected: STATE.x === t}, t)));
  xTag.addEventListener("change", e => {
    if (!e.target.value) return;
    STATE.x = e.target.value;
    for (const radio of xRadios) radio.querySelector("input").checked = false;
    changed("x");
  });
  for (const radio of xRadios) radio.querySelector("input").addEventListener("change", () => { xTag.value = ""; });
  const check = (key, id, label) => el("label", null, el("input", {type: "checkbox", id, checked: STATE[key],
    onchange: e => { STATE[key] = e.target.checked; changed(key); }}), label);
  const side = el("aside", {class: "sidebar"}, aggregateControl(),
    el("div", {class: "control"}, tagInput),
    el("div", {class: "control"}, el("div", {class: "label"}, "Smoothing"), smoothKind, el("div", {class: "row"}, smoothRange, smoothNumber)),
    el("div", {class: "control"}, el("div", {class: "label"}, "Horizontal axis"), el("div", {class: "radios"}, xRadios), xTag),
    el("div", {class: "control"}, check("logy", "log-y", "Log-scale y axis")),
    el("div", {class: "control"}, check("logx", "log-x", "Log-scale x axis")),
    el("div", {class: "control"}, check("outliers", "ignore-outliers", "Ignore outliers in chart scaling")),
    runList());   // runlist.js: filter, sort and the virtualized list
  return side;
}

/** With --aggregate: bands (each group's centre line over its band) or the individual runs, and which centre and
 * band. Nothing without aggregates. */
function aggregateControl() {
  if (!DATA.scalars.aggregates.length) return null;
  const groups = new Set(DATA.scalars.aggregates.map(a => a.group)).size;
  const radio = (value, label) => el("label", null, el("input", {type: "radio", name: "scalar-view", value, checked: STATE.view === value,
    onchange: () => { STATE.view = value; changed("view"); }}), label);
  const choose = (key, id, options) => el("select", {id, onchange: e => { STATE[key] = e.target.value; changed(key); }},
    Object.entries(options).map(([v, label]) => el("option", {value: v, selected: STATE[key] === v}, label)));
  return el("div", {class: "control aggregate", title: "runs grouped by the regex " + DATA.options.aggregate},
    el("div", {class: "label"}, "Groups of runs (" + groups + ")"),
    el("div", {class: "radios"}, radio("bands", "Bands"), radio("runs", "Individual runs")),
    el("div", {class: "row"}, choose("center", "band-center", {mean: "mean", median: "median"}),
       choose("band", "band-kind", {std: "± std", minmax: "min – max", none: "no band"})));
}

/** A section of the page: ``build(body)`` fills it; ``update(what)`` reacts to control changes. */
function section(id, name, count, build, update) {
  TFE.sections.push({id, name, count, build, update});
}
TFE.section = section;

/** Cards grouped by tag prefix (TensorBoard's categories: the part of the tag before its first "/"). */
function groupByPrefix(items, tagOf) {
  const groups = new Map();
  for (const item of items) {
    const tag = tagOf(item), key = tag.includes("/") ? tag.slice(0, tag.indexOf("/")) : tag;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(item);
  }
  return Array.from(groups.entries()).sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
}
TFE.groupByPrefix = groupByPrefix;

function groupBox(name, count, cards) {
  return el("details", {class: "group", open: true},
            el("summary", null, el("span", {class: "group-name"}, name), el("small", null, " " + count)),
            el("div", {class: "grid"}, cards));
}

// --- boot ---------------------------------------------------------------------------------------------

function boot() {
  const t0 = performance.now();
  loadBuffer().then(buffer => { BUFFER = buffer; build(t0); }).catch(err => {
    document.getElementById("app").append(el("p", {class: "problems"}, "The report could not be shown: " + err.message));
    window.__reportError = String(err && err.stack || err);
    throw err;
  });
}

function build(t0) {
  const app = document.getElementById("app");
  app.textContent = "";
  const nRuns = DATA.runs.length;
  app.append(el("header", null, el("h1", null, DATA.title),
    el("p", null, nRuns + " run" + (nRuns === 1 ? "" : "s") + " · rendered " + DATA.rendered + " · tfevents")));
  const main = el("main");
  app.append(el("div", {class: "layout"}, sidebar(), main));
  const shown = TFE.sections.filter(s => s.count > 0);
  main.append(el("nav", null, shown.map(s => el("a", {href: "#" + s.id}, s.name + " (" + s.count + ")"))));
  if (DATA.problems.length)
    main.append(el("div", {class: "problems"}, el("b", null, "Problems while reading"),
                   el("ul", null, DATA.problems.map(p => el("li", null, p)))));
  if (!shown.length) main.append(el("p", {class: "empty"}, "No summaries found."));
  for (const s of shown) {
    const body = el("div", {class: "section-body"});
    main.append(el("section", {id: s.id}, el("h2", null, s.name), body));
    s.build(body);
  }
  changed("all");
  TFE.buildMs = performance.now() - t0;
  // every chart is drawn synchronously above; the next frame has painted them
  requestAnimationFrame(() => setTimeout(() => {
    TFE.ready = true;
    window.__reportReady = performance.now();
  }, 0));
}
