// The agents the overview shows besides those the node lists (GET /v1/agents): added by hand (text box,
// or ?agent= on the console URL) and remembered in this browser's localStorage (ids only).

const KEY = 'otl.console.agents';
const VALID = /^[A-Za-z0-9._:-]{1,64}$/;

export function validAgentId(id) {
  return VALID.test(id) && !/^\.+$/.test(id);
}

export function knownAgents() {
  try {
    const list = JSON.parse(localStorage.getItem(KEY) || '[]');
    return Array.isArray(list) ? list.filter((x) => typeof x === 'string' && validAgentId(x)) : [];
  } catch (e) {
    return [];
  }
}

function save(list) {
  localStorage.setItem(KEY, JSON.stringify([...new Set(list)].sort()));
}

export function addAgents(ids) {
  const clean = ids.map((x) => String(x).trim()).filter(validAgentId);
  if (clean.length) save([...knownAgents(), ...clean]);
  return clean;
}

export function removeAgent(id) {
  save(knownAgents().filter((x) => x !== id));
}
