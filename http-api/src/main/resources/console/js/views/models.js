// Model versions of one agent: versions table, state timeline, canary-vs-stable charts per
// evaluation metric with the tolerance band, and why a version was rolled back.

import { ApiError, describeError, eventType, getAudit, getJson } from '../api.js';
import { knownAgents } from '../agents-store.js';
import { legend, lineChart, stateTimeline } from '../charts.js';
import { badge, fmtNum, fmtP, fmtPct, fmtTime, h, hashPath, jsonDetails, link, notice, table } from '../dom.js';
import { trafficSection } from './traffic.js';
import { stateBadge, stateLegend } from '../version-states.js';

/** The evaluation metrics (design §3.3), with the defaults of reference.conf's tolerances. */
export const METRICS = [
  {
    key: 'task-success-rate', field: 'taskSuccessRate', samples: 'taskSuccessSamples', title: 'Task success rate',
    higher: true, relative: false, defaultTolerance: 0.02, fmt: (v) => fmtNum(v, 3), bounds: [0, 1],
  },
  {
    key: 'user-satisfaction', field: 'userSatisfaction', samples: 'userSatisfactionSamples', title: 'User satisfaction (0–1)',
    higher: true, relative: false, defaultTolerance: 0.05, fmt: (v) => fmtNum(v, 3), bounds: [0, 1],
  },
  {
    key: 'response-latency', field: 'responseLatencyP95Ms', samples: 'responseLatencySamples', title: 'Response latency p95 (ms)',
    // A latency is never below 0 ms: without a bound the axis padding drew labels like "-38 ms".
    higher: false, relative: true, defaultTolerance: 0.10, fmt: (v) => fmtNum(v, 0) + ' ms', bounds: [0, Infinity],
  },
];

function metricOf(key) {
  return METRICS.find((m) => m.key === key || m.key.replace(/-/g, '_').toUpperCase() === key);
}

/**
 * The guardrails (issue #19): tested with the metrics, in the same error budget, from the
 * inference gateway's figures; shown in the tests of a decision only (no chart of their own).
 */
export const GUARDRAILS = [
  { key: 'upstream-error-rate', title: 'Upstream error rate (guardrail)', relative: false, fmt: (v) => fmtNum(v, 3) },
  { key: 'tokens-per-session', title: 'Tokens per session (guardrail)', relative: true, fmt: (v) => fmtNum(v, 0) },
];

function testMetricOf(key) {
  return metricOf(key) || GUARDRAILS.find((m) => m.key === key);
}

/** The candidate value at the edge of the tolerance (as CanaryStatistics computes it). */
export function limit(m, stable, tolerance) {
  if (m.relative) return stable * (1 + tolerance);
  return m.higher ? stable - tolerance : stable + tolerance;
}

function toleranceText(m, tol, fromTests) {
  const t = m.relative ? fmtPct(tol) + ' slower' : '±' + fmtNum(tol, 3);
  return t + (fromTests ? '' : ' (default)');
}

const time = (e) => new Date(e.at || (e.event && e.event.at)).getTime();

/** Per-version running aggregates of OutcomeRecorded and OutcomeRevised events, as OutcomeAggregates does. */
class Running {
  constructor() { this.known = 0; this.ok = 0; this.satN = 0; this.satSum = 0; this.lat = []; }

  add(o) {
    if (o.success !== null && o.success !== undefined) { this.known++; if (o.success) this.ok++; }
    let sum = 0;
    let parts = 0;
    if (o.rating !== null && o.rating !== undefined) { sum += (o.rating - 1) / 4; parts++; }
    const up = o.thumbsUp || 0;
    const down = o.thumbsDown || 0;
    if (up + down > 0) { sum += up / (up + down); parts++; }
    if (parts) { this.satN++; this.satSum += sum / parts; }
    if (o.latencyP95Ms !== null && o.latencyP95Ms !== undefined) this.lat.push(o.latencyP95Ms);
  }

  value(m) {
    switch (m.key) {
      case 'task-success-rate': return this.known ? this.ok / this.known : null;
      case 'user-satisfaction': return this.satN ? this.satSum / this.satN : null;
      default: {
        if (!this.lat.length) return null;
        const sorted = [...this.lat].sort((a, b) => a - b);
        return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)];
      }
    }
  }
}

/**
 * Rollouts reconstructed from the model's audit trail: candidate, stable, steps, the tests at each
 * decision, and per-step running metric series of both versions from their outcomes (recorded, revised).
 */
export function rolloutsFromAudit(events) {
  const rollouts = [];
  let cur = null;
  let agg = null;
  const tolerances = {};
  for (const e of events) {
    const type = eventType(e);
    const ev = e.event || {};
    const t = time(e);
    for (const test of ev.tests || []) {
      const m = metricOf(test.metric);
      if (m && isFinite(test.tolerance)) tolerances[m.key] = test.tolerance;
    }
    if (type === 'RolloutStarted') {
      cur = {
        candidate: ev.version, stable: ev.stableVersion, plan: ev.plan || [], start: t, end: null, outcome: 'IN PROGRESS',
        steps: [{ t, ratio: (ev.plan || [])[0] }], decisions: [], series: {},
      };
      for (const m of METRICS) cur.series[m.key] = { candidate: [], stable: [] };
      agg = { candidate: new Running(), stable: new Running() };
      rollouts.push(cur);
      continue;
    }
    if (!cur || cur.end !== null) continue;
    if (type === 'OutcomeRecorded' || type === 'OutcomeRevised') {
      // A revision is feedback that came after the session's result (the usual order for a rating):
      // the node counts it as that session's satisfaction, so the chart does too.
      const who = ev.modelVersion === cur.candidate ? 'candidate' : ev.modelVersion === cur.stable ? 'stable' : null;
      if (!who) continue;
      agg[who].add(ev);
      for (const m of type === 'OutcomeRevised' ? METRICS.filter((x) => x.key === 'user-satisfaction') : METRICS) {
        const v = agg[who].value(m);
        if (v !== null) cur.series[m.key][who].push({ t, v });
      }
    } else if (type === 'StepAdvanced' && ev.version === cur.candidate) {
      cur.decisions.push({ t, type, tests: ev.tests || [] });
      cur.steps.push({ t, ratio: ev.ratio });
      agg = { candidate: new Running(), stable: new Running() }; // each step is measured afresh
    } else if (type === 'RolloutPaused' && ev.version === cur.candidate) {
      cur.decisions.push({ t, type, tests: ev.tests || [], reason: ev.reason });
    } else if (type === 'VersionPromoted' && ev.version === cur.candidate) {
      cur.decisions.push({ t, type, tests: ev.tests || [], reason: ev.reason });
      cur.end = t;
      cur.outcome = 'PROMOTED';
    } else if (type === 'VersionRolledBack' && ev.version === cur.candidate) {
      cur.decisions.push({ t, type, tests: ev.tests || [], reason: ev.reason });
      cur.end = t;
      cur.outcome = 'ROLLED_BACK';
    }
  }
  return { rollouts, tolerances };
}

/** Three charts (one per metric) for a rollout from the audit trail. */
function rolloutCharts(r, tolerances) {
  const charts = METRICS.map((m) => {
    const sr = r.series[m.key];
    const tol = tolerances[m.key] ?? m.defaultTolerance;
    const band = sr.stable.map((p) => {
      const edge = limit(m, p.v, tol);
      return { t: p.t, lo: Math.min(p.v, edge), hi: Math.max(p.v, edge) };
    });
    const markers = [];
    for (const d of r.decisions) {
      for (const test of d.tests) {
        if (metricOf(test.metric) !== m) continue;
        markers.push({
          t: d.t, v: test.candidateValue, cls: test.degraded ? 'degraded' : 'passed',
          label: d.type + ': ' + (test.summary || ('candidate ' + m.fmt(test.candidateValue) + ' vs stable ' + m.fmt(test.stableValue))),
        });
      }
    }
    const vlines = r.steps.slice(1).map((st) => ({ t: st.t, label: fmtPct(st.ratio) }));
    if (r.end) vlines.push({ t: r.end, label: r.outcome === 'ROLLED_BACK' ? 'rolled back' : r.outcome.toLowerCase() });
    return h('figure', { class: 'chart-box', 'data-metric': m.key },
      lineChart({
        title: m.title, fmt: m.fmt, bounds: m.bounds, band, markers, vlines,
        note: 'tolerance ' + toleranceText(m, tol, tolerances[m.key] !== undefined),
        series: [
          { name: 'stable ' + r.stable, cls: 'stable', points: sr.stable },
          { name: 'candidate ' + r.candidate, cls: 'candidate', points: sr.candidate },
        ],
      }));
  });
  return h('div', { class: 'charts' }, charts);
}

/** Charts from the live view only: one snapshot per version (no audit trail available). */
function snapshotCharts(candidate, stable, which) {
  const now = Date.now();
  const summary = (v) => (v && v.metrics ? (v.metrics[which] || v.metrics.online) : null);
  const c = summary(candidate);
  const st = summary(stable);
  const charts = METRICS.map((m) => {
    const cv = c ? c[m.field] : null;
    const sv = st ? st[m.field] : null;
    const band = sv !== null && sv !== undefined
      ? [{ t: now, lo: Math.min(sv, limit(m, sv, m.defaultTolerance)), hi: Math.max(sv, limit(m, sv, m.defaultTolerance)) }] : [];
    return h('figure', { class: 'chart-box', 'data-metric': m.key },
      lineChart({
        title: m.title, fmt: m.fmt, bounds: m.bounds, band,
        note: 'snapshot · tolerance ' + toleranceText(m, m.defaultTolerance, false),
        series: [
          { name: 'stable ' + (stable ? stable.version : ''), cls: 'stable', points: sv === null || sv === undefined ? [] : [{ t: now, v: sv }] },
          { name: 'candidate ' + candidate.version, cls: 'candidate', points: cv === null || cv === undefined ? [] : [{ t: now, v: cv }] },
        ],
      }),
      h('figcaption', null, 'candidate ' + (cv === null || cv === undefined ? '—' : m.fmt(cv)) + ' (n=' + (c ? c[m.samples] || 0 : 0) + ')'
        + ' · stable ' + (sv === null || sv === undefined ? '—' : m.fmt(sv)) + ' (n=' + (st ? st[m.samples] || 0 : 0) + ')'));
  });
  return h('div', { class: 'charts' }, charts);
}

// A standard error at the test's floor (1e-6) means every session was alike within each version:
// the z it gives (-182321 for equal token counts) is the floor's artefact, not a statistic.
function zText(t) {
  return t.standardError !== undefined && t.standardError !== null && t.standardError <= 1e-6
    ? 'no variance' : fmtNum(t.statistic, 3);
}

function testsTable(tests) {
  if (!tests || !tests.length) return null;
  const rows = tests.map((t) => {
    const m = testMetricOf(t.metric) || { fmt: (v) => fmtNum(v, 4), title: t.metric, relative: t.relativeTolerance };
    return h('tr', { class: t.degraded ? 'degraded' : null, 'data-metric': m.key || t.metric },
      h('td', null, m.title),
      h('td', { class: 'num' }, m.fmt(t.stableValue) + ' (n=' + t.stableSamples + ')'),
      h('td', { class: 'num' }, m.fmt(t.candidateValue) + ' (n=' + t.candidateSamples + ')'),
      h('td', { class: 'num' }, t.relativeTolerance ? fmtPct(t.tolerance) : fmtNum(t.tolerance, 4)),
      h('td', { class: 'num' }, m.fmt(t.threshold)),
      h('td', { class: 'num' }, zText(t) + ' vs ' + fmtNum(t.criticalValue, 3) + ' @' + fmtPct(t.confidence)
        + (t.method === 'msprt' ? ' · always-valid p ' + fmtP(t.pValue) + ' vs α ' + fmtP(t.alpha) + ' · look ' + t.looks : '')),
      h('td', null, t.degraded ? h('strong', null, 'DEGRADED') : 'ok'),
      h('td', { class: 'muted' }, t.summary || ''));
  });
  return table(['Metric', 'Stable', 'Candidate', 'Tolerance', 'Limit', 'z vs critical', 'Verdict', 'Summary'], rows, { class: 'grid tests' });
}

function rollbackExplanation(v, audit) {
  let event = null;
  if (audit) {
    for (const e of audit.events) {
      if (eventType(e) === 'VersionRolledBack' && e.event && e.event.version === v.version) event = e;
    }
  }
  const entry = [...(v.history || [])].reverse().find((x) => x.state === 'ROLLED_BACK');
  const ev = event ? event.event : null;
  const reason = (ev && ev.reason) || (entry && entry.reason) || 'no reason recorded';
  const at = (ev && ev.at) || (event && event.at) || (entry && entry.at);
  return h('section', { class: 'rollback', 'data-version': v.version },
    h('h3', null, 'Why ', h('code', null, v.version), ' was rolled back'),
    h('p', { class: 'rollback-reason', 'data-field': 'rollback-reason' }, reason),
    h('p', { class: 'muted' },
      (ev ? (ev.automatic ? 'Automatic rollback' : 'Manual rollback') : 'Rolled back') + ' at ' + fmtTime(at)
      + (ev && ev.restoredStable ? ' · restored stable ' + ev.restoredStable : '')),
    ev ? testsTable(ev.tests) : null,
    !ev ? h('p', { class: 'muted' }, audit
      ? 'No VersionRolledBack event found in the audit trail; the reason comes from the version history.'
      : 'The test figures come from the audit trail (GET /v1/audit/model/…), which this node does not answer yet; the reason comes from the version history.') : null);
}

function versionsTable(agentId, models) {
  const rows = (models.versions || []).map((v) => {
    const online = v.metrics && v.metrics.online;
    return h('tr', { 'data-version': v.version },
      h('td', null, h('strong', null, v.version), v.version === models.stable ? h('span', { class: 'muted' }, ' (stable)') : null),
      h('td', { 'data-field': 'state' }, stateBadge(v.state)),
      h('td', { class: 'num', 'data-field': 'ratio' }, fmtPct(v.ratio)),
      h('td', null, fmtTime(v.registeredAt)),
      h('td', null, v.sourceJobId ? link(hashPath('jobs', v.sourceJobId), v.sourceJobId) : (v.manual ? 'by hand' : '—')),
      h('td', { class: 'num' }, online ? String(online.sessions) : '0'),
      h('td', null, METRICS.map((m) => online && online[m.field] !== null && online[m.field] !== undefined
        ? h('div', { class: 'metric-line' }, m.title.split(' (')[0] + ': ' + m.fmt(online[m.field])) : null)),
      h('td', { class: 'small', 'data-field': 'serving' }, h('code', null, v.artifact || ''), h('br'), servingOf(v)));
  });
  return table(['Version', 'State', 'Ratio', 'Registered', 'Source', 'Sessions', 'Online metrics', 'Artifact / served'], rows);
}

/**
 * Where the gateway sends the version's traffic: its deployment (the model server's endpoint and the
 * served model name, as GET …/route answers them). The registered `endpoint` is shown only for a
 * version without a deployment: a trained version's is its checkpoint URI, and under vllm-lora a
 * hand-registered one's is not called at all.
 */
function servingOf(v) {
  const d = v.deployment;
  if (!d) return h('code', null, v.endpoint || '');
  return h('span', null, h('code', null, d.servedModel || ''), ' at ', h('code', null, d.endpoint || ''),
    h('span', { class: 'muted' }, ' (' + d.backend + ', ' + d.status + ')'));
}

function historyList(v) {
  return h('details', { class: 'history', 'data-key': 'history-' + v.version },
    h('summary', null, v.version + ': ' + (v.history || []).length + ' transitions'),
    h('ol', { class: 'timeline' }, (v.history || []).map((x) => h('li', null,
      stateBadge(x.state), x.ratio !== null && x.ratio !== undefined ? ' ' + fmtPct(x.ratio) : '', ' ',
      h('span', { class: 'muted' }, fmtTime(x.at)), x.reason ? [' — ', x.reason] : null))),
    v.metrics && v.metrics.offline && Object.keys(v.metrics.offline).length
      ? jsonDetails('offline metrics', v.metrics.offline, 'offline-' + v.version) : null);
}

export async function renderModels(ctx, agentId) {
  const out = [h('p', null, link('#/agents', '← agents')), h('h1', null, 'Model versions of ', h('code', null, agentId))];
  let models;
  try {
    models = await getJson('/v1/models/' + encodeURIComponent(agentId));
  } catch (e) {
    out.push(notice(e instanceof ApiError && e.status === 404 ? 'info' : 'error', describeError(e, 'the model versions of ' + agentId)));
    if (!(e instanceof ApiError && e.status === 404)) ctx.problems.push(describeError(e, 'model versions'));
    return out;
  }
  let audit = null;
  try {
    audit = await getAudit('model', agentId);
  } catch (e) {
    ctx.problems.push(describeError(e, 'the model audit trail'));
  }
  const versions = models.versions || [];
  const byName = new Map(versions.map((v) => [v.version, v]));
  const stable = byName.get(models.stable);
  const candidate = models.candidate ? byName.get(models.candidate) : null;
  out.push(h('p', { class: 'summary-line' },
    'Stable: ', h('strong', { 'data-field': 'stable' }, models.stable || 'none'),
    ' · Candidate: ', candidate
      ? h('span', { 'data-field': 'candidate' }, h('strong', null, candidate.version), ' ', stateBadge(candidate.state), ' at ', fmtPct(candidate.ratio))
      : h('span', { 'data-field': 'candidate' }, 'none')));
  out.push(versionsTable(agentId, models));
  out.push(...await trafficSection(ctx, agentId));

  out.push(h('h2', null, 'State timeline'));
  out.push(h('div', { class: 'scroll' }, stateTimeline(versions.map((v) => ({ label: v.version, entries: v.history || [] })))));
  out.push(stateLegend());
  out.push(h('div', { class: 'histories' }, versions.map(historyList)));

  // A job's candidate whose offline gate had no evidence never canaries by itself: say what to do.
  // Only what the API takes now: while another version rolls out or is being deployed, a promote is a
  // 409 (one candidate at a time), so the page names what it waits for instead of the command.
  const noEvidence = versions.filter((v) => v.state === 'NO_EVIDENCE');
  if (noEvidence.length) {
    const busy = candidate || versions.find((v) => v.state === 'DEPLOYING');
    out.push(h('h2', null, 'Waiting for a manual promote'));
    for (const v of noEvidence) {
      const last = (v.history || [])[(v.history || []).length - 1];
      const next = busy
        ? ' — a promote is refused while ' + busy.version + ' is ' + busy.state
          + ' (one candidate at a time): promote it once ' + busy.version + ' is promoted or rolled back'
        : ' — POST /v1/models/' + agentId + '/versions/' + v.version + '/promote';
      out.push(h('p', { 'data-field': 'no-evidence' }, h('strong', null, v.version), ': ',
        last ? last.reason : 'no offline evidence', next));
    }
  }

  const rolledBack = versions.filter((v) => v.state === 'ROLLED_BACK');
  if (rolledBack.length) {
    out.push(h('h2', null, 'Rollbacks'));
    for (const v of rolledBack) out.push(rollbackExplanation(v, audit));
  }

  out.push(h('h2', null, 'Canary vs stable'));
  const chartLegend = legend([
    { cls: 'stable', name: 'stable' }, { cls: 'candidate', name: 'candidate' },
    { cls: 'band', name: 'tolerance band (stable → limit)' }, { cls: 'degraded', name: 'failed test' }, { cls: 'passed', name: 'passed test' }]);
  const fromAudit = audit ? rolloutsFromAudit(audit.events) : null;
  if (fromAudit && fromAudit.rollouts.length) {
    out.push(h('p', { class: 'muted' }, 'From the audit trail: each rollout step is measured afresh (values are cumulative within a step); '
      + 'diamonds are the tests that decided a step.'));
    out.push(chartLegend);
    for (const r of [...fromAudit.rollouts].reverse().slice(0, 5)) {
      out.push(h('section', { class: 'rollout', 'data-candidate': r.candidate },
        h('h3', null, h('code', null, r.candidate), ' vs stable ', h('code', null, r.stable || '—'), ' ', badge(r.outcome.replace(' ', '_')),
          h('span', { class: 'muted' }, ' ' + fmtTime(r.start) + (r.end ? ' → ' + fmtTime(r.end) : ' → now'))),
        rolloutCharts(r, fromAudit.tolerances)));
    }
  } else {
    const shown = candidate ? [candidate] : [];
    for (const v of rolledBack) if (v.metrics && v.metrics.online && v.metrics.online.sessions > 0) shown.push(v);
    if (!shown.length) {
      out.push(notice('info', 'No candidate in rollout' + (audit ? ' and no rollout in the audit trail.' : '.')
        + ' Charts appear while a candidate is in CANARY or RAMP.'));
    } else {
      out.push(h('p', { class: 'muted' }, (audit ? 'No rollout in the audit trail; ' : 'No audit trail on this node; ')
        + 'showing the live snapshot of the metrics (current step for a candidate in rollout, else all its sessions), with the default tolerances.'));
      out.push(chartLegend);
      for (const v of shown) {
        out.push(h('section', { class: 'rollout', 'data-candidate': v.version },
          h('h3', null, h('code', null, v.version), ' ', stateBadge(v.state), ' vs stable ', h('code', null, stable ? stable.version : '—')),
          snapshotCharts(v, stable, v === candidate ? 'currentStep' : 'online')));
      }
    }
  }
  out.push(h('h2', null, 'Audit events'));
  if (audit === null) {
    out.push(notice('info', 'No audit trail available for this agent\'s model (GET /v1/audit/model/' + agentId + ' answered 404).'));
  } else {
    const transitions = audit.events.filter((e) => !['OutcomeRecorded', 'OutcomeRevised'].includes(eventType(e)));
    out.push(h('p', { class: 'muted' }, audit.events.length + ' events, ' + transitions.length + ' transitions (outcomes not listed).'));
    out.push(table(['#', 'At', 'Type', 'Event'], transitions.map((e) => h('tr', null,
      h('td', { class: 'num' }, String(e.seqNr)), h('td', null, fmtTime(e.at)), h('td', null, eventType(e)),
      h('td', null, jsonDetails('event', e.event, 'model-' + agentId + '-' + e.seqNr)))), { class: 'grid audit' }));
  }
  return out;
}

export async function renderModelsIndex(ctx) {
  // The agents the node lists, as on the Agents page, and those added by hand in this browser.
  const out = [h('h1', null, 'Model versions')];
  const agents = new Set(knownAgents());
  try {
    const known = await getJson('/v1/agents');
    for (const a of known.agents || []) if (a.agentId) agents.add(a.agentId);
  } catch (e) {
    out.push(notice('error', describeError(e, 'the agent list')));
    ctx.problems.push(describeError(e, 'the agent list'));
    if (agents.size === 0) return out;
  }
  const all = [...agents].sort();
  out.push(all.length
    ? h('ul', null, all.map((a) => h('li', { 'data-agent': a }, link(hashPath('models', a), a))))
    : notice('info', 'No agents yet: an agent has model versions after its first gateway call or registered version; '
      + 'add one on the Agents page, or open #/models/<agentId>.'));
  return out;
}
