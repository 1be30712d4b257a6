// The served dashboard (viewer/dashboard/page.py): the report's page whose scalar series arrive on demand from the
// JSON API instead of being embedded. Runs in the same closure, after the report's scripts, only in the served page.
// A chart's series are asked for when the chart scrolls into view (GET api/v1/scalars, reduced on the server to the
// chart's pixel width: each pixel column's first, last, least and greatest point), then drawn by the report's own
// makePlot. Every reload interval the page asks GET api/v1/runs what changed and asks again for the series that
// did; the header says when the logdir last changed and whether new runs or tags wait for a reload.

const API = DATA.api;
const SERVED = TFE.served = {requests: 0, polls: 0, loaded: new Set(), lastChange: null, newSeries: 0};
let observer = null;
const waiting = new Set();   // charts with pending series, observed until they scroll into view

/** Called by makePlot for a chart whose series have not arrived: observe it; ask once it is in view. */
TFE.whenPending = function (chart) {
  chart.note.textContent = "loading\u2026";
  if (!window.IntersectionObserver) { loadChart(chart); return; }
  if (!observer) observer = new IntersectionObserver(entries => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      const chart = entry.target.__chart;
      observer.unobserve(entry.target);
      waiting.delete(chart);
      loadChart(chart);
    }
  }, {rootMargin: "200px"});
  if (waiting.has(chart)) return;
  waiting.add(chart);
  chart.card.__chart = chart;
  observer.observe(chart.card);
};

function apiUrl(route, params) {
  const url = new URL(API.base + route, window.location.href);
  for (const [k, v] of Object.entries(params || {})) url.searchParams.set(k, v);
  return url;
}

async function getJson(route, params) {
  SERVED.requests++;
  const answer = await fetch(apiUrl(route, params), {credentials: "same-origin", cache: "no-store"});
  if (!answer.ok) throw new Error(route + ": HTTP " + answer.status);
  return answer.json();
}

/** JSON's null, "Infinity" and "-Infinity" (app.py json_number) as numbers. */
function number(v) {
  return v === null ? NaN : v === "Infinity" ? Infinity : v === "-Infinity" ? -Infinity : v;
}

/** Ask for every series of ``chart`` that is pending, then draw it. */
async function loadChart(chart) {
  const wanted = chart.series.map(i => SERIES[i]).filter(s => s.pending && !s.asking);
  const width = Math.max(240, chart.plot.clientWidth || 400);
  try {
    await Promise.all(wanted.map(s => loadSeries(s, width)));
  } catch (err) {
    chart.note.textContent = "could not load: " + err.message;
    return;
  }
  chart.note.textContent = "";
  makePlot(chart);
}

async function loadSeries(s, width) {
  s.asking = true;
  try {
    const got = await getJson("scalars", {run: s.fetch.run, tag: s.fetch.tag, points: width});
    s.step = Float64Array.from(got.step);
    s.wall = Float64Array.from(got.wall_time, number);
    s.value = Float64Array.from(got.value, number);
    s.smoothed = null; s.weight = null; s.xs = {};
    s.pending = false;
    SERVED.loaded.add(s);
  } finally {
    s.asking = false;
  }
}

/** Every interval: what changed since the page asked (each series' point count and last step); the loaded
 * series that changed are asked for again, the others are marked pending (asked for when drawn). */
async function poll() {
  let listed;
  try {
    listed = await getJson("runs");
  } catch (err) {
    status("the server did not answer (" + err.message + ")");
    return;
  }
  SERVED.polls++;
  const bySeries = new Map(SERIES.map(s => [s.fetch.run + "\n" + s.fetch.tag, s]));
  const stale = new Set();
  let newest = SERVED.lastChange, fresh = 0;
  for (const run of listed.runs) {
    for (const [tag, info] of Object.entries(run.scalars)) {
      const wall = number(info.last_wall_time);
      if (isFinite(wall) && (newest === null || wall > newest.wall)) newest = {wall, run: run.run};
      const s = bySeries.get(run.run + "\n" + tag);
      if (!s) { fresh++; continue; }
      if (info.points === s.fetch.points && info.last_step === s.fetch.last_step) continue;
      s.fetch.points = info.points; s.fetch.last_step = info.last_step;
      s.pending = true;
      for (const chart of TFE.charts) if (chart.series.some(i => SERIES[i] === s)) stale.add(chart);
    }
  }
  SERVED.lastChange = newest;
  SERVED.newSeries = fresh;
  for (const chart of stale) {
    if (chart.u) loadChart(chart);   // drawn: redraw with the new points
  }
  status();
}

function status(problem) {
  const node = document.getElementById("served-status") || (() => {
    const header = document.querySelector("header");
    if (!header) return null;
    const p = el("p", {id: "served-status"});
    header.append(p);
    return p;
  })();
  if (!node) return;
  const parts = ["live: asks the server every " + API.interval + " s"];
  if (SERVED.lastChange) parts.push("last change " + fmtWall(SERVED.lastChange.wall) + " (" + SERVED.lastChange.run + ")");
  if (SERVED.newSeries) parts.push(SERVED.newSeries + " new series: reload the page to see them");
  if (problem) parts.push(problem);
  node.textContent = parts.join(" \u00b7 ");
}

function startPolling() {
  if (!TFE.charts.length && !TFE.ready) { setTimeout(startPolling, 100); return; }
  status();
  poll();
  if (API.interval > 0) setInterval(poll, API.interval * 1000);
}
startPolling();
