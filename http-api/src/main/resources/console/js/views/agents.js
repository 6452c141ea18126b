// Agents overview: training pool against min-samples, next scheduled run, active job, stable and
// candidate versions, per agent.

import { ApiError, describeError, getJson } from '../api.js';
import { addAgents, knownAgents, removeAgent, validAgentId } from '../agents-store.js';
import { badge, fmtNum, fmtPct, fmtRelative, fmtTime, h, hashPath, link, notice } from '../dom.js';
import { stateBadge } from '../version-states.js';

/** GET that answers {value} or {error} instead of throwing. */
async function attempt(path) {
  try {
    return { value: await getJson(path) };
  } catch (e) {
    return { error: e };
  }
}

export function progressBar(value, max, label) {
  const ratio = max > 0 ? Math.max(0, Math.min(1, value / max)) : (value > 0 ? 1 : 0);
  const fill = h('div', { class: 'progress-fill' + (ratio >= 1 ? ' full' : '') });
  fill.style.width = (ratio * 100).toFixed(1) + '%';
  return h('div', {
    class: 'progress', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': max, 'aria-valuenow': value,
    'aria-label': label,
  }, fill);
}

function trainingSection(agentId, result, ctx) {
  const body = [h('h3', null, 'Training pool')];
  if (result.absent) {
    body.push(notice('info', 'No training status: ' + result.absent));
    return h('section', { class: 'card-section training' }, body);
  }
  if (result.error) {
    const e = result.error;
    if (e instanceof ApiError && e.status === 404) {
      body.push(notice('info', 'No training status: ' + e.message));
    } else {
      body.push(notice('error', describeError(e, 'the training status of ' + agentId)));
      ctx.problems.push(describeError(e, 'training status'));
    }
    return h('section', { class: 'card-section training' }, body);
  }
  const t = result.value;
  const pool = Number(t.poolSize || 0);
  const min = Number(t.minSamples || 0);
  body.push(
    h('div', { class: 'pool-line' },
      h('span', { 'data-field': 'pool' }, pool + ' / ' + min),
      h('span', { class: 'muted', 'data-field': 'pool-share' }, ' samples (' + poolShare(pool, min) + ')')),
    progressBar(pool, min, 'training pool ' + pool + ' of ' + min));
  const active = t.activeJob;
  body.push(h('dl', { class: 'facts' },
    h('dt', null, 'Triggers'), h('dd', { 'data-field': 'triggers' }, (t.triggers || []).join(', ') || '—'),
    h('dt', null, 'Next scheduled run'),
    h('dd', { 'data-field': 'next-run' }, t.nextScheduledRun
      ? [fmtTime(t.nextScheduledRun), ' ', h('span', { class: 'muted' }, '(' + fmtRelative(t.nextScheduledRun) + ')')]
      : 'none scheduled'),
    h('dt', null, 'Active job'),
    h('dd', { 'data-field': 'active-job' }, active
      ? [link(hashPath('jobs', active.jobId), active.jobId), ' ', badge(active.status)]
      : 'none'),
    !active && t.waitingFor
      ? [h('dt', null, 'Waiting for'), h('dd', { 'data-field': 'waiting-for' }, t.waitingFor)] : null,
    t.meanQuality !== undefined && t.meanQuality !== null
      ? [h('dt', null, 'Mean quality'), h('dd', null, fmtNum(t.meanQuality, 3))] : null,
    t.backend ? [h('dt', null, 'Backend'), h('dd', null, t.backend)] : null));
  return h('section', { class: 'card-section training' }, body);
}

function modelsSection(agentId, result, ctx) {
  const body = [h('h3', null, 'Models')];
  if (result.absent) {
    body.push(notice('info', 'No model versions: ' + result.absent));
    return h('section', { class: 'card-section models' }, body);
  }
  if (result.error) {
    const e = result.error;
    if (e instanceof ApiError && e.status === 404) {
      body.push(notice('info', 'No model versions: ' + e.message));
    } else {
      body.push(notice('error', describeError(e, 'the model versions of ' + agentId)));
      ctx.problems.push(describeError(e, 'model versions'));
    }
    return h('section', { class: 'card-section models' }, body);
  }
  const m = result.value;
  const versions = m.versions || [];
  const byName = new Map(versions.map((v) => [v.version, v]));
  const stable = byName.get(m.stable);
  const candidate = m.candidate ? byName.get(m.candidate) : null;
  const counts = {};
  for (const v of versions) counts[v.state] = (counts[v.state] || 0) + 1;
  body.push(h('dl', { class: 'facts' },
    h('dt', null, 'Stable'),
    h('dd', { 'data-field': 'stable' }, stable
      ? [h('strong', null, stable.version), ' ', stateBadge(stable.state), ' ', fmtPct(stable.ratio)]
      : (m.stable || 'none')),
    h('dt', null, 'Candidate'),
    h('dd', { 'data-field': 'candidate' }, candidate
      ? [h('strong', null, candidate.version), ' ', stateBadge(candidate.state), ' at ',
        h('span', { 'data-field': 'candidate-ratio' }, fmtPct(candidate.ratio))]
      : 'none'),
    h('dt', null, 'Versions'),
    h('dd', null, Object.entries(counts).map(([st, n]) => h('span', { class: 'count' }, stateBadge(st), ' ×' + n)))));
  body.push(h('p', null, link(hashPath('models', agentId), 'Versions, timelines and canary charts →')));
  return h('section', { class: 'card-section models' }, body);
}

/**
 * listed: the agent's entry in GET /v1/agents, or undefined for an agent added by hand. What the entry says
 * the agent lacks is not asked for: each such GET was a 404, an error in the browser's console on every
 * refresh (trial t111).
 */
async function agentCard(agentId, manual, listed, ctx) {
  const enc = encodeURIComponent(agentId);
  const [training, models] = await Promise.all([
    listed && listed.training === false
      ? { absent: 'agent ' + agentId + ' has no completed session, policy or job yet' }
      : attempt('/v1/training/' + enc),
    listed && listed.models === false
      ? { absent: 'agent ' + agentId + ' has no model version yet' }
      : attempt('/v1/models/' + enc)]);
  return h('article', { class: 'card agent', 'data-agent': agentId },
    h('header', { class: 'card-head' },
      h('h2', null, agentId),
      h('span', { class: 'card-links' },
        link('#/jobs?agentId=' + enc, 'jobs'),
        manual ? h('button', {
          type: 'button', class: 'link-button', title: 'Stop showing this agent',
          onclick: () => {
            removeAgent(agentId);
            ctx.rerender();
          },
        }, 'remove') : null)),
    h('div', { class: 'card-body' }, trainingSection(agentId, training, ctx), modelsSection(agentId, models, ctx)));
}

function addForm(ctx) {
  const input = h('input', {
    type: 'text', name: 'agentId', placeholder: 'agent id, e.g. support-bot', spellcheck: 'false', 'aria-label': 'agent id',
  });
  const message = h('span', { class: 'muted' });
  return h('form', {
    class: 'inline-form',
    onsubmit: (e) => {
      e.preventDefault();
      const ids = input.value.split(/[\s,]+/).filter((x) => x);
      const bad = ids.filter((x) => !validAgentId(x));
      if (bad.length) {
        message.textContent = 'Not an agent id: ' + bad.join(', ') + ' (1–64 of A–Z a–z 0–9 . _ : -)';
        return;
      }
      addAgents(ids);
      input.value = '';
      input.blur();
      ctx.rerender();
    },
  }, h('label', null, 'Add agent ', input), h('button', { type: 'submit' }, 'Add'), ' ', message);
}

export async function renderAgents(ctx) {
  const out = [h('h1', null, 'Agents'), addForm(ctx)];
  const manual = knownAgents();
  const fromJournal = new Map();
  let listed = true;
  try {
    const known = await getJson('/v1/agents');
    for (const a of known.agents || []) if (a.agentId) fromJournal.set(a.agentId, a);
  } catch (e) {
    out.push(notice('error', describeError(e, 'the agent list')));
    ctx.problems.push(describeError(e, 'the agent list'));
    listed = false;
  }
  const all = [...new Set([...manual, ...fromJournal.keys()])].sort();
  if (all.length === 0 && !listed) return out; // the error says why; "no agents yet" would be a guess
  if (all.length === 0) {
    out.push(notice('info', 'No agents yet. An agent appears here after its first gateway call or its first '
      + 'completed session; add an agent id above, or open /console/?agent=<agentId>.'));
    return out;
  }
  const cards = await Promise.all(all.map((a) => agentCard(a, manual.includes(a), fromJournal.get(a), ctx)));
  out.push(h('div', { class: 'cards' }, cards));
  return out;
}

/**
 * How far the pool is from the threshold. Past it, a percentage said nothing a user could use
 * ("166666.7% of min-samples" with min-samples 1): it says the threshold is reached.
 */
export function poolShare(pool, min) {
  if (!(min > 0)) return 'no min-samples';
  if (pool >= min) return 'min-samples reached';
  return fmtPct(pool / min) + ' of min-samples';
}
