// One session as a readable conversation (as stored: desensitized), tool calls and reasoning
// folded, feedback, result and reward.

import { ApiError, describeError, getJson } from '../api.js';
import { badge, fmtNum, fmtTime, h, hashPath, jsonDetails, link, notice } from '../dom.js';

const ORDER = { message: 0, reasoning: 1, tool: 2 };

function pretty(v) {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v, null, 2);
}

/** Messages, tool calls and reasoning steps in time order (ties keep the order they arrived in). */
export function conversation(session) {
  const items = [];
  (session.messages || []).forEach((m, i) => items.push({ kind: 'message', at: m.at, i, m }));
  (session.toolCalls || []).forEach((m, i) => items.push({ kind: 'tool', at: m.at, i, m }));
  (session.steps || []).forEach((m, i) => items.push({ kind: 'reasoning', at: m.at, i, m }));
  const t = (x) => new Date(x.at || 0).getTime();
  return items.sort((a, b) => (t(a) - t(b)) || (ORDER[a.kind] - ORDER[b.kind]) || (a.i - b.i));
}

/**
 * The version that answered a model call, and the one that failed before it (a fallback): the session's
 * "Model version" is the one it was routed to, which is not always the one that answered.
 */
export function answeredBy(m) {
  const call = m && m.inference;
  if (!call || !call.modelVersion) return '';
  return 'answered by ' + call.modelVersion + (call.fallbackFrom ? ' (fallback from ' + call.fallbackFrom + ')' : '');
}

function item(x, sessionId) {
  const m = x.m;
  if (x.kind === 'message') {
    const by = answeredBy(m);
    return h('div', { class: 'msg msg-' + String(m.role).toLowerCase() },
      h('div', { class: 'msg-head' }, h('span', { class: 'role' }, String(m.role).toLowerCase()),
        h('span', { class: 'muted' }, ' ' + fmtTime(m.at) + (m.latencyMs !== null && m.latencyMs !== undefined ? ' · ' + m.latencyMs + ' ms' : '')
          + (m.msgId ? ' · ' + m.msgId : '')),
        by ? h('span', { class: 'muted', 'data-field': 'answered-by' }, ' · ' + by) : null),
      h('div', { class: 'msg-body' }, m.content || ''));
  }
  if (x.kind === 'tool') {
    return h('details', { class: 'tool' + (m.success === false ? ' failed' : ''), 'data-key': 'tool-' + sessionId + '-' + x.i },
      h('summary', null, 'tool call ', h('code', null, m.toolName), ' ', m.awaitingResult ? badge('CALLED') : m.success === false ? badge('FAILED') : badge('OK'),
        h('span', { class: 'muted' }, (m.latencyMs !== null && m.latencyMs !== undefined ? ' ' + m.latencyMs + ' ms' : '') + (m.callId ? ' · ' + m.callId : ''))),
      h('div', { class: 'tool-io' },
        h('div', null, h('div', { class: 'label' }, 'input'), h('pre', null, pretty(m.input))),
        h('div', null, h('div', { class: 'label' }, 'output'), h('pre', null, pretty(m.output)))));
  }
  return h('details', { class: 'reasoning', 'data-key': 'step-' + sessionId + '-' + x.i },
    // A step sent without index is stored with -1: numbered by its place instead of "step -1".
    h('summary', null, 'reasoning step ' + (m.index !== null && m.index !== undefined && m.index >= 0 ? m.index : '(no index)')
      + (m.action ? ': ' + m.action : '') + (m.thought ? '' : ' (no thought)')),
    h('dl', { class: 'facts' },
      h('dt', null, 'Thought'), h('dd', null, m.thought || 'none recorded'),
      h('dt', null, 'Action'), h('dd', null, m.action || '—'),
      h('dt', null, 'Observation'), h('dd', null, m.observation || '—')));
}

function feedbackLine(f) {
  const label = f.kind === 'RATING' ? 'RATING ' + fmtNum(f.value, 1) + ' / 5' : f.kind;
  // Per-turn feedback names the response it rates (msgId): without it the list could not tell which
  // answer of the conversation a thumbs-down was for.
  return h('li', null, h('span', { class: 'fb fb-' + String(f.kind).toLowerCase() }, label),
    f.msgId ? h('span', { 'data-field': 'feedback-msg' }, ' for response ', h('code', null, f.msgId)) : null,
    h('span', { class: 'muted' }, ' ' + fmtTime(f.at) + (f.source ? ' · ' + f.source : '') + (f.feedbackId ? ' · ' + f.feedbackId : '')));
}

export async function renderSession(ctx, sessionId) {
  const out = [h('h1', null, 'Session ', h('code', null, sessionId)), sessionForm(sessionId)];
  let s;
  try {
    s = await getJson('/v1/sessions/' + encodeURIComponent(sessionId));
  } catch (e) {
    out.push(notice(e instanceof ApiError && e.status === 404 ? 'info' : 'error', describeError(e, 'session ' + sessionId)));
    if (!(e instanceof ApiError && e.status === 404)) ctx.problems.push(describeError(e, 'session ' + sessionId));
    return out;
  }
  out.push(h('dl', { class: 'facts wide' },
    h('dt', null, 'Agent'), h('dd', null, link(hashPath('models', s.agentId), s.agentId)),
    h('dt', null, 'Status'), h('dd', { 'data-field': 'status' }, badge(s.status)),
    h('dt', null, 'Model version (routed)'), h('dd', { 'data-field': 'model-version' }, s.modelVersion || '—'),
    s.agentVersion ? [h('dt', null, 'Agent version'), h('dd', null, s.agentVersion)] : null,
    h('dt', null, 'Started'), h('dd', null, fmtTime(s.startedAt)),
    h('dt', null, 'Completed'), h('dd', null, fmtTime(s.completedAt)),
    h('dt', null, 'Result'), h('dd', { 'data-field': 'result' }, s.result
      ? [badge(s.result.status), s.result.detail ? ' ' + s.result.detail : ''] : 'none yet'),
    h('dt', null, 'Reward'), h('dd', { 'data-field': 'reward' }, fmtNum(s.reward, 3)),
    h('dt', null, 'Quality score'), h('dd', { 'data-field': 'quality' }, fmtNum(s.qualityScore, 2))));
  if (s.metadata && Object.keys(s.metadata).length) out.push(jsonDetails('metadata', s.metadata, 'meta-' + sessionId));
  out.push(h('h2', null, 'Conversation'));
  const items = conversation(s);
  out.push(items.length
    ? h('div', { class: 'conversation' }, items.map((x) => item(x, sessionId)))
    : notice('info', 'No messages recorded.'));
  out.push(h('h2', null, 'Feedback'));
  out.push((s.feedback || []).length
    ? h('ul', { class: 'feedback' }, s.feedback.map(feedbackLine))
    : notice('info', 'No feedback yet.'));
  return out;
}

function sessionForm(current) {
  const input = h('input', { type: 'text', name: 'sessionId', value: current || '', placeholder: 'session id', spellcheck: 'false', 'aria-label': 'session id' });
  return h('form', {
    class: 'inline-form',
    onsubmit: (e) => {
      e.preventDefault();
      if (input.value.trim()) location.hash = hashPath('sessions', input.value.trim());
    },
  }, h('label', null, 'Open session ', input), ' ', h('button', { type: 'submit' }, 'Open'));
}

export async function renderSessionsIndex() {
  return [h('h1', null, 'Sessions'), sessionForm(''),
    h('p', { class: 'muted' }, 'There is no session list in the API; open one by id (for example from your agent\'s logs).')];
}
