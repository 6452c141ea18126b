// The node's public HTTP API (design §7.1), read from the browser with the user's bearer token.

const TOKEN_KEY = 'otl.console.token';

export function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch (e) {
    return '';
  }
}

export function setToken(value) {
  const t = (value || '').trim();
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** A failed request: status 0 when the node could not be reached at all. */
export class ApiError extends Error {
  constructor(status, code, message, path) {
    super(message);
    this.status = status;
    this.code = code;
    this.path = path;
  }
}

/** GET a JSON document; throws ApiError for anything but 2xx. */
export async function getJson(path) {
  const headers = { Accept: 'application/json' };
  const t = token();
  if (t) headers.Authorization = 'Bearer ' + t;
  let response;
  try {
    response = await fetch(path, { headers, cache: 'no-store', credentials: 'omit' });
  } catch (e) {
    throw new ApiError(0, 'network', 'cannot reach the node (' + e.message + ')', path);
  }
  const text = await response.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch (e) {
    body = null;
  }
  if (!response.ok) {
    const code = body && body.error ? body.error : 'http_' + response.status;
    const message = body && body.message ? body.message : (text || response.statusText || 'no message');
    throw new ApiError(response.status, code, message, path);
  }
  if (body === null) throw new ApiError(response.status, 'not_json', 'the answer is not JSON', path);
  return body;
}

/** Like getJson, but a 404 answers null (an optional resource, or a route not on this node). */
export async function getOptional(path) {
  try {
    return await getJson(path);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

/**
 * All events of an audit trail (GET /v1/audit/{kind}/{id}), following the `next` cursor for at
 * most `maxPages` pages. Answers null when the audit route or the entity is not there (404).
 */
export async function getAudit(kind, id, maxPages = 20) {
  const base = '/v1/audit/' + encodeURIComponent(kind) + '/' + encodeURIComponent(id);
  const events = [];
  let after = null;
  let truncated = false;
  for (let page = 0; ; page++) {
    if (page >= maxPages) {
      truncated = true;
      break;
    }
    const query = '?limit=1000' + (after ? '&after=' + encodeURIComponent(after) : '');
    const body = await getOptional(base + query);
    if (body === null) return page === 0 ? null : { events, truncated };
    for (const e of body.events || []) events.push(e);
    if (!body.next) break;
    after = body.next;
  }
  return { events, truncated };
}

/** One line a person can act on, for an error of a request about `what`. */
export function describeError(err, what) {
  if (!(err instanceof ApiError)) return 'Unexpected error while loading ' + what + ': ' + err.message;
  switch (err.status) {
    case 0:
      return 'Cannot reach the node while loading ' + what + ': ' + err.message
        + '. Is it running? The console retries on the next refresh.';
    case 401:
      return token()
        ? 'Not authorised (401) for ' + what + ': the token in the Token box was refused ('
          + err.message + '). Enter the node\'s auth token and press Use.'
        : 'Not authorised (401) for ' + what + ': this node needs a bearer token ('
          + err.message + '). Enter it in the Token box at the top and press Use.';
    case 404:
      return 'Not found (404): ' + what + ' — ' + err.message;
    case 429:
      return 'The node is overloaded (429) while loading ' + what + ': ' + err.message
        + '. The console retries on the next refresh.';
    case 503:
      return 'The node is unavailable (503) while loading ' + what + ': ' + err.message
        + '. The journal may be unreachable or the node stopping; the console retries on the next refresh.';
    default:
      return 'Error ' + err.status + ' (' + err.code + ') while loading ' + what + ': ' + err.message;
  }
}

/** Type name of an audit event, without any package or enclosing-class prefix. */
export function eventType(e) {
  const t = String((e && e.type) || '');
  const cut = Math.max(t.lastIndexOf('.'), t.lastIndexOf('$'));
  return cut >= 0 ? t.substring(cut + 1) : t;
}
