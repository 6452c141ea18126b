// Jobs: the table of all jobs, and one job's page with its history and audit events.

import { ApiError, describeError, eventType, getAudit, getJson } from '../api.js';
import { badge, fmtDuration, fmtNum, fmtTime, h, hashPath, jsonDetails, link, notice, s, table } from '../dom.js';

const STATUSES = ['REQUESTED', 'SUBMITTED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'];
const FINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/** requested / started (first RUNNING) / finished (first final status) from a job's history. */
export function timings(job) {
  const hist = job.history || [];
  const first = (pred) => hist.find(pred);
  const requested = hist.length ? hist[0].at : null;
  const started = (first((x) => x.status === 'RUNNING') || {}).at || null;
  const finished = (first((x) => FINAL.has(x.status)) || {}).at || null;
  const ms = (a, b) => (a && b ? new Date(b).getTime() - new Date(a).getTime() : null);
  return {
    requested, started, finished,
    queued: ms(requested, started || finished),
    ran: ms(started, finished),
    total: ms(requested, finished),
  };
}

function filterForm(params) {
  const agent = h('input', { type: 'text', name: 'agentId', value: params.get('agentId') || '', placeholder: 'any agent' });
  const status = h('select', { name: 'status' },
    h('option', { value: '' }, 'any status'),
    STATUSES.map((st) => h('option', { value: st, selected: params.get('status') === st ? true : null }, st)));
  return h('form', {
    class: 'inline-form',
    onsubmit: (e) => {
      e.preventDefault();
      const q = new URLSearchParams();
      if (agent.value.trim()) q.set('agentId', agent.value.trim());
      if (status.value) q.set('status', status.value);
      location.hash = '#/jobs' + (q.toString() ? '?' + q : '');
    },
  }, h('label', null, 'Agent ', agent), ' ', h('label', null, 'Status ', status), ' ', h('button', { type: 'submit' }, 'Filter'));
}

export async function renderJobs(ctx, params) {
  const out = [h('h1', null, 'Training jobs'), filterForm(params)];
  const q = new URLSearchParams();
  if (params.get('agentId')) q.set('agentId', params.get('agentId'));
  if (params.get('status')) q.set('status', params.get('status'));
  let list;
  try {
    list = await getJson('/v1/jobs' + (q.toString() ? '?' + q : ''));
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) {
      out.push(notice('info', 'No jobs to show: ' + e.message
        + ' (the training routes may not be enabled on this node).'));
    } else {
      out.push(notice('error', describeError(e, 'the job list')));
      ctx.problems.push(describeError(e, 'the job list'));
    }
    return out;
  }
  const jobs = list.jobs || [];
  if (jobs.length === 0) {
    out.push(notice('info', 'No training jobs' + (q.toString() ? ' match this filter.' : ' yet.')));
    return out;
  }
  const rows = jobs.map((j) => {
    const t = timings(j);
    return h('tr', { 'data-job': j.jobId },
      h('td', null, link(hashPath('jobs', j.jobId), j.jobId)),
      h('td', null, link('#/jobs?agentId=' + encodeURIComponent(j.agentId), j.agentId)),
      h('td', null, badge(j.status)),
      h('td', null, j.trigger || '—'),
      h('td', null, j.algorithm || '—'),
      h('td', { class: 'num', 'data-field': 'dataset' }, j.dataset ? String(j.dataset.count) : '—'),
      h('td', null, fmtTime(t.requested)),
      h('td', { class: 'num' }, fmtDuration(t.queued)),
      h('td', { class: 'num' }, fmtDuration(t.ran)),
      h('td', { class: 'error-text' }, j.error || ''));
  });
  out.push(h('p', { class: 'muted' }, jobs.length + ' job(s), newest first.'));
  out.push(table(['Job', 'Agent', 'Status', 'Trigger', 'Algorithm', 'Dataset', 'Requested', 'Queued', 'Ran', 'Error'], rows));
  return out;
}

export async function renderJob(ctx, jobId) {
  const out = [h('p', null, link('#/jobs', '← all jobs')), h('h1', null, 'Job ', h('code', null, jobId))];
  let job;
  try {
    job = await getJson('/v1/jobs/' + encodeURIComponent(jobId));
  } catch (e) {
    out.push(notice('error', describeError(e, 'job ' + jobId)));
    if (!(e instanceof ApiError && e.status === 404)) ctx.problems.push(describeError(e, 'job ' + jobId));
    return out;
  }
  const t = timings(job);
  out.push(h('dl', { class: 'facts wide' },
    h('dt', null, 'Status'), h('dd', { 'data-field': 'status' }, badge(job.status)),
    h('dt', null, 'Agent'), h('dd', null, link('#/jobs?agentId=' + encodeURIComponent(job.agentId), job.agentId)),
    h('dt', null, 'Trigger'), h('dd', null, job.trigger || '—'),
    h('dt', null, 'Algorithm'), h('dd', null, job.algorithm || '—'),
    h('dt', null, 'Base model'), h('dd', null, job.baseModel || '—'),
    h('dt', null, 'Dataset'), h('dd', { 'data-field': 'dataset' }, job.dataset
      ? [String(job.dataset.count), ' trajectories', job.dataset.sha256 ? [' · sha256 ', h('code', null, job.dataset.sha256)] : null,
        job.dataset.path ? [' · ', h('code', null, job.dataset.path)] : null]
      : 'not exported yet'),
    h('dt', null, 'Backend'), h('dd', null, job.backend ? (job.backend.type || '—') + (job.backend.externalId ? ' · ' + job.backend.externalId : '') : '—'),
    h('dt', null, 'Timings'), h('dd', null, 'requested ' + fmtTime(t.requested) + ' · queued ' + fmtDuration(t.queued)
      + ' · ran ' + fmtDuration(t.ran) + ' · total ' + fmtDuration(t.total)),
    job.outputModel ? [h('dt', null, 'Output model'), h('dd', null,
      job.outputModel.version ? [link(hashPath('models', job.agentId), job.outputModel.version), ' · '] : null,
      h('code', null, job.outputModel.checkpointUri || ''))] : null,
    job.error ? [h('dt', null, 'Error'), h('dd', { class: 'error-text', 'data-field': 'error' }, job.error)] : null,
    // Pre-flight warnings (a dataset too small to fill a batch, no GPU for distillation): the job runs, but may train nothing.
    job.warnings && job.warnings.length ? [h('dt', null, 'Warnings'), h('dd', { 'data-field': 'warnings' },
      h('ul', null, job.warnings.map((w) => h('li', null, w))))] : null));
  if (job.hyperparams && Object.keys(job.hyperparams).length) {
    out.push(jsonDetails('Hyperparameters', job.hyperparams, 'hyper-' + jobId));
  }
  out.push(h('h2', null, 'Training progress'));
  out.push(await progressSection(ctx, jobId));
  out.push(h('h2', null, 'History'));
  out.push(h('ol', { class: 'timeline' }, (job.history || []).map((x) => h('li', null,
    badge(x.status), ' ', h('span', { class: 'muted' }, fmtTime(x.at)), x.detail ? [' — ', x.detail] : null))));
  out.push(h('h2', null, 'Audit events'));
  out.push(await auditTable(ctx, 'job', jobId));
  return out;
}

const LOG_PAGE = 2000; // LogPage.MAX_LIMIT
const LOG_PAGES = 5; // at most 10,000 lines read for the loss curve
const LOG_TAIL = 200;

/**
 * The trainer's step/loss points (over the whole log, up to LOG_PAGES pages) and the last
 * LOG_TAIL lines of its log, from GET /v1/jobs/{id}/logs (Ray's job logs, paged by line).
 */
async function progressSection(ctx, jobId) {
  const base = '/v1/jobs/' + encodeURIComponent(jobId) + '/logs';
  const points = [];
  let lines = [];
  let page = null;
  try {
    let offset = 0;
    for (let i = 0; i < LOG_PAGES; i++) {
      page = await getJson(base + '?offset=' + offset + '&limit=' + LOG_PAGE);
      points.push(...(page.points || []));
      lines = lines.concat(page.lines || []).slice(-LOG_TAIL);
      if (!page.lines || page.lines.length === 0 || page.nextOffset >= page.totalLines) break;
      offset = page.nextOffset;
    }
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return notice('info', 'No logs for this job: ' + e.message);
    ctx.problems.push(describeError(e, 'the job logs'));
    return notice('error', describeError(e, 'the logs of job ' + jobId));
  }
  const shownTo = page.nextOffset || 0;
  // Not 'progress': that class is the agents' pool bar (10 px high, overflow hidden), which cut
  // the chart and the log to a sliver.
  return h('div', { class: 'training-progress', 'data-field': 'training-progress' },
    points.length ? lossChart(points) : notice('info', 'No step/loss figures in the trainer\'s log yet.'),
    page.note ? notice('info', page.note) : null,
    h('p', { class: 'muted', 'data-field': 'log-range' }, page.totalLines
      ? 'Log lines ' + (shownTo - lines.length + 1) + '–' + shownTo + ' of ' + page.totalLines
        + (shownTo < page.totalLines ? ' (the first ' + LOG_PAGE * LOG_PAGES + ' lines were read)' : '')
      : 'The log is empty so far.'),
    lines.length ? h('pre', { class: 'log', 'data-field': 'logs' }, lines.join('\n')) : null);
}

/** Loss over training steps: a polyline with the last point marked, and the figures as a table. */
function lossChart(points) {
  const W = 560;
  const H = 180;
  const P = { l: 56, r: 14, t: 22, b: 28 };
  const steps = points.map((p) => p.step);
  const losses = points.map((p) => p.loss);
  const [x0, x1] = [Math.min(...steps), Math.max(...steps)];
  let [y0, y1] = [Math.min(...losses), Math.max(...losses)];
  if (y1 - y0 < 1e-9) { y0 -= 0.5; y1 += 0.5; }
  const px = (x) => P.l + (x1 === x0 ? 0.5 : (x - x0) / (x1 - x0)) * (W - P.l - P.r);
  const py = (y) => H - P.b - ((y - y0) / (y1 - y0)) * (H - P.t - P.b);
  const last = points[points.length - 1];
  const svg = s('svg', { class: 'chart', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'Loss by step' },
    s('text', { x: P.l, y: 14, class: 'chart-title' }, 'Loss by step'),
    s('text', { x: P.l - 6, y: py(y1) + 4, 'text-anchor': 'end', class: 'axis-label' }, fmtNum(y1, 4)),
    s('text', { x: P.l - 6, y: py(y0) + 4, 'text-anchor': 'end', class: 'axis-label' }, fmtNum(y0, 4)),
    s('text', { x: P.l, y: H - 8, class: 'axis-label' }, 'step ' + x0),
    s('text', { x: W - P.r, y: H - 8, 'text-anchor': 'end', class: 'axis-label' }, 'step ' + x1),
    s('polyline', { class: 'series candidate', fill: 'none', points: points.map((p) => px(p.step).toFixed(1) + ',' + py(p.loss).toFixed(1)).join(' ') }),
    s('circle', { class: 'dot candidate', cx: px(last.step), cy: py(last.loss), r: 3 },
      s('title', null, 'step ' + last.step + ': loss ' + fmtNum(last.loss, 4))));
  const rows = points.slice(-10).map((p) => h('tr', null,
    h('td', { class: 'num' }, String(p.step)), h('td', { class: 'num' }, fmtNum(p.loss, 4))));
  return h('div', { 'data-field': 'loss-points', 'data-count': String(points.length) },
    h('figure', { class: 'chart-box' }, svg),
    table(['Step', 'Loss'], rows));
}

/** The audit trail of an entity as a table; a 404 (audit not there yet) is a note, not an error. */
export async function auditTable(ctx, kind, id) {
  let audit;
  try {
    audit = await getAudit(kind, id);
  } catch (e) {
    ctx.problems.push(describeError(e, 'the audit trail'));
    return notice('error', describeError(e, 'the audit trail of ' + kind + ' ' + id));
  }
  if (audit === null) {
    return notice('info', 'No audit trail available for ' + kind + ' ' + id
      + ' (GET /v1/audit/' + kind + '/… answered 404: not on this node yet, or nothing recorded).');
  }
  if (audit.events.length === 0) return notice('info', 'No events recorded.');
  const rows = audit.events.map((e) => h('tr', null,
    h('td', { class: 'num' }, String(e.seqNr)),
    h('td', null, fmtTime(e.at)),
    h('td', null, eventType(e)),
    h('td', null, jsonDetails('event', e.event, kind + '-' + id + '-' + e.seqNr))));
  return h('div', null,
    audit.truncated ? notice('info', 'Only the first ' + audit.events.length + ' events are shown.') : null,
    table(['#', 'At', 'Type', 'Event'], rows, { class: 'grid audit' }));
}
