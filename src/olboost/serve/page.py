"""The status page of ``olboost serve`` (``GET /``): one self-contained HTML file, no external
resources (the service may run where nothing else is reachable).

Every second the page reads ``/series`` and ``/health`` and draws, on two canvases, the running
average of the estimated rank loss and the click-through rate over time. The numbers drawn last
are also written out as text (``#loss-value``, ``#ctr-value``, ``#feedback-count``), and
``#status`` (a live region: a screen reader says its changes) says ``ok`` or what went wrong,
so that a browser test can read what was drawn.

A refresh starts a second after the one before has ended, and gives up on an answer after
3 s: a server that stops answering (hung, or unreachable) is said in ``#status`` with the age
of the numbers shown, which are greyed out, instead of an ``ok`` over frozen numbers (with a
refresh every second whatever the last one's fate, unanswered requests piled up, and a late
answer overwrote a newer one: the feedback count went back). A service that stopped on an
error says which in ``/health``'s ``error``, shown here with the advice to restart it; one
whose log cannot be written for a while (a full disk, a lock another program holds) says
``/health``'s ``log_error`` as a warning until the log is written again.
"""

__all__ = ["STATUS_PAGE"]

STATUS_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>olboost serve</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
  .charts { display: flex; gap: 2em; flex-wrap: wrap; }
  canvas { border: 1px solid #ccc; max-width: 100%; height: auto; }
  figure { margin: 0; max-width: 100%; min-width: 0; }
  .stale { opacity: .45; }
  dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .2em 1em; }
  dt { color: #666; }
  dd { margin: 0; overflow-wrap: anywhere; }
  @media (max-width: 560px) {
    dl { grid-template-columns: minmax(0, 1fr); gap: 0; }
    dd { margin-bottom: .4em; }
  }
</style>
</head>
<body>
<h1>olboost serve</h1>
<p>Status: <span id="status" role="status" aria-live="polite">loading</span></p>
<div id="numbers">
<dl>
  <dt>model</dt><dd id="model">-</dd>
  <dt>feedback learned</dt><dd id="feedback-count">0</dd>
  <dt>impressions</dt><dd id="impressions">0</dd>
  <dt>pending / expired</dt><dd id="pending">-</dd>
  <dt>estimated rank loss (running average)</dt><dd id="loss-value">-</dd>
  <dt>click-through rate (last interval)</dt><dd id="ctr-value">-</dd>
</dl>
<div class="charts">
  <figure><canvas id="loss-chart" width="480" height="240" role="img"
    aria-label="estimated rank loss: no data yet"></canvas>
    <figcaption>estimated rank loss, running average</figcaption></figure>
  <figure><canvas id="ctr-chart" width="480" height="240" role="img"
    aria-label="click-through rate: no data yet"></canvas>
    <figcaption>click-through rate (clicks per shown label)</figcaption></figure>
</div>
</div>
<script>
"use strict";
const TIMEOUT_MS = 3000;
let lastAnswer = null;
function draw(canvas, ts, ys, color, what) {
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = 30;
  ctx.clearRect(0, 0, w, h);
  const pts = [];
  for (let i = 0; i < ts.length; i++) {
    if (ys[i] !== null && Number.isFinite(ys[i])) pts.push([ts[i], ys[i]]);
  }
  ctx.strokeStyle = "#999";
  ctx.strokeRect(pad, 5, w - pad - 5, h - pad - 5);
  if (pts.length === 0) {
    canvas.dataset.points = "0";
    canvas.setAttribute("aria-label", what + ": no data yet");
    return;
  }
  const t0 = pts[0][0], t1 = Math.max(pts[pts.length - 1][0], t0 + 1);
  let hi = Math.max(...pts.map(p => p[1])); if (!(hi > 0)) hi = 1;
  const x = t => pad + (w - pad - 5) * (t - t0) / (t1 - t0);
  const y = v => h - pad - (h - pad - 10) * v / hi;
  ctx.fillStyle = "#666";
  ctx.fillText(hi.toPrecision(3), 2, 14);
  ctx.fillText("0", 2, h - pad);
  ctx.fillText(Math.round(t1 - t0) + " s", w - 40, h - 10);
  ctx.strokeStyle = color; ctx.lineWidth = 2; ctx.beginPath();
  pts.forEach((p, i) => i ? ctx.lineTo(x(p[0]), y(p[1])) : ctx.moveTo(x(p[0]), y(p[1])));
  if (pts.length === 1) ctx.arc(x(pts[0][0]), y(pts[0][1]), 2, 0, 2 * Math.PI);
  ctx.stroke();
  canvas.dataset.points = String(pts.length);
  canvas.setAttribute("aria-label", what + ": " + pts[pts.length - 1][1].toFixed(4) +
    " now, at most " + hi.toPrecision(3) + " over the last " + Math.round(t1 - t0) + " s");
}
function last(ys) {
  for (let i = ys.length - 1; i >= 0; i--) if (ys[i] !== null) return ys[i];
  return null;
}
function get(path) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), TIMEOUT_MS);
  return fetch(path, {signal: abort.signal, cache: "no-store"}).then(r => {
    // health answers 503 with its reason once the service has stopped on an error
    if (!r.ok && !(path === "health" && r.status === 503)) {
      throw new Error(path + ": HTTP " + r.status);
    }
    return r.json();
  }).finally(() => clearTimeout(timer));
}
function say(text, stale) {
  document.getElementById("status").textContent = text;
  document.getElementById("numbers").classList.toggle("stale", stale);
}
async function refresh() {
  let series, health;
  try {
    [series, health] = await Promise.all([get("series"), get("health")]);
  } catch (err) {
    const why = err.name === "AbortError" ? "no answer within " + TIMEOUT_MS / 1000 + " s"
      : "error: " + err.message;
    const age = lastAnswer === null ? "" : "; the numbers shown are " +
      Math.round((Date.now() - lastAnswer) / 1000) + " s old";
    say(why + age, true);
    return;
  }
  lastAnswer = Date.now();
  draw(document.getElementById("loss-chart"), series.t, series.loss, "#c0392b",
    "estimated rank loss");
  draw(document.getElementById("ctr-chart"), series.t, series.ctr, "#2471a3",
    "click-through rate");
  const loss = last(series.loss), ctr = last(series.ctr);
  document.getElementById("loss-value").textContent = loss === null ? "-" : loss.toFixed(4);
  document.getElementById("ctr-value").textContent = ctr === null ? "-" : ctr.toFixed(4);
  document.getElementById("feedback-count").textContent = String(health.feedback);
  document.getElementById("impressions").textContent = String(health.impressions);
  document.getElementById("pending").textContent = health.pending + " / " + health.expired;
  document.getElementById("model").textContent =
    health.algorithm + ", k = " + health.k + ", " + health.n_labels + " labels, " +
    health.rounds + " rounds";
  if (health.status === "ok" && health.log_error) {
    say("warning: " + health.log_error + " (requests are refused until it can be; the " +
      "service goes on)", false);
  } else if (health.status === "ok") say("ok", false);
  else say("error: " + (health.error || health.status) +
    " (the service answers no request until it is restarted)", true);
}
async function loop() {
  try {
    await refresh();
  } catch (err) {
    say("error: " + err.message, true);  // an answer that could not be shown
  } finally {
    setTimeout(loop, 1000);
  }
}
loop();
</script>
</body>
</html>
"""
