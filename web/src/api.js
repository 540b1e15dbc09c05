// The workbench's one way to the server: same origin, the analyst's bearer token from this
// tab's session storage (never a cookie: no request is authorised without the page asking).

const TOKEN_KEY = 'vigil.token';

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// An answer the server refused: its HTTP status and the error body's code, field and message.
export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || '';
    this.field = e.field || '';
  }
}

async function call(method, path, body) {
  const headers = { Authorization: `Bearer ${token()}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  const text = await r.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch (_) {
    parsed = null;
  }
  if (!r.ok) throw new ApiError(r.status, parsed);
  return { body: parsed, text, headers: r.headers };
}

export async function get(path) {
  return (await call('GET', path)).body;
}

export async function post(path, body) {
  return (await call('POST', path, body || {})).body;
}

// A response's bytes saved as a file named "name" (proof bundles, report drafts, attachments),
// byte for byte (a Blob, never decoded as text).
export async function download(path, name) {
  const r = await fetch(path, { headers: { Authorization: `Bearer ${token()}` }, cache: 'no-store' });
  if (!r.ok) {
    let body = null;
    try { body = await r.json(); } catch (_) { body = null; }
    throw new ApiError(r.status, body);
  }
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// "file" (a File from an input) sent as the body of a POST to "path", its type as Content-Type.
export async function upload(path, file) {
  const r = await fetch(path, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token()}`, 'Content-Type': file.type || 'application/octet-stream' },
    body: file,
  });
  const text = await r.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch (_) { parsed = null; }
  if (!r.ok) throw new ApiError(r.status, parsed);
  return parsed;
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== '' && v !== undefined && v !== null && v !== false) q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}
