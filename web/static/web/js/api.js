// The REST API client: JSON in and out, session cookie plus CSRF header on writes, and
// errors as ApiError so the poller can tell "try again later" from "you are signed out".

export class ApiError extends Error {
  /**
   * status 0 means the request never got an answer (network down, server gone).
   * retryAfter is the server's Retry-After in seconds, when it sent one (503, 429).
   */
  constructor(status, detail, retryAfter = null) {
    super(detail || `HTTP ${status}`);
    this.status = status;
    this.detail = detail;
    this.retryAfter = retryAfter;
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

export async function request(method, url, { params, body, timeoutMs = 15000 } = {}) {
  const target = new URL(url, window.location.origin);
  for (const [key, value] of Object.entries(params ?? {})) {
    if (value !== undefined && value !== null) target.searchParams.set(key, String(value));
  }
  const headers = { Accept: "application/json" };
  if (method !== "GET") {
    headers["Content-Type"] = "application/json";
    headers["X-CSRFToken"] = csrfToken();
  }
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
      signal: controller.signal,
    });
  } catch {
    throw new ApiError(0, "");
  } finally {
    window.clearTimeout(timer);
  }
  if (response.status === 204) return null;
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (!response.ok) {
    const retryAfter = Number.parseFloat(response.headers.get("Retry-After") ?? "");
    throw new ApiError(response.status, firstError(payload),
                       Number.isFinite(retryAfter) ? retryAfter : null);
  }
  return payload;
}

export const get = (url, params) => request("GET", url, { params });
export const post = (url, body) => request("POST", url, { body });

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
