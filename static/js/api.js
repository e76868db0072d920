/**
 * api.js: a JSON call to /api with the session's CSRF token (players.js re-exports it).
 *
 *   apiCall(method, path, body)   throws ApiError(status, code, detail) on a 4xx/5xx; a
 *                                 network failure throws the browser's own error
 */

export class ApiError extends Error {
  constructor(status, code, detail) {
    super(detail || `HTTP ${status}`);
    this.status = status;
    this.code = code || "";
    this.detail = detail || "";
  }
}

function cookie(name) {
  for (const part of document.cookie.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return decodeURIComponent(rest.join("="));
  }
  return "";
}

async function csrfToken() {
  let token = cookie("csrftoken");
  if (!token) {
    await fetch("/api/csrf", { credentials: "same-origin" });
    token = cookie("csrftoken");
  }
  return token;
}

export async function apiCall(method, path, body = undefined) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") {
    headers["X-CSRFToken"] = await csrfToken();
  }
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(`/api${path}`, {
    method,
    credentials: "same-origin",
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try {
    data = await response.json();
  } catch (_error) {
    data = null;
  }
  if (!response.ok) {
    const detail = data && typeof data.detail === "string" ? data.detail : "";
    throw new ApiError(response.status, data && data.code, detail);
  }
  return data;
}
