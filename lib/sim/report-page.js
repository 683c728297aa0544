// The script of out/report.html (inlined by lib/sim/report.ts): draws the
// panels from the embedded JSON and handles zoom, pan and hover. Plain
// browser JavaScript, no dependency; window.nodescalerReport lets a test
// drive and inspect it.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var chart = document.getElementById('chart');
  var HOUR = 3600;
  var DAY = 86400;
  var duration = Math.max(HOUR, data.trace.durationSeconds);
  var startMs = data.trace.startsAt ? Date.parse(data.trace.startsAt) : NaN;
  var view = { t0: 0, t1: duration };
  var LEFT = 58;
  var RIGHT = 22;
  var EVENT_ROW = 26;

  // Derived columns: utilization, moves per hour, cumulative cost.
  data.policies.forEach(function (p) {
    p.utilization = p.capacity.map(function (c, i) { return c > 0 ? p.demand[i] / c : 0; });
    p.cost = [];
    var total = 0;
    for (var i = 0; i < p.at.length; i++) {
      var dt = i + 1 < p.at.length ? p.at[i + 1] - p.at[i] : (p.at[i] - (p.at[i - 1] || 0));
      total += (p.nodes[i] * dt / HOUR) * data.pricePerNodeHour;
      p.cost.push(total);
    }
    p.movesPerHour = p.moved ? p.moved.map(function (m, i) {
      if (i + 1 >= p.at.length) return 0;
      var dt = p.at[i + 1] - p.at[i];
      return dt > 0 ? ((p.moved[i + 1] - m) * HOUR) / dt : 0;
    }) : null;
  });
  var ours = data.policies.filter(function (p) { return p.name === 'nodescaler'; })[0] || data.policies[0];

  var panels = [
    { id: 'gears', title: 'Demand and capacity (gears)', height: 190, series: function () {
      var out = [{ label: 'demand', color: '#2ca02c', width: 2, values: ours.demand, at: ours.at }];
      data.policies.forEach(function (p) { out.push({ label: p.name + ' capacity', color: p.color, dashed: p.dashed, values: p.capacity, at: p.at }); });
      return out;
    }, events: true },
    { id: 'utilization', title: 'Utilization of ' + ours.name + ' (demand / capacity) and its thresholds', height: 120, series: function () {
      return [{ label: ours.name + ' utilization', color: ours.color, values: ours.utilization, at: ours.at }];
    }, lines: data.thresholds ? [
      { value: data.thresholds.scaleUp, label: 'scale up ' + data.thresholds.scaleUp, color: '#d62728' },
      { value: data.thresholds.scaleDown, label: 'scale down ' + data.thresholds.scaleDown, color: '#9467bd' },
    ] : [], fixedMax: 1.1 },
    { id: 'nodes', title: 'Nodes paid for (booting, active, draining)', height: 120, series: function () {
      return data.policies.map(function (p) { return { label: p.name, color: p.color, dashed: p.dashed, values: p.nodes, at: p.at }; });
    } },
    { id: 'moves', title: 'Gear moves per hour (each one a tenant restart)', height: 100, series: function () {
      return data.policies.filter(function (p) { return p.movesPerHour; }).map(function (p) { return { label: p.name, color: p.color, dashed: p.dashed, values: p.movesPerHour, at: p.at }; });
    } },
    { id: 'waiting', title: 'Gears waiting for a slot', height: 100, series: function () {
      return data.policies.map(function (p) { return { label: p.name, color: p.color, dashed: p.dashed, values: p.unplaced, at: p.at }; });
    } },
    { id: 'cost', title: 'Cost so far (' + data.currency + data.pricePerNodeHour + ' per node-hour)', height: 110, series: function () {
      return data.policies.map(function (p) { return { label: p.name, color: p.color, dashed: p.dashed, values: p.cost, at: p.at }; });
    } },
  ];

  function width() { return Math.max(320, Math.min(900, chart.clientWidth || 900)); }
  function x(t, w) { return LEFT + ((w - LEFT - RIGHT) * (t - view.t0)) / (view.t1 - view.t0); }
  function tAt(px, w) { return view.t0 + ((px - LEFT) / (w - LEFT - RIGHT)) * (view.t1 - view.t0); }
  function pad(n) { return (n < 10 ? '0' : '') + n; }
  var MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

  function label(t, step) {
    if (!isNaN(startMs)) {
      var d = new Date(startMs + t * 1000);
      var day = MONTHS[d.getUTCMonth()] + ' ' + d.getUTCDate();
      return step >= DAY ? day : (d.getUTCHours() === 0 && d.getUTCMinutes() === 0 ? day : pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()));
    }
    var days = Math.floor(t / DAY);
    var rest = t - days * DAY;
    if (step >= DAY) return 'day ' + days;
    var hm = pad(Math.floor(rest / HOUR)) + ':' + pad(Math.floor((rest % HOUR) / 60));
    return rest === 0 ? 'day ' + days : hm;
  }
  function when(t) {
    if (!isNaN(startMs)) return new Date(startMs + t * 1000).toISOString().replace('T', ' ').slice(0, 16) + 'Z';
    var days = Math.floor(t / DAY);
    var rest = t - days * DAY;
    return 'day ' + days + ' ' + pad(Math.floor(rest / HOUR)) + ':' + pad(Math.floor((rest % HOUR) / 60));
  }
  function timeStep(w) {
    var steps = [600, 1800, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY];
    var perPx = (view.t1 - view.t0) / (w - LEFT - RIGHT);
    for (var i = 0; i < steps.length; i++) if (steps[i] / perPx >= 70) return steps[i];
    return steps[steps.length - 1];
  }
  function niceStep(max) {
    var raw = max / 4;
    var mag = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
    var mults = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < mults.length; i++) if (mults[i] * mag >= raw) return mults[i] * mag;
    return 10 * mag;
  }
  function fmt(v) {
    if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en');
    if (Math.abs(v) >= 10) return String(Math.round(v));
    return String(Math.round(v * 100) / 100);
  }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]; }); }

  /** Indexes of the samples in view, with one on each side so step lines reach the edges. */
  function visible(at) {
    var lo = 0;
    var hi = at.length - 1;
    while (lo < hi && at[lo + 1] <= view.t0) lo++;
    while (hi > lo && at[hi - 1] >= view.t1) hi--;
    return [lo, hi];
  }

  function stepPath(s, w, y) {
    var range = visible(s.at);
    var pts = [];
    var prev = null;
    // Columns wider than a pixel keep every step; narrower ones keep each pixel's first, min and max.
    for (var i = range[0]; i <= range[1]; i++) {
      var px = Math.max(LEFT, Math.min(w - RIGHT, x(s.at[i], w)));
      var py = y(s.values[i]);
      if (prev !== null) pts.push(px.toFixed(1) + ',' + prev.toFixed(1));
      pts.push(px.toFixed(1) + ',' + py.toFixed(1));
      prev = py;
    }
    if (prev !== null) pts.push((w - RIGHT).toFixed(1) + ',' + prev.toFixed(1));
    return '<polyline fill="none" stroke="' + s.color + '" stroke-width="' + (s.width || 1.3) + '"' + (s.dashed ? ' stroke-dasharray="5,3"' : '') + ' points="' + pts.join(' ') + '"/>';
  }

  function eventMarks(w) {
    var bin = 18;
    var groups = {};
    data.policies.forEach(function (p) {
      if (p !== ours) return;
      (p.events || []).forEach(function (e) {
        if (e.at < view.t0 || e.at > view.t1) return;
        var key = e.kind + ':' + Math.floor((x(e.at, w) - LEFT) / bin);
        (groups[key] = groups[key] || []).push(e);
      });
    });
    var out = [];
    Object.keys(groups).forEach(function (key) {
      var list = groups[key];
      var kind = list[0].kind;
      var cx = list.reduce(function (sum, e) { return sum + x(e.at, w); }, 0) / list.length;
      var cy = kind === 'up' ? 8 : EVENT_ROW - 8;
      var shape = kind === 'up'
        ? 'M' + cx.toFixed(1) + ',' + (cy - 6) + ' l-5,9 h10 z'   // pointing up
        : 'M' + cx.toFixed(1) + ',' + (cy + 6) + ' l-5,-9 h10 z'; // pointing down
      var lines = list.slice(0, 8).map(function (e) {
        var parts = [when(e.at), e.kind === 'up' ? 'scale-up' : 'scale-down'];
        if (e.count !== undefined) parts.push('+' + e.count + ' node' + (e.count === 1 ? '' : 's'));
        if (e.node) parts.push('node ' + e.node);
        if (e.gearsMoved !== undefined) parts.push(e.gearsMoved + ' gears moved');
        if (e.decisionId) parts.push(e.decisionId);
        if (e.reason) parts.push(e.reason);
        return parts.join(' · ');
      });
      if (list.length > 8) lines.push('… and ' + (list.length - 8) + ' more (zoom in)');
      var title = (list.length > 1 ? list.length + ' ' + (kind === 'up' ? 'scale-ups' : 'scale-downs') + '\n' : '') + lines.join('\n');
      out.push('<g class="event" data-kind="' + kind + '" data-count="' + list.length + '"><path d="' + shape + '" fill="' + (kind === 'up' ? '#1f77b4' : '#d62728') + '"><title>' + esc(title) + '</title></path>' +
        (list.length > 1 ? '<text x="' + (cx + 6).toFixed(1) + '" y="' + (cy + 4) + '" font-size="9" fill="#333">' + list.length + '</text>' : '') + '</g>');
    });
    return out.join('');
  }

  function panelSvg(panel, w, showTime) {
    var series = panel.series();
    var top = (panel.events ? EVENT_ROW : 0) + 18;
    var h = panel.height;
    var bottom = top + h;
    var max = panel.fixedMax || 0;
    if (!panel.fixedMax) series.forEach(function (s) {
      var r = visible(s.at);
      for (var i = r[0]; i <= r[1]; i++) if (s.values[i] > max) max = s.values[i];
    });
    max = max > 0 ? max * 1.08 : 1;
    var y = function (v) { return bottom - (h * Math.min(v, max)) / max; };
    var parts = ['<text x="' + LEFT + '" y="' + (top - 5) + '" font-size="12" font-weight="600">' + esc(panel.title) + '</text>'];
    var step = niceStep(max);
    for (var v = 0; v <= max; v += step) {
      parts.push('<line x1="' + LEFT + '" x2="' + (w - RIGHT) + '" y1="' + y(v).toFixed(1) + '" y2="' + y(v).toFixed(1) + '" stroke="#eee"/>' +
        '<text x="' + (LEFT - 4) + '" y="' + (y(v) + 4).toFixed(1) + '" font-size="10" text-anchor="end">' + fmt(v) + '</text>');
    }
    var tStep = timeStep(w);
    for (var t = Math.ceil(view.t0 / tStep) * tStep; t <= view.t1; t += tStep) {
      var tx = x(t, w).toFixed(1);
      parts.push('<line x1="' + tx + '" x2="' + tx + '" y1="' + top + '" y2="' + bottom + '" stroke="#f2f2f2"/>');
      if (showTime) parts.push('<text x="' + tx + '" y="' + (bottom + 13) + '" font-size="10" text-anchor="middle" class="tick">' + esc(label(t, tStep)) + '</text>');
    }
    (panel.lines || []).forEach(function (l, i) {
      // The first label above its line, the next below, so close thresholds stay readable.
      var ly = i === 0 ? y(l.value) - 3 : y(l.value) + 11;
      parts.push('<line x1="' + LEFT + '" x2="' + (w - RIGHT) + '" y1="' + y(l.value).toFixed(1) + '" y2="' + y(l.value).toFixed(1) + '" stroke="' + l.color + '" stroke-dasharray="3,3"/>' +
        '<text x="' + (w - RIGHT - 2) + '" y="' + ly.toFixed(1) + '" font-size="10" text-anchor="end" fill="' + l.color + '">' + esc(l.label) + '</text>');
    });
    parts.push('<svg x="0" y="0" width="' + w + '" height="' + (bottom + 20) + '"><clipPath id="clip-' + panel.id + '"><rect x="' + LEFT + '" y="' + top + '" width="' + (w - LEFT - RIGHT) + '" height="' + h + '"/></clipPath>' +
      '<g clip-path="url(#clip-' + panel.id + ')">' + series.map(function (s) { return stepPath(s, w, y); }).join('') + '</g></svg>');
    parts.push('<line x1="' + LEFT + '" x2="' + LEFT + '" y1="' + top + '" y2="' + bottom + '" stroke="#999"/><line x1="' + LEFT + '" x2="' + (w - RIGHT) + '" y1="' + bottom + '" y2="' + bottom + '" stroke="#999"/>');
    if (panel.events) parts.push('<g class="events">' + eventMarks(w) + '</g>');
    var legend = series.map(function (s, i) {
      var lx = LEFT + 4 + i * 150;
      return '<line x1="' + lx + '" x2="' + (lx + 18) + '" y1="' + (bottom + 27) + '" y2="' + (bottom + 27) + '" stroke="' + s.color + '" stroke-width="2"' + (s.dashed ? ' stroke-dasharray="5,3"' : '') + '/>' +
        '<text x="' + (lx + 22) + '" y="' + (bottom + 31) + '" font-size="10">' + esc(s.label) + '</text>';
    }).join('');
    var height = bottom + (series.length > 1 ? 38 : 18);
    if (series.length > 1) parts.push(legend);
    return '<svg xmlns="http://www.w3.org/2000/svg" data-panel="' + panel.id + '" width="' + w + '" height="' + height + '" viewBox="0 0 ' + w + ' ' + height + '">' +
      '<line class="cursor" x1="-10" x2="-10" y1="' + top + '" y2="' + bottom + '" stroke="#555" stroke-width="0.8"/>' + parts.join('') + '</svg>';
  }

  function render() {
    var w = width();
    chart.innerHTML = panels.map(function (p) { return panelSvg(p, w, true); }).join('');
    document.getElementById('range').textContent = when(view.t0) + ' to ' + when(view.t1) + ' (' + span(view.t1 - view.t0) + ')';
    chart.querySelectorAll('svg[data-panel]').forEach(attach);
  }
  function span(s) { return s >= DAY ? (s / DAY).toFixed(1) + ' days' : (s / HOUR).toFixed(1) + ' hours'; }

  function setView(t0, t1) {
    var len = Math.max(HOUR, Math.min(duration, t1 - t0));
    t0 = Math.max(0, Math.min(duration - len, t0));
    view = { t0: t0, t1: t0 + len };
    render();
  }
  function zoom(factor, center) {
    var c = center === undefined ? (view.t0 + view.t1) / 2 : center;
    var len = (view.t1 - view.t0) * factor;
    len = Math.max(HOUR, Math.min(duration, len));
    setView(c - (c - view.t0) * (len / (view.t1 - view.t0)), c - (c - view.t0) * (len / (view.t1 - view.t0)) + len);
  }
  function pan(fraction) { var len = view.t1 - view.t0; setView(view.t0 + len * fraction, view.t1 + len * fraction); }

  function valueAt(p, column, t) {
    var at = p.at;
    var lo = 0;
    var hi = at.length - 1;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (at[mid] <= t) lo = mid; else hi = mid - 1; }
    return p[column] ? p[column][lo] : undefined;
  }
  function readout(t) {
    var parts = [when(t) + ': demand ' + fmt(valueAt(ours, 'demand', t))];
    data.policies.forEach(function (p) {
      var moves = p.movesPerHour ? ', ' + fmt(valueAt(p, 'movesPerHour', t)) + ' moves/h' : '';
      parts.push(p.name + ' ' + fmt(valueAt(p, 'capacity', t)) + ' slots, ' + fmt(valueAt(p, 'nodes', t)) + ' nodes, utilization ' + fmt(valueAt(p, 'utilization', t)) + ', ' + fmt(valueAt(p, 'unplaced', t)) + ' waiting' + moves);
    });
    document.getElementById('readout').textContent = parts.join(' · ');
  }

  var drag = null;
  function attach(svg) {
    var w = width();
    var local = function (ev) { var r = svg.getBoundingClientRect(); return ((ev.clientX - r.left) * w) / r.width; };
    svg.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      zoom(ev.deltaY < 0 ? 0.7 : 1 / 0.7, tAt(local(ev), w));
    }, { passive: false });
    svg.addEventListener('mousedown', function (ev) { drag = { x: local(ev), t0: view.t0, t1: view.t1 }; svg.classList.add('dragging'); });
    svg.addEventListener('mousemove', function (ev) {
      var px = local(ev);
      if (drag) {
        var dt = ((drag.x - px) / (w - LEFT - RIGHT)) * (drag.t1 - drag.t0);
        drag.moved = true;
        view = { t0: drag.t0, t1: drag.t1 };
        setView(drag.t0 + dt, drag.t1 + dt);
        return;
      }
      if (px < LEFT || px > w - RIGHT) return;
      chart.querySelectorAll('line.cursor').forEach(function (line) { line.setAttribute('x1', px); line.setAttribute('x2', px); });
      readout(tAt(px, w));
    });
    svg.addEventListener('dblclick', function () { setView(0, duration); });
  }
  window.addEventListener('mouseup', function () { drag = null; });
  document.getElementById('controls').addEventListener('click', function (ev) {
    var act = ev.target && ev.target.getAttribute('data-act');
    if (act === 'in') zoom(0.5);
    if (act === 'out') zoom(2);
    if (act === 'left') pan(-0.5);
    if (act === 'right') pan(0.5);
    if (act === 'all') setView(0, duration);
  });
  window.addEventListener('resize', render);
  window.nodescalerReport = {
    view: function () { return { t0: view.t0, t1: view.t1 }; },
    setView: setView,
    zoom: zoom,
    duration: duration,
  };
  render();
})();
