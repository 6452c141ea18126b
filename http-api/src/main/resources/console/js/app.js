// Entry point: hash routing, the token box, the refresh loop, the error banner.

import { setToken, token } from './api.js';
import { clear, h } from './dom.js';
import { renderAgents } from './views/agents.js';
import { renderJob, renderJobs } from './views/jobs.js';
import { renderModels, renderModelsIndex } from './views/models.js';
import { renderSession, renderSessionsIndex } from './views/session.js';
import { addAgents } from './agents-store.js';

const REFRESH_MS = 5000;
const PAUSE_KEY = 'otl.console.paused';

const view = document.getElementById('view');
const banner = document.getElementById('banner');
const refreshToggle = document.getElementById('refresh-toggle');
const refreshStatus = document.getElementById('refresh-status');

let timer = null;
let generation = 0;
let rendering = false;
// What the browser tests read to prove "paused means no refresh" without sleeping: every tick of
// the refresh timer (paused or not) and the renders still awaiting the node.
const refreshProbe = { ticks: 0, rendersInFlight: 0 };
window.otlRefreshProbe = refreshProbe;

/** Parses `#/a/b?x=1` into segments and query parameters. */
function route() {
  const raw = location.hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = q >= 0 ? raw.substring(0, q) : raw;
  const params = new URLSearchParams(q >= 0 ? raw.substring(q + 1) : '');
  const segments = path.split('/').filter((x) => x.length > 0).map(decodeURIComponent);
  return { segments, params };
}

function pick({ segments, params }) {
  const [page, id] = segments;
  switch (page || 'agents') {
    case 'agents':
      return { nav: 'agents', render: (ctx) => renderAgents(ctx) };
    case 'jobs':
      return id ? { nav: 'jobs', render: (ctx) => renderJob(ctx, id) }
        : { nav: 'jobs', render: (ctx) => renderJobs(ctx, params) };
    case 'models':
      return id ? { nav: 'models', render: (ctx) => renderModels(ctx, id) }
        : { nav: 'models', render: (ctx) => renderModelsIndex(ctx) };
    case 'sessions':
      return id ? { nav: 'sessions', render: (ctx) => renderSession(ctx, id) }
        : { nav: 'sessions', render: (ctx) => renderSessionsIndex(ctx) };
    default:
      return { nav: '', render: async () => h('p', { class: 'notice notice-error' }, 'Unknown page: #/' + segments.join('/')) };
  }
}

/** Keys of the open <details> elements, so a refresh keeps them open. */
function openDetails() {
  return new Set([...view.querySelectorAll('details[open][data-key]')].map((d) => d.dataset.key));
}

async function render(reason) {
  if (rendering && reason === 'timer') return;
  rendering = true;
  const mine = ++generation;
  const r = route();
  const page = pick(r);
  for (const a of document.querySelectorAll('[data-nav]')) {
    a.classList.toggle('active', a.dataset.nav === page.nav);
  }
  const keepOpen = reason === 'timer' ? openDetails() : new Set();
  const ctx = { rerender: () => render('action'), problems: [] };
  let content;
  refreshProbe.rendersInFlight++;
  try {
    content = await page.render(ctx);
  } catch (e) {
    content = h('p', { class: 'notice notice-error', role: 'alert' }, 'The page failed: ' + e.message);
  }
  // Decremented in the same task that updates the page below, so "none in flight" means applied.
  refreshProbe.rendersInFlight--;
  rendering = false;
  if (mine !== generation) return; // a newer render started meanwhile
  const fresh = h('div', { class: 'page', 'data-rendered': new Date().toISOString() }, content);
  for (const d of fresh.querySelectorAll('details[data-key]')) {
    if (keepOpen.has(d.dataset.key)) d.open = true;
  }
  // Do not reset what the user is typing in.
  const focused = document.activeElement && view.contains(document.activeElement) && reason === 'timer';
  if (focused) {
    updateStatus();
    return;
  }
  clear(view).append(fresh);
  showProblems(ctx.problems);
  document.body.dataset.ready = 'true';
  updateStatus();
}

function showProblems(problems) {
  const unique = [...new Set(problems)];
  if (unique.length === 0) {
    banner.hidden = true;
    clear(banner);
    return;
  }
  clear(banner).append(...unique.map((p) => h('div', null, p)));
  banner.hidden = false;
}

function paused() {
  return sessionStorage.getItem(PAUSE_KEY) === 'true';
}

function updateStatus() {
  const p = paused();
  refreshToggle.textContent = p ? 'Resume' : 'Pause';
  refreshToggle.setAttribute('aria-pressed', String(p));
  refreshStatus.textContent = (p ? 'auto-refresh paused · ' : 'auto-refresh every ' + REFRESH_MS / 1000 + ' s · ')
    + 'updated ' + new Date().toLocaleTimeString();
}

function schedule() {
  if (timer) clearInterval(timer);
  timer = setInterval(() => {
    refreshProbe.ticks++;
    if (!paused() && !document.hidden) render('timer');
  }, REFRESH_MS);
}

function initToken() {
  const input = document.getElementById('token-input');
  input.value = token();
  document.getElementById('token-form').addEventListener('submit', (e) => {
    e.preventDefault();
    setToken(input.value);
    render('action');
  });
  document.getElementById('token-clear').addEventListener('click', () => {
    input.value = '';
    setToken('');
    render('action');
  });
}

function initAgentsFromUrl() {
  // ?agent=a&agent=b or ?agents=a,b on the console URL add agents to the overview.
  const q = new URLSearchParams(location.search);
  const ids = [...q.getAll('agent'), ...q.getAll('agents').flatMap((x) => x.split(','))];
  addAgents(ids);
}

refreshToggle.addEventListener('click', () => {
  sessionStorage.setItem(PAUSE_KEY, String(!paused()));
  updateStatus();
});
window.addEventListener('hashchange', () => render('navigate'));
initToken();
initAgentsFromUrl();
schedule();
render('load');
