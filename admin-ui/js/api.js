// The admin API client: every request the console makes goes through call().
// It sends the session cookie (same origin only), adds the X-CSRF-Token header to every
// state-changing request, parses JSON, and turns an error reply (OpenAI error JSON) into an
// ApiError. A 401 on anything but the sign-in itself means the session ended: the handler
// registered with onSessionExpired() is told, once per expiry. Every answered request is
// activity for the idle sign-out (onActivity(), idle.js): the daemon counts it the same way.
// The CSRF token is returned only at sign-in; it is kept in sessionStorage (this tab only,
// gone when the tab closes) so that a reload keeps the session usable.

const CSRF_KEY = 'kimi.console.csrf';

export class ApiError extends Error {
  constructor(status, message, code = '', type = '', param = '') {
    super(message);
    this.status = status;
    this.code = code;
    this.type = type;
    this.param = param;  // the request field at fault, when the daemon names one
  }
  // The route does not exist in this appliance (an older daemon, or a feature not built in),
  // or the service behind it is not configured: the screen says "not available".
  get unavailable() {
    return (this.status === 404 && this.code === 'unknown_route') || this.status === 501 || this.status === 503;
  }
}

let expiredHandler = () => {};
let expiredSignalled = false;
let activityHandler = () => {};

export function onActivity(handler) {
  activityHandler = handler;
}

export function onSessionExpired(handler) {
  expiredHandler = handler;
}

export function setCsrfToken(token) {
  if (token) sessionStorage.setItem(CSRF_KEY, token);
  else sessionStorage.removeItem(CSRF_KEY);
  expiredSignalled = false;
}

function queryString(query) {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  }
  const text = params.toString();
  return text ? '?' + text : '';
}

// The ApiError of a reply that is not 2xx.
export async function errorOf(res) {
  let detail = {};
  try {
    detail = (await res.json()).error || {};
  } catch {
    // not JSON: keep the status text
  }
  return new ApiError(res.status, detail.message || res.statusText || 'HTTP ' + res.status, detail.code || '',
                      detail.type || '', detail.param || '');
}

// method, path; options: body (sent as JSON, or as-is when a string), query, as ('json' |
// 'text' | 'blob' | 'response': the reply itself, whatever its status), signal (an
// AbortSignal), signIn (a 401 is a wrong password, not an expiry).
export async function call(method, path, options = {}) {
  const headers = {};
  let body;
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  if (method !== 'GET' && method !== 'HEAD') {
    const token = sessionStorage.getItem(CSRF_KEY);
    if (token) headers['X-CSRF-Token'] = token;
  }
  let res;
  try {
    res = await fetch(path + queryString(options.query),
                      {method, headers, body, credentials: 'same-origin', cache: 'no-store', redirect: 'error',
                       signal: options.signal});
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'The appliance cannot be reached (' + e.message + ')', 'network_error');
  }
  activityHandler();
  if (res.status === 401 && !options.signIn && !expiredSignalled) {
    expiredSignalled = true;
    expiredHandler();
  }
  if (options.as === 'response') return res;
  if (!res.ok) throw await errorOf(res);
  if (options.as === 'text') return res.text();
  if (options.as === 'blob') return res.blob();
  const type = res.headers.get('Content-Type') || '';
  return type.includes('json') ? res.json() : res.text();
}

export const get = (path, options) => call('GET', path, options);
export const post = (path, body, options = {}) => call('POST', path, {...options, body});
export const patch = (path, body, options = {}) => call('PATCH', path, {...options, body});
export const del = (path, options) => call('DELETE', path, options);
