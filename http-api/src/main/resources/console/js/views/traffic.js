// Per-version figures of this node's inference gateway (GET /v1/models/{agentId}/traffic).
import { describeError, getOptional } from '../api.js';
import { fmtPct, h, notice, table } from '../dom.js';

function ms(q) {
  if (!q) return '—';
  const part = (k) => (q[k] === null || q[k] === undefined ? '—' : '≤' + q[k]);
  return part('p50') + ' / ' + part('p95') + ' / ' + part('p99');
}

/** A table of calls, errors, tokens and latency per version; null-safe when the gateway is off. */
export async function trafficSection(ctx, agentId) {
  const out = [h('h2', null, 'Gateway traffic (this node, since it started)')];
  let t;
  try {
    t = await getOptional('/v1/models/' + encodeURIComponent(agentId) + '/traffic');
  } catch (e) {
    ctx.problems.push(describeError(e, 'the gateway traffic'));
    return out;
  }
  if (!t || !(t.versions || []).length) {
    out.push(notice('info', 'No call of this agent went through this node\'s inference gateway yet.'));
    return out;
  }
  const rows = t.versions.map((v) => h('tr', { 'data-traffic-version': v.version },
    h('td', null, h('strong', null, v.version)),
    h('td', { class: 'num', 'data-field': 'calls' }, String(v.calls)),
    h('td', { class: 'num', 'data-field': 'errors' }, String(v.errors) + (v.errorRate !== null ? ' (' + fmtPct(v.errorRate) + ')' : '')),
    h('td', { class: 'num' }, String(v.fallbacks)),
    h('td', { class: 'num' }, String(v.aborted)),
    h('td', { class: 'num' }, String(v.promptTokens) + ' / ' + String(v.completionTokens)),
    h('td', { class: 'num' }, ms(v.latencyMs)),
    h('td', { class: 'num' }, ms(v.firstTokenMs))));
  out.push(table(['Version', 'Calls', 'Errors', 'Fallbacks', 'Aborted', 'Tokens in / out', 'Latency ms p50/p95/p99', 'First token ms'], rows,
    { class: 'grid traffic' }));
  const added = t.addedLatencyMs || {};
  out.push(h('p', { class: 'muted' }, 'Latency the gateway adds (ms, p50/p95/p99): non-streaming ' + ms(added.whole)
    + ' · streaming ' + ms(added.stream) + '. Bucket upper bounds.'));
  return out;
}
