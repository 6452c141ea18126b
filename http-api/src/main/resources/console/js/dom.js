// DOM helpers. Data from the API only ever becomes text nodes or attribute values (never HTML).

const SVG_NS = 'http://www.w3.org/2000/svg';

function apply(el, attrs, children, isSvg) {
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'text') el.textContent = String(v);
      else if (k === 'class') el.setAttribute('class', v);
      else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.substring(2), v);
      else if (k === 'open' && !isSvg) el.open = !!v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** An HTML element: h('a', {href: '#/x', class: 'k'}, 'text', child…). */
export function h(tag, attrs, ...children) {
  return apply(document.createElement(tag), attrs, children, false);
}

/** An SVG element, same form as h. */
export function s(tag, attrs, ...children) {
  return apply(document.createElementNS(SVG_NS, tag), attrs, children, true);
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

/** `2025-03-01 14:02:07Z`, or '—'. */
export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (isNaN(d.getTime())) return String(iso);
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** `3m 20s`, `1h 5m`, `2d 4h`. */
export function fmtDuration(ms) {
  if (ms === null || ms === undefined || !isFinite(ms)) return '—';
  const neg = ms < 0;
  let sec = Math.round(Math.abs(ms) / 1000);
  let out;
  if (sec < 60) out = sec + 's';
  else if (sec < 3600) out = Math.floor(sec / 60) + 'm ' + (sec % 60) + 's';
  else if (sec < 86400) out = Math.floor(sec / 3600) + 'h ' + Math.floor((sec % 3600) / 60) + 'm';
  else out = Math.floor(sec / 86400) + 'd ' + Math.floor((sec % 86400) / 3600) + 'h';
  return neg ? '-' + out : out;
}

/** "in 3h 5m" / "2m 10s ago". */
export function fmtRelative(iso) {
  if (!iso) return '';
  const t = new Date(iso).getTime();
  if (isNaN(t)) return '';
  const d = t - Date.now();
  return d >= 0 ? 'in ' + fmtDuration(d) : fmtDuration(-d) + ' ago';
}

/** A ratio 0..1 as a percentage: 0.05 → "5%", 0.125 → "12.5%". */
export function fmtPct(ratio) {
  if (ratio === null || ratio === undefined || !isFinite(ratio)) return '—';
  const p = Math.round(ratio * 1000) / 10;
  return p + '%';
}

/** A number with at most `digits` decimals, trailing zeros dropped. */
export function fmtNum(v, digits = 3) {
  if (v === null || v === undefined || !isFinite(v)) return '—';
  return String(Number(Number(v).toFixed(digits)));
}

/**
 * A p-value or test level: four decimals, and below 0.001 two significant digits with an exponent
 * (2.4e-18, 1.2e-4), as the audit's text timeline gives two; four decimals made a clear rollback's p read 0.
 */
export function fmtP(v) {
  if (v === null || v === undefined || !isFinite(v)) return '—';
  const n = Number(v);
  return n > 0 && n < 1e-3 ? n.toExponential(1) : fmtNum(n, 4);
}

export function badge(state) {
  const st = String(state || 'UNKNOWN');
  return h('span', { class: 'badge badge-' + st.toLowerCase().replace(/[^a-z_]/g, ''), text: st });
}

export function link(href, text) {
  return h('a', { href }, text);
}

export function hashPath(...segments) {
  return '#/' + segments.map(encodeURIComponent).join('/');
}

/** A folded JSON document. */
export function jsonDetails(summary, value, key) {
  return h('details', { class: 'json', 'data-key': key || null },
    h('summary', null, summary),
    h('pre', null, JSON.stringify(value, null, 2)));
}

export function notice(kind, text) {
  return h('p', { class: 'notice notice-' + kind, role: kind === 'error' ? 'alert' : null }, text);
}

export function table(headers, rows, attrs) {
  return h('table', attrs || { class: 'grid' },
    h('thead', null, h('tr', null, headers.map((x) => h('th', null, x)))),
    h('tbody', null, rows));
}
