// The states of a model version (ModelState.VersionState), each with one colour of its own: the
// versions table's badges, the state timeline and its legend all take it from the state's class
// (console.css `.state-<name>`), so a colour means the same state everywhere.

import { h } from './dom.js';

/** Every state, in lifecycle order, with what it means for traffic. */
export const VERSION_STATES = [
  { state: 'REGISTERED', meaning: 'registered, not evaluated yet; no traffic' },
  { state: 'EVALUATING', meaning: 'offline gate running; no traffic' },
  { state: 'READY', meaning: 'passed the offline gate; waits for its canary' },
  { state: 'NO_EVIDENCE', meaning: 'gate had no offline evidence; waits for a manual promote' },
  { state: 'REJECTED', meaning: 'failed the offline gate; never served' },
  { state: 'DEPLOYING', meaning: 'being loaded into serving; no traffic yet' },
  { state: 'DEPLOY_FAILED', meaning: 'serving refused or never confirmed the load; no traffic' },
  { state: 'CANARY', meaning: 'first step: a small share of traffic, compared with stable' },
  { state: 'RAMP', meaning: 'later steps: a growing share of traffic' },
  { state: 'PAUSED', meaning: 'rollout held at its share; resume or roll back' },
  { state: 'STABLE', meaning: 'serves the rest of the traffic (all of it without a rollout)' },
  { state: 'RETIRED', meaning: 'a former stable or a superseded candidate; no traffic' },
  { state: 'ROLLED_BACK', meaning: 'rollout stopped, degraded or by hand; no traffic' },
];

export function stateClass(state) {
  return 'state-' + String(state || 'unknown').toLowerCase().replace(/[^a-z_]/g, '');
}

/** A version's state as a badge in the state's own colour. */
export function stateBadge(state) {
  const st = String(state || 'UNKNOWN');
  const known = VERSION_STATES.find((s) => s.state === st);
  return h('span', { class: 'badge vstate ' + stateClass(st), 'data-state': st, title: known ? known.meaning : null, text: st });
}

/** What each colour means: swatch, state name and a few words. */
export function stateLegend() {
  return h('div', { class: 'legend state-legend', 'data-field': 'state-legend' }, VERSION_STATES.map((s) =>
    h('span', { class: 'legend-item', 'data-state': s.state, title: s.meaning },
      h('span', { class: 'swatch ' + stateClass(s.state) }), h('strong', null, s.state), ' ',
      h('span', { class: 'muted' }, s.meaning))));
}
