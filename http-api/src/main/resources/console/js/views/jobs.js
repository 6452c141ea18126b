// Jobs: the table of all jobs, and one job's page with its history and audit events.

import { ApiError, describeError, eventType, getAudit, getJson } from '../api.js';
import { badge, fmtDuration, fmtTime, h, hashPath, jsonDetails, link, notice, table } from '../dom.js';

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
    job.error ? [h('dt', null, 'Error'), h('dd', { class: 'error-text', 'data-field': 'error' }, job.error)] : null));
  if (job.hyperparams && Object.keys(job.hyperparams).length) {
    out.push(jsonDetails('Hyperparameters', job.hyperparams, 'hyper-' + jobId));
  }
  out.push(h('h2', null, 'History'));
  out.push(h('ol', { class: 'timeline' }, (job.history || []).map((x) => h('li', null,
    badge(x.status), ' ', h('span', { class: 'muted' }, fmtTime(x.at)), x.detail ? [' — ', x.detail] : null))));
  out.push(h('h2', null, 'Audit events'));
  out.push(await auditTable(ctx, 'job', jobId));
  return out;
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
