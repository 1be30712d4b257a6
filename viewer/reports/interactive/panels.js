// The other dashboards: images and videos (GIF) with a per-series step slider, audio players, text (markdown
// already rendered and allowlist-cleaned by viewer/reports/safe_html.py), the HParams table (sortable, filterable;
// each metric shown and ranked by its last value or its best, the series' min or max) with its parallel-coordinates
// view, and graphs as a collapsible tree of name scopes with op counts.
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

function buildHparams(body) {
  const cols = hpColumns(), runIndex = new Map(DATA.runs.map((r, i) => [r.name, i]));
  const state = {sort: null, desc: false, filter: ""};
  const filterInput = el("input", {type: "search", class: "hp-filter", placeholder: "Filter rows (regex on any cell)",
                                   oninput: e => { state.filter = e.target.value; render(); }});
  const table = el("table", {class: "hp-table"}), coords = el("div", {class: "hp-coords"});
  function rows() {
    const {re} = compileRegex(state.filter);
    let out = HP.rows.filter(r => !runIndex.has(r.run) || runVisible(runIndex.get(r.run)));
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
          render();
        }}, ["last", "min", "max"].map(v => el("option", {value: v, selected: hpStat(col) === v}, v))) : null;
    return el("th", {class: "sortable", title: "Sort by " + label,
                     onclick: () => { state.desc = state.sort === k ? !state.desc : false; state.sort = k; render(); }},
              label + mark, stat ? " " : null, stat);
  }
  function render() {
    const shown = rows();
    table.textContent = "";
    table.append(el("thead", null, el("tr", null, header("run", -1), cols.map((c, k) => header(c.name, k)))),
      el("tbody", null, shown.map(r => el("tr", {dataset: {hpRun: r.run}},
        el("td", null, runIndex.has(r.run) ? swatch(runIndex.get(r.run)) : null, r.run),
        cols.map(c => { const step = hpStep(r, c);
          return el("td", {class: typeof hpValue(r, c) === "number" ? "num" : null, title: step === null ? null : "step " + step},
                    fmtCell(hpValue(r, c))); })))));
    coords.textContent = "";
    coords.append(parallelCoordinates(shown, cols, runIndex));
  }
  body.append(el("div", {class: "card wide"}, filterInput, el("div", {class: "table-wrap"}, table), coords));
  render();
  TFE.hparamsRender = render;
}

function fmtCell(v) {
  if (v === null || v === undefined) return "";
  return typeof v === "number" ? String(+v.toPrecision(6)) : String(v);
}

/** One vertical axis per column (numbers scaled min to max, other values evenly in sorted order), one
 * polyline per run in its colour; hovering a line shows its run. */
function parallelCoordinates(rows, cols, runIndex) {
  const w = Math.max(480, 140 * cols.length), h = 280, m = {l: 70, r: 90, t: 24, b: 34};
  const clip = (text, n) => text.length > n ? text.slice(0, n - 1) + "…" : text;
  const root = svg("svg", {viewBox: "0 0 " + w + " " + h, width: w, class: "svg-chart hp-svg"});
  if (!cols.length || !rows.length) return root;
  const xOf = k => m.l + k * (w - m.l - m.r) / Math.max(1, cols.length - 1);
  const scales = cols.map(c => {
    const vals = rows.map(r => hpValue(r, c)).filter(v => v !== null);
    const numeric = vals.length && vals.every(v => typeof v === "number" && isFinite(v));
    if (numeric) {
      const lo = Math.min(...vals), hi = Math.max(...vals);
      return {f: v => hi === lo ? 0.5 : (v - lo) / (hi - lo), labels: hi === lo ? [[0.5, fmtCell(lo)]] : [[0, fmtCell(lo)], [1, fmtCell(hi)]]};
    }
    const cats = Array.from(new Set(vals.map(String))).sort();
    const pos = v => cats.length > 1 ? cats.indexOf(String(v)) / (cats.length - 1) : 0.5;
    return {f: pos, labels: cats.map(c2 => [pos(c2), c2])};
  });
  const yOf = t => h - m.b - t * (h - m.t - m.b);
  cols.forEach((c, k) => {
    root.append(svg("line", {x1: xOf(k), x2: xOf(k), y1: m.t, y2: h - m.b, class: "axis"}),
                svg("text", {x: xOf(k), y: h - 12, "text-anchor": "middle", class: "label"}, clip(c.name, 22), svg("title", null, c.name)));
    for (const [t, text] of scales[k].labels)
      root.append(svg("text", {x: xOf(k) + 4, y: yOf(t) + 3, class: "tick"}, clip(text, 16), svg("title", null, text)));
  });
  for (const r of rows) {
    let d = "", pen = false;
    cols.forEach((c, k) => {
      const v = hpValue(r, c);
      if (v === null || (typeof v === "number" && !isFinite(v) && scales[k].labels.length !== 1)) { pen = false; return; }
      d += (pen ? "L" : "M") + xOf(k).toFixed(1) + "," + yOf(scales[k].f(v)).toFixed(1);
      pen = true;
    });
    const color = runIndex.has(r.run) ? runColor(runIndex.get(r.run)) : "#555";
    root.append(svg("path", {d, fill: "none", stroke: color, "stroke-width": 2, class: "hp-line"}, svg("title", null, r.run)));
  }
  return root;
}

section("hparams", "HParams", HP.rows.length, buildHparams, what => { if (what === "runs" && TFE.hparamsRender) TFE.hparamsRender(); });

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
