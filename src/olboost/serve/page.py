"""The status page of ``olboost serve`` (``GET /``): one self-contained HTML file, no external
resources (the service may run where nothing else is reachable).

Every second the page reads ``/series`` and ``/health`` and draws, on two canvases, the running
average of the estimated rank loss and the click-through rate over time. The numbers drawn last
are also written out as text (``#loss-value``, ``#ctr-value``, ``#feedback-count``), and
``#status`` says ``ok`` or what went wrong, so that a browser test can read what was drawn.
"""

__all__ = ["STATUS_PAGE"]

STATUS_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>olboost serve</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
  .charts { display: flex; gap: 2em; flex-wrap: wrap; }
  canvas { border: 1px solid #ccc; }
  dl { display: grid; grid-template-columns: max-content auto; gap: .2em 1em; }
  dt { color: #666; }
</style>
</head>
<body>
<h1>olboost serve</h1>
<p>Status: <span id="status">loading</span></p>
<dl>
  <dt>model</dt><dd id="model">-</dd>
  <dt>feedback learned</dt><dd id="feedback-count">0</dd>
  <dt>impressions</dt><dd id="impressions">0</dd>
  <dt>pending / expired</dt><dd id="pending">-</dd>
  <dt>estimated rank loss (running average)</dt><dd id="loss-value">-</dd>
  <dt>click-through rate (last interval)</dt><dd id="ctr-value">-</dd>
</dl>
<div class="charts">
  <figure><canvas id="loss-chart" width="480" height="240"></canvas>
    <figcaption>estimated rank loss, running average</figcaption></figure>
  <figure><canvas id="ctr-chart" width="480" height="240"></canvas>
    <figcaption>click-through rate (clicks per shown label)</figcaption></figure>
</div>
<script>
"use strict";
function draw(canvas, ts, ys, color) {
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = 30;
  ctx.clearRect(0, 0, w, h);
  const pts = [];
  for (let i = 0; i < ts.length; i++) {
    if (ys[i] !== null && Number.isFinite(ys[i])) pts.push([ts[i], ys[i]]);
  }
  ctx.strokeStyle = "#999";
  ctx.strokeRect(pad, 5, w - pad - 5, h - pad - 5);
  if (pts.length === 0) { canvas.dataset.points = "0"; return; }
  const t0 = pts[0][0], t1 = Math.max(pts[pts.length - 1][0], t0 + 1);
  let hi = Math.max(...pts.map(p => p[1])); if (!(hi > 0)) hi = 1;
  const x = t => pad + (w - pad - 5) * (t - t0) / (t1 - t0);
  const y = v => h - pad - (h - pad - 10) * v / hi;
  ctx.fillStyle = "#666";
  ctx.fillText(hi.toPrecision(3), 2, 12);
  ctx.fillText("0", 2, h - pad);
  ctx.fillText(Math.round(t1 - t0) + " s", w - 40, h - 10);
  ctx.strokeStyle = color; ctx.lineWidth = 2; ctx.beginPath();
  pts.forEach((p, i) => i ? ctx.lineTo(x(p[0]), y(p[1])) : ctx.moveTo(x(p[0]), y(p[1])));
  if (pts.length === 1) ctx.arc(x(pts[0][0]), y(pts[0][1]), 2, 0, 2 * Math.PI);
  ctx.stroke();
  canvas.dataset.points = String(pts.length);
}
function last(ys) {
  for (let i = ys.length - 1; i >= 0; i--) if (ys[i] !== null) return ys[i];
  return null;
}
async function refresh() {
  try {
    const [series, health] = await Promise.all(
      ["series", "health"].map(p => fetch(p).then(r => {
        if (!r.ok) throw new Error(p + ": HTTP " + r.status);
        return r.json();
      })));
    draw(document.getElementById("loss-chart"), series.t, series.loss, "#c0392b");
    draw(document.getElementById("ctr-chart"), series.t, series.ctr, "#2471a3");
    const loss = last(series.loss), ctr = last(series.ctr);
    document.getElementById("loss-value").textContent = loss === null ? "-" : loss.toFixed(4);
    document.getElementById("ctr-value").textContent = ctr === null ? "-" : ctr.toFixed(4);
    document.getElementById("feedback-count").textContent = String(health.feedback);
    document.getElementById("impressions").textContent = String(health.impressions);
    document.getElementById("pending").textContent = health.pending + " / " + health.expired;
    document.getElementById("model").textContent =
      health.algorithm + ", k = " + health.k + ", " + health.labels.length + " labels, " +
      health.rounds + " rounds";
    document.getElementById("status").textContent = health.status;
  } catch (err) {
    document.getElementById("status").textContent = "error: " + err.message;
  }
}
refresh();
setInterval(refresh, 1000);
</script>
</body>
</html>
"""
