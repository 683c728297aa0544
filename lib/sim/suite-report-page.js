// The script of out/suite.html (inlined by lib/sim/suite-report.ts): draws the
// node-hours / moves scatter from the embedded JSON, the policy toggles and
// the trace picker. Plain browser JavaScript, no dependency;
// window.nodescalerSuite lets a test drive and inspect it.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('suite-data').textContent);
  var SVG = 'http://www.w3.org/2000/svg';
  var W = 860, H = 470, LEFT = 58, RIGHT = 16, TOP = 14, BAND = 26, BOTTOM = 40;
  var plotBottom = H - BOTTOM - BAND;
  var colors = {};
  data.policies.forEach(function (p) { colors[p.name] = p.color; });
  var hidden = {};
  var picked = '';

  // Static-peak runs at 2.5 x clairvoyant-4h on a bursty trace: the axis stops at X_SHOWN so the goal's neighbourhood
  // keeps its width, and a mark beyond it sits on the right edge, hollow (its figures on hover).
  var X_SHOWN = 1.6;
  var xs = data.points.map(function (p) { return Math.min(p.nodeHoursRatio, X_SHOWN); }).concat([0.9, data.goal.nodeHours + 0.05]);
  var x0 = Math.min.apply(null, xs) - 0.03;
  var x1 = Math.max.apply(null, xs) + 0.03;
  var logs = data.points.filter(function (p) { return p.movesRatio > 0; }).map(function (p) { return Math.log10(p.movesRatio); }).concat([-1, 1]);
  var y0 = Math.floor(Math.min.apply(null, logs));
  var y1 = Math.ceil(Math.max.apply(null, logs));
  function sx(v) { return LEFT + ((v - x0) / (x1 - x0)) * (W - LEFT - RIGHT); }
  function sy(ratio) {
    if (!(ratio > 0)) return plotBottom + BAND / 2 + 4;
    return TOP + ((y1 - Math.log10(ratio)) / (y1 - y0)) * (plotBottom - TOP);
  }
  function el(name, attrs, text) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function fmt(v, digits) { return v.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits }); }
  function describe(p) {
    var moves = p.movesRatio === null ? p.moves + ' (clairvoyant-4h moved none)' : fmt(p.movesRatio, 2) + ' x (' + fmt(p.moves, 0) + ')';
    return p.trace + ', ' + p.policy + ': node-hours ' + fmt(p.nodeHoursRatio, 3) + ' x clairvoyant-4h (' + fmt(p.nodeHours, 0) + '), moves ' + moves +
      ', unplaced ' + (p.unplacedShare * 100).toFixed(3) + ' %, waiting ' + fmt(p.waitingGearMinutes, 0) + ' gear-min';
  }

  var svg = el('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'node-hours against gear moves, per trace and policy', 'data-chart': 'suite' });
  // The goal box: within 1.05 x node-hours and 1.5 x moves (the bottom row, no moves, is within it too).
  svg.appendChild(el('rect', { x: sx(x0), y: sy(data.goal.moves), width: sx(data.goal.nodeHours) - sx(x0), height: plotBottom + BAND - sy(data.goal.moves), fill: '#2ca02c', 'fill-opacity': 0.09, 'data-goal': 'box' }));
  for (var d = y0; d <= y1; d++) {
    var y = sy(Math.pow(10, d));
    svg.appendChild(el('line', { x1: LEFT, x2: W - RIGHT, y1: y, y2: y, stroke: '#eee' }));
    svg.appendChild(el('text', { x: LEFT - 6, y: y + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#555' }, Math.pow(10, d) + ' x'));
  }
  svg.appendChild(el('line', { x1: LEFT, x2: W - RIGHT, y1: plotBottom, y2: plotBottom, stroke: '#ccc' }));
  svg.appendChild(el('text', { x: LEFT - 6, y: plotBottom + BAND / 2 + 8, 'text-anchor': 'end', 'font-size': 11, fill: '#555' }, 'none'));
  var step = x1 - x0 > 1 ? 0.2 : 0.1;
  for (var t = Math.ceil(x0 / step) * step; t <= x1 + 1e-9; t += step) {
    var x = sx(t);
    svg.appendChild(el('line', { x1: x, x2: x, y1: TOP, y2: plotBottom + BAND, stroke: '#f1f1f1' }));
    svg.appendChild(el('text', { x: x, y: plotBottom + BAND + 14, 'text-anchor': 'middle', 'font-size': 11, fill: '#555' }, t.toFixed(1)));
  }
  svg.appendChild(el('line', { x1: sx(data.goal.nodeHours), x2: sx(data.goal.nodeHours), y1: TOP, y2: plotBottom + BAND, stroke: '#2ca02c', 'stroke-dasharray': '5 3', 'data-goal': 'node-hours' }));
  svg.appendChild(el('line', { x1: LEFT, x2: W - RIGHT, y1: sy(data.goal.moves), y2: sy(data.goal.moves), stroke: '#2ca02c', 'stroke-dasharray': '5 3', 'data-goal': 'moves' }));
  svg.appendChild(el('text', { x: sx(data.goal.nodeHours) + 4, y: TOP + 10, 'font-size': 11, fill: '#2ca02c' }, data.goal.nodeHours + ' x node-hours'));
  svg.appendChild(el('text', { x: W - RIGHT - 4, y: sy(data.goal.moves) - 4, 'text-anchor': 'end', 'font-size': 11, fill: '#2ca02c' }, data.goal.moves + ' x moves'));
  var beyondAny = data.points.some(function (p) { return p.nodeHoursRatio > X_SHOWN; });
  svg.appendChild(el('text', { x: (LEFT + W - RIGHT) / 2, y: H - 6, 'text-anchor': 'middle', 'font-size': 12, fill: '#333' }, 'node-hours, x clairvoyant-4h' + (beyondAny ? ' (hollow on the right edge: beyond ' + X_SHOWN + ' x)' : '')));
  svg.appendChild(el('text', { x: 12, y: (TOP + plotBottom) / 2, 'font-size': 12, fill: '#333', transform: 'rotate(-90 12 ' + (TOP + plotBottom) / 2 + ')', 'text-anchor': 'middle' }, 'gear moves, x clairvoyant-4h'));

  var readout = document.getElementById('readout');
  var marks = [];
  // nodescaler last, so its marks sit on top.
  data.points.slice().sort(function (a, b) { return (a.policy === 'nodescaler') - (b.policy === 'nodescaler'); }).forEach(function (p) {
    var ours = p.policy === 'nodescaler';
    var beyond = p.nodeHoursRatio > X_SHOWN;
    var color = colors[p.policy] || '#888';
    var mark = el('circle', {
      cx: sx(Math.min(p.nodeHoursRatio, X_SHOWN)), cy: sy(p.movesRatio), r: ours ? 6 : 4,
      fill: beyond ? '#fff' : color, 'fill-opacity': 0.85, stroke: ours ? '#000' : beyond ? color : 'none', 'stroke-width': beyond ? 2 : 1,
      'data-policy': p.policy, 'data-trace': p.trace, 'data-beyond': beyond ? 'true' : 'false',
    });
    mark.appendChild(el('title', {}, describe(p)));
    mark.addEventListener('mouseenter', function () { readout.textContent = describe(p); });
    svg.appendChild(mark);
    marks.push(mark);
  });
  document.getElementById('chart').appendChild(svg);

  function refresh() {
    marks.forEach(function (mark) {
      mark.style.display = hidden[mark.getAttribute('data-policy')] ? 'none' : '';
      mark.setAttribute('opacity', !picked || mark.getAttribute('data-trace') === picked ? 1 : 0.12);
    });
    Array.prototype.forEach.call(document.querySelectorAll('#goal-table tbody tr'), function (row) {
      row.style.background = picked && row.getAttribute('data-trace') === picked ? '#fff7d6' : '';
    });
  }

  var legend = document.getElementById('legend');
  data.policies.forEach(function (p) {
    var label = document.createElement('label');
    var box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = true;
    box.setAttribute('data-policy', p.name);
    box.addEventListener('change', function () { hidden[p.name] = !box.checked; refresh(); });
    var swatch = document.createElement('span');
    swatch.className = 'swatch';
    swatch.style.background = p.color;
    label.appendChild(box);
    label.appendChild(swatch);
    label.appendChild(document.createTextNode(p.name));
    legend.appendChild(label);
  });
  var select = document.createElement('select');
  select.id = 'trace-pick';
  [''].concat(data.traces).forEach(function (name) {
    var option = document.createElement('option');
    option.value = name;
    option.textContent = name || 'all traces';
    select.appendChild(option);
  });
  select.addEventListener('change', function () { picked = select.value; refresh(); });
  legend.appendChild(select);

  window.nodescalerSuite = {
    marks: function () { return marks.length; },
    visible: function (policy) { return marks.filter(function (m) { return m.getAttribute('data-policy') === policy && m.style.display !== 'none'; }).length; },
    picked: function () { return picked; },
  };
})();
