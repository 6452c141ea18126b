// Small SVG charts drawn by hand (no library): step lines over time, a shaded tolerance band,
// test markers and step boundaries; and a state timeline (one row per model version).

import { fmtTime, h, s } from './dom.js';

const W = 560;
const H = 230;
const PAD = { left: 62, right: 14, top: 26, bottom: 34 };

function extent(values) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (v === null || v === undefined || !isFinite(v)) continue;
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  return lo === Infinity ? null : [lo, hi];
}

function clock(t) {
  return new Date(t).toISOString().substring(11, 19);
}

/** Path of a step function through points [{x, y}], held to xEnd. */
function stepPath(points, xEnd) {
  if (points.length === 0) return '';
  let d = 'M' + points[0].x.toFixed(1) + ',' + points[0].y.toFixed(1);
  for (let i = 1; i < points.length; i++) {
    d += ' H' + points[i].x.toFixed(1) + ' V' + points[i].y.toFixed(1);
  }
  return d + ' H' + xEnd.toFixed(1);
}

/**
 * A chart of values over time.
 * @param opts.series [{name, cls, points: [{t, v}]}] drawn as step lines (a single point: a flat line)
 * @param opts.band [{t, lo, hi}] a step band (the tolerance zone), shaded
 * @param opts.markers [{t, v, cls, label}] dots (e.g. the values a test used)
 * @param opts.vlines [{t, label}] vertical rules (e.g. rollout steps)
 * @param opts.fmt value formatter for the axis
 */
export function lineChart(opts) {
  const { title, fmt, series = [], band = [], markers = [], vlines = [], note, bounds } = opts;
  const times = [];
  const values = [];
  for (const sr of series) for (const p of sr.points) { times.push(p.t); values.push(p.v); }
  for (const b of band) { times.push(b.t); values.push(b.lo, b.hi); }
  for (const m of markers) { times.push(m.t); values.push(m.v); }
  for (const v of vlines) times.push(v.t);
  const svg = s('svg', {
    class: 'chart', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': title,
  });
  svg.append(s('text', { x: PAD.left, y: 16, class: 'chart-title' }, title));
  const yr = extent(values);
  const tr = extent(times);
  if (!yr || !tr) {
    svg.append(s('text', { x: W / 2, y: H / 2, class: 'chart-empty', 'text-anchor': 'middle' }, 'no observations yet'));
    return svg;
  }
  let [y0, y1] = yr;
  const span = y1 - y0 || Math.abs(y1) * 0.1 || 0.1;
  y0 -= span * 0.15;
  y1 += span * 0.15;
  if (bounds) {
    // e.g. a rate: never draw the axis beyond [0, 1]
    y0 = Math.max(bounds[0], y0);
    y1 = Math.min(bounds[1], y1);
  }
  let [t0, t1] = tr;
  if (t1 - t0 < 1000) { t0 -= 30000; t1 += 30000; }
  const px = (t) => PAD.left + ((t - t0) / (t1 - t0)) * (W - PAD.left - PAD.right);
  const py = (v) => H - PAD.bottom - ((v - y0) / (y1 - y0)) * (H - PAD.top - PAD.bottom);
  const xEnd = W - PAD.right;

  // Axes and grid.
  const grid = s('g', { class: 'grid-lines' });
  for (let i = 0; i <= 4; i++) {
    const v = y0 + ((y1 - y0) * i) / 4;
    grid.append(s('line', { x1: PAD.left, x2: xEnd, y1: py(v), y2: py(v) }));
    grid.append(s('text', { x: PAD.left - 6, y: py(v) + 4, 'text-anchor': 'end', class: 'axis-label' }, fmt(v)));
  }
  grid.append(s('text', { x: PAD.left, y: H - 10, class: 'axis-label' }, clock(t0)));
  grid.append(s('text', { x: xEnd, y: H - 10, 'text-anchor': 'end', class: 'axis-label' }, clock(t1) + ' UTC'));
  svg.append(grid);

  // Tolerance band: a polygon along the upper edge forward and the lower edge back.
  if (band.length) {
    const sorted = [...band].sort((a, b) => a.t - b.t);
    const upper = [];
    const lower = [];
    sorted.forEach((b, i) => {
      const xa = sorted.length === 1 ? PAD.left : px(b.t);
      const xb = i + 1 < sorted.length ? px(sorted[i + 1].t) : xEnd;
      upper.push([xa, py(b.hi)], [xb, py(b.hi)]);
      lower.push([xa, py(b.lo)], [xb, py(b.lo)]);
    });
    const pts = [...upper, ...lower.reverse()].map(([x, y]) => x.toFixed(1) + ',' + y.toFixed(1)).join(' ');
    svg.append(s('polygon', { class: 'band', points: pts }, s('title', null, 'tolerance band')));
  }
  for (const v of vlines) {
    svg.append(s('line', { class: 'vline', x1: px(v.t), x2: px(v.t), y1: PAD.top, y2: H - PAD.bottom }));
    const nearEnd = px(v.t) > xEnd - 70;
    svg.append(s('text', {
      class: 'vline-label', x: px(v.t) + (nearEnd ? -3 : 3), y: PAD.top + 10, 'text-anchor': nearEnd ? 'end' : 'start',
    }, v.label));
  }
  for (const sr of series) {
    const pts = [...sr.points].sort((a, b) => a.t - b.t).map((p) => ({ x: sr.points.length === 1 ? PAD.left : px(p.t), y: py(p.v) }));
    if (pts.length === 0) continue;
    svg.append(s('path', { class: 'series ' + sr.cls, d: stepPath(pts, xEnd) }, s('title', null, sr.name)));
    const last = sr.points[sr.points.length - 1];
    svg.append(s('circle', { class: 'dot ' + sr.cls, cx: pts[pts.length - 1].x, cy: py(last.v), r: 3 },
      s('title', null, sr.name + ' ' + fmt(last.v) + ' at ' + fmtTime(last.t))));
  }
  for (const m of markers) {
    const x = px(m.t);
    const y = py(m.v);
    svg.append(s('path', { class: 'marker ' + (m.cls || ''), d: `M${x},${y - 5} L${x + 5},${y} L${x},${y + 5} L${x - 5},${y} Z` },
      s('title', null, m.label)));
  }
  if (note) svg.append(s('text', { x: xEnd, y: 16, 'text-anchor': 'end', class: 'axis-label' }, note));
  return svg;
}

/** Legend entries [{cls, name}] under a chart. */
export function legend(entries) {
  return h('div', { class: 'legend' }, entries.map((e) => h('span', { class: 'legend-item' },
    h('span', { class: 'swatch ' + e.cls }), e.name)));
}

/**
 * A state timeline: one row per version, one coloured segment per state from its `at` to the next
 * (the last to `now`).
 * @param rows [{label, entries: [{state, at, reason}]}]
 */
export function stateTimeline(rows, now = Date.now()) {
  const rowH = 26;
  const left = 90;
  const width = 760;
  const height = rows.length * rowH + 30;
  const times = rows.flatMap((r) => r.entries.map((e) => new Date(e.at).getTime())).filter(isFinite);
  const svg = s('svg', { class: 'timeline-chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': 'state timeline' });
  if (!times.length) return svg;
  let t0 = Math.min(...times);
  let t1 = Math.max(now, ...times);
  if (t1 - t0 < 1000) t1 = t0 + 1000;
  const px = (t) => left + ((t - t0) / (t1 - t0)) * (width - left - 10);
  rows.forEach((r, i) => {
    const y = 6 + i * rowH;
    svg.append(s('text', { x: left - 8, y: y + 15, 'text-anchor': 'end', class: 'axis-label' }, r.label));
    r.entries.forEach((e, j) => {
      const a = new Date(e.at).getTime();
      const b = j + 1 < r.entries.length ? new Date(r.entries[j + 1].at).getTime() : t1;
      const x = px(a);
      const w = Math.max(2, px(b) - x);
      const g = s('g', { class: 'segment state-' + String(e.state).toLowerCase() });
      g.append(s('rect', { x, y, width: w, height: rowH - 6, rx: 2 },
        s('title', null, e.state + (e.ratio !== null && e.ratio !== undefined ? ' ' + Math.round(e.ratio * 1000) / 10 + '%' : '')
          + ' from ' + fmtTime(e.at) + (e.reason ? ' — ' + e.reason : ''))));
      if (w > 60) g.append(s('text', { x: x + 4, y: y + 14, class: 'segment-label' }, e.state));
      svg.append(g);
    });
  });
  svg.append(s('text', { x: left, y: height - 6, class: 'axis-label' }, fmtTime(t0)));
  svg.append(s('text', { x: width - 10, y: height - 6, 'text-anchor': 'end', class: 'axis-label' }, fmtTime(t1)));
  return svg;
}
