// The other dashboards: images and videos (GIF) with a per-series step slider, audio players, text (markdown
// already rendered and allowlist-cleaned by viewer/reports/safe_html.py), the HParams table (sortable, filterable;
// each metric shown and ranked by its last value or its best, the series' min or max) with its parallel-coordinates
// view, whose axes take brushes that choose the runs every chart draws (TFE.chooseRuns("brush", ...)), and graphs
// as a collapsible tree of name scopes with op counts.
// Ends by booting the page (report.js ``boot``).

/** A card showing one step of a series at a time, chosen with a slider (TensorBoard's image card). */
function steppedCard(entry, renderItem) {
  const items = entry.items, content = el("div", {class: "stepped"}), label = el("span", {class: "step-value"});
  const slider = el("input", {type: "range", min: 0, max: items.length - 1, value: items.length - 1, class: "step-slider",
                              oninput: () => show(+slider.value)});
  function show(k) {
    const item = items[k];
    label.textContent = "step " + item.step + " · " + fmtWall(item.wall);
    content.textContent = "";
    content.append(...item.samples.map((s, i) => renderItem(s, i, item)));
  }
  show(items.length - 1);
  return el("div", {class: "card", dataset: {run: entry.run, tag: entry.tag}}, cardTitle(entry.tag, entry.run), content,
            el("div", {class: "slider-row"}, items.length > 1 ? slider : null, label));
}

function imageSample(sample, i, item) {
  const scale = sample.width > 0 && sample.width < 96 ? Math.ceil(96 / sample.width) : 1;
  return el("img", {src: sample.src, alt: "step " + item.step + (item.samples.length > 1 ? " sample " + i : ""),
                    class: "media", width: sample.width ? Math.min(400, sample.width * scale) : null});
}

function mediaSection(id, name, entries, render) {
  section(id, name, entries.length, body => {
    for (const [group, members] of groupByPrefix(entries, e => e.tag))
      body.append(groupBox(group, members.length, members.map(e => steppedCard(e, render))));
  });
}

mediaSection("images", "Images", DATA.images, imageSample);
mediaSection("videos", "Videos", DATA.videos, imageSample);
mediaSection("audio", "Audio", DATA.audio, (clip) => el("div", {class: "clip"},
  el("audio", {controls: true, preload: "metadata", src: clip.src}),
  el("div", {class: "muted"}, (clip.label ? clip.label + " · " : "") + clip.rate + " Hz · " + clip.channels + " ch")));

section("meshes", "Meshes", DATA.meshes.length, body => {
  for (const [group, members] of groupByPrefix(DATA.meshes, e => e.tag))
    body.append(groupBox(group, members.length, members.map(m => el("div", {class: "card", dataset: {run: m.run, tag: m.tag}},
      cardTitle(m.tag, m.run), el("img", {src: m.src, alt: "mesh " + m.tag + " step " + m.step, class: "chart"}),
      el("div", {class: "muted"}, "step " + m.step)))));
});

// --- text -----------------------------------------------------------------------------------------------

section("text", "Text", DATA.text.length, body => {
  for (const [group, members] of groupByPrefix(DATA.text, e => e.tag))
    body.append(groupBox(group, members.length, members.map(e => el("div", {class: "card text-card", dataset: {run: e.run, tag: e.tag}},
      cardTitle(e.tag, e.run),
      e.items.slice().reverse().map(item => {
        const html = el("div", {class: "markdown"});
        html.innerHTML = item.html;       // cleaned to an allowlist of tags and attributes by safe_html.py
        return el("div", {class: "text-entry"}, el("div", {class: "muted"}, "step " + item.step), html);
      })))));
});

// --- hparams --------------------------------------------------------------------------------------------

const HP = DATA.hparams;

function hpColumns() {
  return HP.hparams.map(n => ({kind: "hparams", name: n})).concat(HP.metrics.map(n => ({kind: "metrics", name: n})));
}

/** Which value of a metric's series the table shows and ranks by: "last" (TensorBoard's), "min" or "max". */
function hpStat(col) { return col.kind === "metrics" && STATE.hpStat && STATE.hpStat[col.name] || "last"; }

/** A cell's value: the hyperparameter, or the metric's last, min or max value (``hpStat``). */
function hpValue(row, col) {
  const stat = hpStat(col);
  if (stat !== "last") { const best = row.best && row.best[col.name]; return best && best[stat] !== undefined ? best[stat] : null; }
  const v = row[col.kind][col.name];
  return v === undefined ? null : v;
}

/** The step of a metric cell's value, for its tooltip (null for a hyperparameter or no series). */
function hpStep(row, col) {
  const best = col.kind === "metrics" && row.best && row.best[col.name];
  if (!best) return null;
  return best[{last: "last_value_step", min: "min_step", max: "max_step"}[hpStat(col)]];
}
TFE.hpValue = hpValue;

/** Is run ``i`` shown by everything but the choice of ``who`` (report.js runVisible without one RUN_CHOICES set):
 * the parallel coordinates' axes and faded lines cover the runs the brush leaves out. */
function runShownBesides(i, who) {
  const name = runName(i), {re} = compileRegex(STATE.runFilter);
  if (hiddenRuns().has(name) || (re && !runTextMatches(i, re))) return false;
  for (const [k, set] of Object.entries(TFE.runChoices)) if (k !== who && set && !set.has(name)) return false;
  return true;
}

function buildHparams(body) {
  const cols = hpColumns(), runIndex = new Map(DATA.runs.map((r, i) => [r.name, i]));
  const state = {sort: null, desc: false, filter: ""};
  const filterInput = el("input", {type: "search", class: "hp-filter", placeholder: "Filter rows (regex on any cell)",
                                   oninput: e => { state.filter = e.target.value; render(); }});
  const table = el("table", {class: "hp-table"}), coords = el("div", {class: "hp-coords"});
  const brushNote = el("div", {class: "hp-brush-note hidden"});   // the brushes' query and a button clearing them
  function rows(shown) {
    const {re} = compileRegex(state.filter);
    let out = HP.rows.filter(r => !runIndex.has(r.run) || shown(runIndex.get(r.run)));
    if (re) out = out.filter(r => re.test(r.run) || cols.some(c => hpValue(r, c) !== null && re.test(String(hpValue(r, c)))));
    if (state.sort !== null) {
      const c = state.sort === -1 ? null : cols[state.sort];
      const key = r => c ? hpValue(r, c) : r.run;
      out.sort((a, b) => {
        const x = key(a), y = key(b);
        if (x === null) return 1; if (y === null) return -1;
        const cmp = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
        return state.desc ? -cmp : cmp;
      });
    }
    return out;
  }
  function header(label, k) {
    const mark = state.sort === k ? (state.desc ? " ▼" : " ▲") : "";
    const col = k >= 0 ? cols[k] : null;
    const stat = col && col.kind === "metrics" ? el("select", {class: "hp-stat", dataset: {metric: col.name},
        title: "Rank by the last value, or the best: the minimum or the maximum of the series",
        onclick: e => e.stopPropagation(),
        onchange: e => {   // ranking by the best value sorts best first (min ascending, max descending)
          STATE.hpStat = Object.assign({}, STATE.hpStat, {[col.name]: e.target.value});
          saveState();
          if (e.target.value !== "last") { state.sort = k; state.desc = e.target.value === "max"; }
          if (HP_BRUSHES.delete(brushKey(col))) { applyBrushes(runIndex); return; }   // the brush was on the other value
          render();
        }}, ["last", "min", "max"].map(v => el("option", {value: v, selected: hpStat(col) === v}, v))) : null;
    return el("th", {class: "sortable", title: "Sort by " + label,
                     onclick: () => { state.desc = state.sort === k ? !state.desc : false; state.sort = k; render(); }},
              label + mark, stat ? " " : null, stat);
  }
  function render() {
    const shown = rows(runVisible);
    table.textContent = "";
    table.append(el("thead", null, el("tr", null, header("run", -1), cols.map((c, k) => header(c.name, k)))),
      el("tbody", null, shown.map(r => el("tr", {dataset: {hpRun: r.run}},
        el("td", null, runIndex.has(r.run) ? swatch(runIndex.get(r.run)) : null, r.run),
        cols.map(c => { const step = hpStep(r, c);
          return el("td", {class: typeof hpValue(r, c) === "number" ? "num" : null, title: step === null ? null : "step " + step},
                    fmtCell(hpValue(r, c))); })))));
    brushNote.classList.toggle("hidden", !HP_BRUSHES.size);
    brushNote.replaceChildren(...(HP_BRUSHES.size ? ["Brushed (" + shown.length + " of " + HP.rows.length + " rows): ",
      el("code", null, brushQuery()), " ", el("button", {type: "button", class: "hp-brush-clear", onclick: () => TFE.clearBrushes()},
                                              "clear")] : []));
    coords.textContent = "";
    const chosen = TFE.runChoices.brush;
    coords.append(parallelCoordinates(rows(i => runShownBesides(i, "brush")), cols, runIndex,
                                      r => !chosen || chosen.has(r.run)));
  }
  body.append(el("div", {class: "card wide"}, filterInput, el("div", {class: "table-wrap"}, table), brushNote, coords));
  render();
  TFE.hparamsRender = render;
}

function fmtCell(v) {
  if (v === null || v === undefined) return "";
  return typeof v === "number" ? String(+v.toPrecision(6)) : String(v);
}

/** The brushes on the parallel coordinates' axes, by brushKey: ``{kind, name, stat, lo, hi}`` on a numeric axis (a
 * closed range in the data's units) or ``{kind, name, stat, cats: Map(text -> [values of that text])}`` on another
 * (the values the brush covers). Kept across redraws; a click on an axis without a drag clears its brush. */
const HP_BRUSHES = new Map();
function brushKey(col) { return col.kind + ":" + col.name; }

/** Does a row's value on ``b``'s axis lie in the brush. */
function inBrush(row, b) {
  const v = hpValue(row, {kind: b.kind, name: b.name});
  if (v === null || v === undefined) return false;
  if (b.cats) return b.cats.has(String(v));
  return typeof v === "number" && v >= b.lo && v <= b.hi;
}

/** A brush's axis as a column of the run query language (summaries/runs/query.py): an hparam in backticks (any name
 * goes), a metric as ``"tag".last|min|max`` (quotes and backslashes escaped). */
function brushColumn(b) {
  if (b.kind === "metrics") return '"' + b.name.replace(/[\\"]/g, "\\$&") + '".' + b.stat;
  return "`" + b.name.replace(/[\\`]/g, "\\$&") + "`";
}

/** A value as a literal of the query language: a number as JavaScript writes it (exactly the double, which Python's
 * float() reads back), true / false, or a double-quoted string. */
function queryLiteral(v) {
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return String(v);
  return '"' + String(v).replace(/[\\"]/g, "\\$&") + '"';
}

/** The brushes as one query: each numeric brush ``(col >= lo and col <= hi)``, each other ``col in [...]``, joined
 * with ``and``; "" without brushes. */
function brushQuery() { return Array.from(HP_BRUSHES.values()).map(brushQueryOf).join(" and "); }
function brushQueryOf(b) {
  const col = brushColumn(b);
  if (!b.cats) return "(" + col + " >= " + queryLiteral(b.lo) + " and " + col + " <= " + queryLiteral(b.hi) + ")";
  return col + " in [" + Array.from(b.cats.values()).flat().map(queryLiteral).join(", ") + "]";
}
TFE.brushQueryOf = brushQueryOf;

/** The runs inside every brush, chosen for every chart (report.js TFE.chooseRuns "brush"); no brush: no choice. */
function applyBrushes(runIndex) {
  if (!HP_BRUSHES.size) { TFE.chooseRuns("brush", null); return; }
  const brushes = Array.from(HP_BRUSHES.values());
  const names = HP.rows.filter(r => runIndex.has(r.run) && brushes.every(b => inBrush(r, b))).map(r => r.run);
  TFE.chooseRuns("brush", names, brushQuery());
}

/** The brushes for tests: ``[{kind, name, stat, lo, hi}]`` or ``[{kind, name, stat, cats: [texts]}]``. */
TFE.hpBrushes = () => Array.from(HP_BRUSHES.values()).map(b => b.cats
  ? {kind: b.kind, name: b.name, stat: b.stat, cats: Array.from(b.cats.keys())}
  : {kind: b.kind, name: b.name, stat: b.stat, lo: b.lo, hi: b.hi});
TFE.clearBrushes = () => { HP_BRUSHES.clear(); TFE.chooseRuns("brush", null); };

/** One vertical axis per column (numbers scaled min to max, on a log scale when all are positive and span more than
 * two decades as colour.js's rule; other values evenly in sorted order), one polyline per run in its colour, faded
 * for a run ``inside(row)`` leaves out (outside a brush); hovering a line shows its run. Dragging along an axis
 * brushes it (applyBrushes); a click on it without a drag clears its brush; each brush is drawn on its axis. */
function parallelCoordinates(rows, cols, runIndex, inside) {
  inside = inside || (() => true);
  const w = Math.max(480, 140 * cols.length), h = 280, m = {l: 70, r: 90, t: 24, b: 34};
  const clip = (text, n) => text.length > n ? text.slice(0, n - 1) + "…" : text;
  const root = svg("svg", {viewBox: "0 0 " + w + " " + h, width: w, class: "svg-chart hp-svg"});
  if (!cols.length || !rows.length) return root;
  const xOf = k => m.l + k * (w - m.l - m.r) / Math.max(1, cols.length - 1);
  const scales = cols.map(c => {
    const vals = rows.map(r => hpValue(r, c)).filter(v => v !== null);
    const numeric = vals.length && vals.every(v => typeof v === "number" && isFinite(v));
    if (numeric) {
      const lo = Math.min(...vals), hi = Math.max(...vals), log = lo > 0 && Math.log10(hi) - Math.log10(lo) > 2;
      const a = log ? Math.log10(lo) : lo, span = log ? Math.log10(hi) - a : hi - lo;
      return {numeric: true, log,
              f: v => hi === lo ? 0.5 : ((log ? Math.log10(v) : v) - a) / span,
              inv: t => hi === lo || t <= 0 ? lo : t >= 1 ? hi : log ? Math.pow(10, a + t * span) : lo + t * span,
              labels: hi === lo ? [[0.5, fmtCell(lo)]] : [[0, fmtCell(lo)], [1, fmtCell(hi)]]};
    }
    const cats = Array.from(new Set(vals.map(String))).sort(), byText = new Map();
    for (const v of vals) { const t = String(v); if (!byText.has(t)) byText.set(t, []); if (!byText.get(t).includes(v)) byText.get(t).push(v); }
    const pos = v => cats.length > 1 ? cats.indexOf(String(v)) / (cats.length - 1) : 0.5;
    return {numeric: false, f: pos, cats, byText, labels: cats.map(c2 => [pos(c2), c2])};
  });
  const yOf = t => h - m.b - t * (h - m.t - m.b), tOf = y => (h - m.b - y) / (h - m.t - m.b);
  cols.forEach((c, k) => {
    root.append(svg("line", {x1: xOf(k), x2: xOf(k), y1: m.t, y2: h - m.b, class: "axis"}),
                svg("text", {x: xOf(k), y: h - 12, "text-anchor": "middle", class: "label"}, clip(c.name, 22),
                    svg("title", null, c.name + (scales[k].log ? " (log scale)" : ""))));
    for (const [t, text] of scales[k].labels)
      root.append(svg("text", {x: xOf(k) + 4, y: yOf(t) + 3, class: "tick"}, clip(text, 16), svg("title", null, text)));
  });
  const lines = [];
  for (const r of rows) {
    let d = "", pen = false;
    cols.forEach((c, k) => {
      const v = hpValue(r, c);
      if (v === null || (typeof v === "number" && !isFinite(v) && scales[k].labels.length !== 1)) { pen = false; return; }
      d += (pen ? "L" : "M") + xOf(k).toFixed(1) + "," + yOf(scales[k].f(v)).toFixed(1);
      pen = true;
    });
    const inBrushes = inside(r), color = runIndex.has(r.run) ? runColor(runIndex.get(r.run)) : "#555";
    const path = svg("path", {d, fill: "none", stroke: inBrushes ? color : "#ddd", "stroke-width": inBrushes ? 2 : 1.2,
                              class: inBrushes ? "hp-line" : "hp-line-out", "data-hp-run": r.run}, svg("title", null, r.run));
    if (inBrushes) lines.push(path); else root.append(path);   // the runs outside the brushes behind
  }
  root.append(...lines);
  // the brushes drawn, then an area per axis that takes a drag
  cols.forEach((c, k) => {
    const b = HP_BRUSHES.get(brushKey(c)), sc = scales[k];
    if (!b) return;
    let t0, t1;
    if (b.cats) {
      const ts = sc.numeric ? [] : sc.cats.filter(t => b.cats.has(t)).map(t => sc.f(t));
      if (!ts.length) return;
      const pad = sc.cats.length > 1 ? 0.5 / (sc.cats.length - 1) : 0.5;
      t0 = Math.max(0, Math.min(...ts) - pad / 2); t1 = Math.min(1, Math.max(...ts) + pad / 2);
    } else if (sc.numeric) {
      t0 = Math.max(0, Math.min(1, sc.f(Math.max(b.lo, sc.inv(0))))); t1 = Math.max(0, Math.min(1, sc.f(Math.min(b.hi, sc.inv(1)))));
      if (b.hi < sc.inv(0) || b.lo > sc.inv(1)) return;   // the brush is off the axis' range
    } else return;
    root.append(svg("rect", {x: xOf(k) - 8, width: 16, y: yOf(t1), height: Math.max(2, yOf(t0) - yOf(t1)), class: "hp-brush",
                             "data-col": c.name, "data-kind": c.kind}));
  });
  cols.forEach((c, k) => {
    const area = svg("rect", {x: xOf(k) - 12, width: 24, y: m.t - 6, height: h - m.t - m.b + 12, class: "hp-brush-area",
                              "data-col": c.name, "data-kind": c.kind}, svg("title", null, "Drag to brush " + c.name + "; click to clear"));
    area.addEventListener("mousedown", e => startBrush(e, c, k));
    root.append(area);
  });

  function startBrush(e, col, k) {
    if (e.button !== 0) return;
    e.preventDefault();
    const box = root.getBoundingClientRect(), scale = box.height ? h / box.height : 1;
    const yAt = ev => Math.min(h - m.b, Math.max(m.t, (ev.clientY - box.top) * scale));
    const y0 = yAt(e), temp = svg("rect", {x: xOf(k) - 8, width: 16, y: y0, height: 0, class: "hp-brush"});
    root.append(temp);
    const move = ev => { const y = yAt(ev); temp.setAttribute("y", Math.min(y, y0)); temp.setAttribute("height", Math.abs(y - y0)); };
    const up = ev => {
      window.removeEventListener("mousemove", move);
      window.removeEventListener("mouseup", up);
      const y1 = yAt(ev), key = brushKey(col), sc = scales[k];
      const had = HP_BRUSHES.has(key);
      if (Math.abs(y1 - y0) / scale < 3) HP_BRUSHES.delete(key);
      else {
        const t0 = tOf(Math.max(y0, y1)), t1 = tOf(Math.min(y0, y1)), stat = hpStat(col);
        if (sc.numeric) HP_BRUSHES.set(key, {kind: col.kind, name: col.name, stat, lo: sc.inv(t0), hi: sc.inv(t1)});
        else HP_BRUSHES.set(key, {kind: col.kind, name: col.name, stat,
          cats: new Map(sc.cats.filter(t => sc.f(t) >= t0 && sc.f(t) <= t1).map(t => [t, sc.byText.get(t)]))});
      }
      if (had || HP_BRUSHES.has(key)) applyBrushes(runIndex); else temp.remove();
    };
    window.addEventListener("mousemove", move);
    window.addEventListener("mouseup", up);
  }
  return root;
}

section("hparams", "HParams", HP.rows.length, buildHparams,
        what => { if ((what === "runs" || what === "colour") && TFE.hparamsRender) TFE.hparamsRender(); });

// --- graphs ---------------------------------------------------------------------------------------------

/** A scope's children as nested <details>; a scope's contents are built when it is first opened. */
function graphTree(children, depth) {
  const list = el("ul", {class: "tree"});
  for (const [name, op, count, kids] of children) {
    if (kids.length) {
      const box = el("details", {open: depth === 0 && children.length <= 12},
        el("summary", null, el("span", {class: "scope"}, name), op ? el("span", {class: "op"}, " " + op) : null,
           el("small", null, " " + count + " op" + (count === 1 ? "" : "s"))));
      const fill = () => { if (!box.dataset.built) { box.dataset.built = "1"; box.append(graphTree(kids, depth + 1)); } };
      if (box.open) fill(); else box.addEventListener("toggle", fill);
      list.append(el("li", null, box));
    } else {
      list.append(el("li", {class: "leaf"}, el("span", null, name), op ? el("span", {class: "op"}, " " + op) : null));
    }
  }
  return list;
}

section("graphs", "Graphs", DATA.graphs.length, body => {
  for (const g of DATA.graphs) {
    const ops = el("table", {class: "op-table"}, el("thead", null, el("tr", null, el("th", null, "op type"), el("th", null, "nodes"))),
                   el("tbody", null, g.op_types.slice(0, 40).map(([op, n]) => el("tr", null, el("td", null, op), el("td", {class: "num"}, String(n))))));
    body.append(el("div", {class: "card wide graph-card", dataset: {run: g.run}},
      el("div", {class: "card-title"}, swatch(g.run), el("span", {class: "tag"}, runName(g.run)),
         el("small", null, " " + g.nodes + " nodes · " + g.functions + " functions")),
      el("div", {class: "graph-body"}, el("div", {class: "graph-tree"}, graphTree(g.tree, 0)), ops)));
  }
});

boot();
