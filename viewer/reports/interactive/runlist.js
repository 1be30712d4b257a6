// tfevents interactive report: the sidebar's run list. Virtualized: a fixed-height scrolling box with a spacer as
// tall as every listed run at a fixed row height, and only the rows in view (plus a margin) in the DOM, so 10,000
// runs cost a few dozen rows; scrolling renders the rows now in view. The list is the runs matching the regex
// filter (#run-filter) and chosen by the served page's query or the HParams brush (report.js TFE.chooseRuns), in the order of the sort control (#run-sort: name, any hparam, the last / min / max of any
// scalar tag, from each run's ``hparams`` and ``stats`` in the document; #run-sort-dir: ascending / descending;
// runs without the column last either way). The order is the list's only: colours and charts are unchanged.
// Ticking a row, the "all" box (every run matching the filter) and STATE.hidden (kept in sessionStorage) work for
// every run, rendered or not. A row shows the run's labels (``labels`` of its entry) as chips after its name and
// its ``notes`` in its tooltip; the regex filter matches a run whose name or any label it finds (runTextMatches,
// asked by report.js runMatches). Names, labels and notes go in as text only. The box also holds the "Colour by"
// control (colour.js). report.js's sidebar() calls runList().

const RUN_ROW = 22;          // px: every row's height
const RUN_ROWS_SHOWN = 18;   // the box's height in rows (less when fewer runs)
const RUN_MARGIN = 6;        // rows rendered beyond each edge of the view

let HIDDEN_SET = new Set(), HIDDEN_OF = null;
/** STATE.hidden (the unticked runs' names, an array as sessionStorage keeps it) as a Set. */
function hiddenRuns() {
  if (HIDDEN_OF !== STATE.hidden || HIDDEN_SET.size !== STATE.hidden.length) {
    HIDDEN_SET = new Set(STATE.hidden);
    HIDDEN_OF = STATE.hidden;
  }
  return HIDDEN_SET;
}

function setHidden(name, hidden) {
  const set = hiddenRuns();
  if (hidden && !set.has(name)) { STATE.hidden.push(name); set.add(name); }
  if (!hidden && set.has(name)) { STATE.hidden.splice(STATE.hidden.indexOf(name), 1); set.delete(name); }
}

/** A run's value in a sort column ("name", "hp:NAME", "last:TAG", "min:TAG", "max:TAG"): a finite number (booleans
 * as 0 / 1), a string, or null when the run has none. */
function runSortValue(run, column) {
  const colon = column.indexOf(":"), kind = column.slice(0, colon), name = column.slice(colon + 1);
  let v = null;
  if (kind === "hp") v = Object.prototype.hasOwnProperty.call(run.hparams || {}, name) ? run.hparams[name] : null;
  else if (kind in STAT_FIELD && Object.prototype.hasOwnProperty.call(run.stats || {}, name)) v = run.stats[name][STAT_FIELD[kind]];
  if (typeof v === "boolean") return +v;
  if (typeof v === "number") return isFinite(v) ? v : null;
  return typeof v === "string" ? v : null;
}
const STAT_FIELD = {last: 0, min: 1, max: 2};

/** Does the run filter's regex ``re`` find run ``i``'s name or one of its labels. */
function runTextMatches(i, re) {
  const r = DATA.runs[i];
  return re.test(r.name) || (Array.isArray(r.labels) && r.labels.some(l => re.test(String(l))));
}

/** The indices of the runs matching the filter regex and chosen (report.js runMatches), sorted by ``column`` (stable: ties in name order; runs
 * without a value last in both directions; numbers before strings). */
function runOrder(column, desc) {
  const runs = DATA.runs, out = [];
  for (let i = 0; i < runs.length; i++) if (runMatches(i)) out.push(i);
  if (column === "name") return desc ? out.reverse() : out;   // the document lists the runs by name
  const keys = new Map(out.map(i => [i, runSortValue(runs[i], column)]));
  const sign = desc ? -1 : 1;
  return out.sort((a, b) => {
    const x = keys.get(a), y = keys.get(b);
    if (x === null || y === null) return (x === null) - (y === null);
    if (typeof x !== typeof y) return sign * (typeof x === "number" ? -1 : 1);
    return sign * (x < y ? -1 : x > y ? 1 : 0);
  });
}

/** The sort control's columns: [value, label] of the name, each hparam and each scalar tag's last, min and max. */
function runSortColumns() {
  const hps = new Set(), tags = new Set();
  for (const r of DATA.runs) {
    for (const k of Object.keys(r.hparams || {})) hps.add(k);
    for (const k of Object.keys(r.stats || {})) tags.add(k);
  }
  const byText = (a, b) => a < b ? -1 : a > b ? 1 : 0;
  return {hparams: Array.from(hps).sort(byText).map(k => ["hp:" + k, k]),
          scalars: Array.from(tags).sort(byText).flatMap(t => ["last", "min", "max"].map(f => [f + ":" + t, t + " (" + f + ")"]))};
}

/** The "Runs" control: filter, sort, "all" box and the virtualized list. */
function runList() {
  const runs = DATA.runs, index = new Map(runs.map((r, i) => [r.name, i]));
  if (typeof STATE.runSort !== "string") STATE.runSort = "name";
  STATE.runSortDesc = !!STATE.runSortDesc;
  let order = [], rows = new Map(), rendered = [];

  const count = el("small", {id: "run-count"});
  const filter = el("input", {type: "search", id: "run-filter", placeholder: "Filter runs (regex)", value: STATE.runFilter,
    oninput: e => { STATE.runFilter = e.target.value; filter.classList.toggle("invalid", !compileRegex(e.target.value).ok);
                    refresh(); changed("runs"); }});
  const sort = el("select", {id: "run-sort", title: "Sort the run list by", style: {flex: "1", minWidth: "0"},
    onchange: e => { STATE.runSort = e.target.value; saveState(); refresh(); if (TFE.redrawOnTop) TFE.redrawOnTop(); }});
  const dir = el("button", {type: "button", id: "run-sort-dir",
    onclick: () => { STATE.runSortDesc = !STATE.runSortDesc; saveState(); refresh(); if (TFE.redrawOnTop) TFE.redrawOnTop(); }});
  const all = el("input", {type: "checkbox", id: "all-runs", checked: STATE.hidden.length === 0,
    onchange: e => {
      const set = new Set(STATE.hidden);
      for (const i of order) { if (e.target.checked) set.delete(runs[i].name); else set.add(runs[i].name); }
      STATE.hidden = Array.from(set);
      render(); changed("runs");
    }});
  const windowRows = el("div", {class: "run-window"});
  const spacer = el("div", {class: "run-spacer", style: {position: "relative"}}, windowRows);
  const list = el("div", {class: "run-list", style: {overflowY: "auto", overflowX: "hidden", position: "relative"},
                          onscroll: () => render()}, spacer);

  function fillSortOptions() {
    const {hparams, scalars} = runSortColumns(), option = ([v, label]) => el("option", {value: v}, label);
    sort.replaceChildren(el("option", {value: "name"}, "name"),
      hparams.length ? el("optgroup", {label: "hyperparameters"}, hparams.map(option)) : null,
      scalars.length ? el("optgroup", {label: "scalars"}, scalars.map(option)) : null);
    sort.value = STATE.runSort;
    if (sort.value !== STATE.runSort) sort.value = STATE.runSort = "name";
  }

  function makeRow(i) {
    const r = runs[i], labels = Array.isArray(r.labels) ? r.labels.map(String) : [];
    const notes = typeof r.notes === "string" && r.notes ? r.notes : null;
    return el("label", {class: "run", dataset: {runRow: i}, title: notes ? r.name + "\n" + notes : r.name,
                        style: {height: RUN_ROW + "px", boxSizing: "border-box"}},
      el("input", {type: "checkbox", class: "run-toggle", value: r.name,
                   onchange: e => { setHidden(r.name, !e.target.checked); all.checked = STATE.hidden.length === 0; changed("runs"); }}),
      el("i", {class: "swatch", style: {background: runColor(i)}}), el("span", {class: "run-name", dir: "auto"}, r.name),
      labels.map(l => el("span", {class: "chip", dir: "auto", title: l}, l)));
  }

  /** The rows in view (plus the margin) into the DOM, their boxes as STATE.hidden says. */
  function render() {
    const total = order.length, height = Math.min(total, RUN_ROWS_SHOWN) * RUN_ROW;
    list.style.height = height + "px";
    spacer.style.height = total * RUN_ROW + "px";
    const top = Math.min(list.scrollTop, Math.max(0, total * RUN_ROW - height)), view = list.clientHeight || height;
    const first = Math.max(0, Math.floor(top / RUN_ROW) - RUN_MARGIN);
    const last = Math.min(total, Math.ceil((top + view) / RUN_ROW) + RUN_MARGIN);
    const hidden = hiddenRuns(), kept = new Map(), nodes = [];
    for (let k = first; k < last; k++) {
      const i = order[k], row = rows.get(i) || makeRow(i);
      row.firstChild.checked = !hidden.has(runs[i].name);
      row.children[1].style.background = runColor(i);   // the colour now (colour.js: "Colour by")
      kept.set(i, row);
      nodes.push(row);
    }
    rows = kept;
    windowRows.style.transform = "translateY(" + first * RUN_ROW + "px)";
    if (nodes.length !== rendered.length || nodes.some((n, k) => n !== rendered[k])) windowRows.replaceChildren(...nodes);
    rendered = nodes;
    all.checked = STATE.hidden.length === 0;
  }

  /** The list again from the filter and the sort (after either changed, or the runs' stats). */
  function refresh() {
    order = runOrder(STATE.runSort, STATE.runSortDesc);
    dir.textContent = STATE.runSortDesc ? "\u2193" : "\u2191";
    dir.title = STATE.runSortDesc ? "descending (click: ascending)" : "ascending (click: descending)";
    dir.dataset.desc = STATE.runSortDesc ? "1" : "0";
    count.textContent = order.length === runs.length ? " (" + runs.length + ")" : " (" + order.length + " of " + runs.length + ")";
    render();
  }

  /** Scroll the list so run ``name``'s row is rendered, and return it (null: the filter leaves it out). */
  function reveal(name) {
    const k = order.indexOf(index.has(name) ? index.get(name) : -1);
    if (k < 0) return null;
    const view = list.clientHeight || RUN_ROWS_SHOWN * RUN_ROW;
    if (k * RUN_ROW < list.scrollTop || (k + 1) * RUN_ROW > list.scrollTop + view)
      list.scrollTop = Math.max(0, k * RUN_ROW - (view - RUN_ROW) / 2);
    render();
    return rows.get(order[k]) || null;
  }

  /** The served page's poll (GET api/v1/runs: ``{runs: [{run, scalars: {tag: {last, min, max, ...}}}]}``):
   * the runs' stats as they are now; the list re-sorted when it sorts by them. New runs wait for a
   * reload, as their series do. */
  function updateStats(answer) {
    const num = v => typeof v === "number" && isFinite(v) ? v : null;
    let columns = false;
    for (const got of (answer && answer.runs) || []) {
      const i = index.get(got.run);
      if (i === undefined) continue;
      const r = runs[i], stats = {};
      for (const [tag, info] of Object.entries(got.scalars || {})) {
        stats[tag] = [num(info.last), num(info.min), num(info.max)];
        if (!r.stats || !(tag in r.stats)) columns = true;
      }
      r.stats = Object.assign({}, r.stats, stats);   // a poll lists only the series that changed
    }
    if (columns) { fillSortOptions(); if (TFE.refreshColourOptions) TFE.refreshColourOptions(); }
    if (STATE.runSort !== "name") refresh();
    coloursAfterStats();   // colour.js: a colouring by a stat follows the stats
  }

  fillSortOptions();
  refresh();
  TFE.runList = {order: () => order.map(i => runs[i].name), reveal, refresh, rowHeight: RUN_ROW};
  TFE.updateRunStats = updateStats;
  return el("div", {class: "control runs"}, el("div", {class: "label"}, "Runs", count), filter,
    el("div", {class: "row", style: {marginTop: "4px"}}, sort, dir), colourControl(),
    el("label", {class: "run all"}, all, el("span", null, "all")), list);
}
