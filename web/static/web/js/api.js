// The REST API client: JSON in and out, session cookie plus CSRF header on writes, and
// errors as ApiError so the poller can tell "try again later" from "you are signed out".

export class ApiError extends Error {
  /**
   * status 0 means the request never got an answer (network down, server gone).
   * retryAfter is the server's Retry-After in seconds, when it sent one (503, 429).
   */
  constructor(status, detail, retryAfter = null, payload = null) {
    super(detail || `HTTP ${status}`);
    this.status = status;
    this.detail = detail;
    this.retryAfter = retryAfter;
    this.payload = payload; // the JSON answer, e.g. a 409's "claimed_by"
  }

  /** Worth retrying on its own: no answer, throttled, or the server is having trouble. */
  get transient() {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }

  /** The session ended (or never was): only signing in again helps. */
  get signedOut() {
    return this.status === 401 || this.status === 403;
  }
}

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  if (match) return decodeURIComponent(match[1]);
  // CSRF_COOKIE_HTTPONLY may hide the cookie; every page form carries the token too.
  return document.querySelector("input[name=csrfmiddlewaretoken]")?.value ?? "";
}

function firstError(payload) {
  // {"detail": "..."} or DRF's per-field errors {"field": ["..."]}.
  if (!payload || typeof payload !== "object") return "";
  if (typeof payload.detail === "string") return payload.detail;
  for (const value of Object.values(payload)) {
    if (Array.isArray(value) && typeof value[0] === "string") return value[0];
    if (typeof value === "string") return value;
  }
  return "";
}

// The last answer of each GET URL with its ETag: a poll sends If-None-Match and, when nothing
// changed for the user, the server answers 304 from one Redis read and this copy is used.
const answers = new Map();
const KEPT_ANSWERS = 50;

function remember(key, etag, payload) {
  answers.delete(key);
  answers.set(key, { etag, payload });
  if (answers.size > KEPT_ANSWERS) answers.delete(answers.keys().next().value);
}

// Answers the service worker keeps for a reload without a network (sw.js): a request asks for
// it with `keep` (the user's id); when the network does not answer, the worker gives the kept
// copy, marked with the time it got it.
const KEEP_HEADER = "X-Wms-Keep";
const KEPT_AT_HEADER = "X-Wms-Kept-At";
const keptAnswers = new WeakMap(); // payload -> when the worker got it (ms)
const answerListeners = new Set();

/** When the service worker got this answer, if it gave its kept copy (ms); else null. */
export function keptAt(payload) {
  return (payload && typeof payload === "object" && keptAnswers.get(payload)) || null;
}

/** listener({keptAt}) hears of every answer: keptAt is null for the server's answer of now. */
export function onAnswer(listener) {
  answerListeners.add(listener);
}

function answered(payload, kept) {
  if (payload && typeof payload === "object") {
    if (kept) keptAnswers.set(payload, kept);
    else keptAnswers.delete(payload);
  }
  for (const listener of answerListeners) listener({ keptAt: kept });
}

export async function request(method, url, {
  params, body, headers: extra = {}, timeoutMs = 15000, keep = null,
} = {}) {
  const target = new URL(url, window.location.origin);
  for (const [key, value] of Object.entries(params ?? {})) {
    if (value !== undefined && value !== null) target.searchParams.set(key, String(value));
  }
  const headers = { Accept: "application/json", ...extra };
  if (keep !== null && method === "GET") headers[KEEP_HEADER] = String(keep);
  if (method !== "GET") {
    headers["Content-Type"] = "application/json";
    headers["X-CSRFToken"] = csrfToken();
  }
  const key = target.toString();
  const known = method === "GET" ? answers.get(key) : undefined;
  if (known) headers["If-None-Match"] = known.etag;
  // A hung server must not hang the poll loop forever.
  const controller = new AbortController();
  const timer = window.setTimeout(() => controller.abort(), timeoutMs);
  let response;
  try {
    response = await fetch(target, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      // The conditional request is ours: the browser's HTTP cache stays out of it.
      cache: "no-store",
      signal: controller.signal,
    });
  } catch {
    throw new ApiError(0, "");
  } finally {
    window.clearTimeout(timer);
  }
  if (response.status === 204) {
    answered(null, null);
    return null;
  }
  if (response.status === 304 && known) {
    answered(known.payload, null); // confirmed current, even if it was a kept copy
    return known.payload;
  }
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (!response.ok) {
    const retryAfter = Number.parseFloat(response.headers.get("Retry-After") ?? "");
    throw new ApiError(response.status, firstError(payload),
                       Number.isFinite(retryAfter) ? retryAfter : null, payload);
  }
  const etag = response.headers.get("ETag");
  if (method === "GET" && etag) remember(key, etag, payload);
  const kept = Number.parseInt(response.headers.get(KEPT_AT_HEADER) ?? "", 10);
  answered(payload, Number.isFinite(kept) ? kept : null);
  return payload;
}

/** `keep`: the user's id, for an answer the service worker keeps for a reload offline. */
export const get = (url, params, { keep = null } = {}) => request("GET", url, { params, keep });
export const post = (url, body, headers) => request("POST", url, { body, headers });
export const del = (url, params) => request("DELETE", url, { params });
export const put = (url, body) => request("PUT", url, { body });

/**
 * A fresh Idempotency-Key: a write sent again with the same key is answered, not done twice.
 * crypto.randomUUID exists only on HTTPS (and localhost); getRandomValues everywhere.
 */
export function idempotencyKey() {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A message for people from a failed action: the server's own words when it gave some. */
export function describeError(error) {
  if (!(error instanceof ApiError)) return gettext("Something went wrong. Please try again.");
  if (error.status === 0) return gettext("No connection to the server. Please try again.");
  if (error.status === 503) {
    return gettext("The message store is unavailable right now. Please try again shortly.");
  }
  if (error.status === 401) return gettext("Your session has ended. Please sign in again.");
  return error.detail || gettext("Something went wrong. Please try again.");
}
