// The node's dashboard: the admin listener's JSON, read every two seconds,
// and its tokens. Values are written with textContent only, never as markup.
"use strict";

const refreshMs = 2000;
const tokenKey = "pico.token"; // the bearer token, in sessionStorage

function show(el, text) {
  el.textContent = text;
}

function note(el, text, error) {
  el.classList.toggle("error", error);
  show(el, text);
}

function rows(dl, pairs) {
  dl.replaceChildren();
  for (const [term, value] of pairs) {
    const dt = document.createElement("dt");
    const dd = document.createElement("dd");
    show(dt, term);
    show(dd, String(value));
    dl.append(dt, dd);
  }
}

function cells(values) {
  const tr = document.createElement("tr");
  for (const v of values) {
    const td = document.createElement("td");
    if (v instanceof Node) {
      td.append(v);
    } else {
      show(td, String(v));
    }
    tr.append(td);
  }
  return tr;
}

// api sends a request with the stored token and returns the JSON answer
// (null when there is none). On a 401 it asks for a token and retries.
async function api(path, options = {}) {
  for (;;) {
    const headers = new Headers(options.headers);
    const token = sessionStorage.getItem(tokenKey);
    if (token) {
      headers.set("Authorization", "Bearer " + token);
    }
    const resp = await fetch(path, { ...options, headers, cache: "no-store" });
    const text = await resp.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: the status says what happened
    }
    const message = (body && body.error) || resp.status + " " + resp.statusText;
    if (resp.status === 401) {
      sessionStorage.removeItem(tokenKey);
      await askToken(message);
      continue;
    }
    if (!resp.ok) {
      throw new Error(message);
    }
    return body;
  }
}

// The token form: requests refused meanwhile wait until a token is stored.
const waiting = [];

function tokenForm() {
  let form = document.getElementById("auth");
  if (form) {
    return form;
  }
  form = document.createElement("form");
  form.id = "auth";
  const reason = document.createElement("p");
  const input = document.createElement("input");
  input.type = "password";
  input.autocomplete = "off";
  input.placeholder = "bearer token";
  input.required = true;
  const button = document.createElement("button");
  button.type = "submit";
  show(button, "use token");
  form.append(reason, input, button);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) {
      return;
    }
    sessionStorage.setItem(tokenKey, token);
    input.value = "";
    form.hidden = true;
    showForget();
    for (const resolve of waiting.splice(0)) {
      resolve();
    }
  });
  document.querySelector("main").prepend(form);
  return form;
}

function askToken(reason) {
  const form = tokenForm();
  show(form.querySelector("p"), "This node wants a bearer token (" + reason + ").");
  form.hidden = false;
  form.querySelector("input").focus();
  note(document.getElementById("status"), "waiting for a token", true);
  return new Promise((resolve) => waiting.push(resolve));
}

function showForget() {
  document.getElementById("forget").hidden = !sessionStorage.getItem(tokenKey);
}

function forget() {
  sessionStorage.removeItem(tokenKey);
  showForget();
  refresh();
}

let refreshing = false; // one refresh at a time, also while a token is asked

async function refresh() {
  if (refreshing) {
    return;
  }
  refreshing = true;
  const status = document.getElementById("status");
  try {
    const c = await api("/admin/cluster");
    rows(document.getElementById("cluster"), [
      ["applied index", c.appliedIndex],
      ["streams", c.streamCount],
      ["garbage objects", c.garbageObjects],
      ["maintenance lease", c.leaseHeldHere ? "held by this node (epoch " + c.leaseEpoch + ")" : "not held by this node"],
    ]);
    document.getElementById("nodes").replaceChildren(
      ...c.nodes.map((n) => cells([n.id, n.epoch, n.address, n.slots, n.assignedStreams, n.state || "-",
        n.heartbeatAgeMs === undefined ? "-" : (n.heartbeatAgeMs / 1000).toFixed(1) + " s ago"])));
    note(status, "updated " + new Date().toLocaleTimeString(), false);
  } catch (err) {
    note(status, "cannot read the cluster: " + err.message, true);
  } finally {
    refreshing = false;
  }
}

// streamPath is the admin path of a stream name, which is its path as the
// stream listeners see it ("orders" is "/orders"), as the CLI sends it;
// only "?" and "#", which would end a path, are escaped.
function streamPath(name) {
  const path = name.startsWith("/") ? name : "/" + name;
  return "/admin/streams" + path.replace(/[?#]/g, encodeURIComponent);
}

async function lookup(event) {
  event.preventDefault();
  const dl = document.getElementById("stream");
  try {
    const s = await api(streamPath(document.getElementById("name").value));
    rows(dl, [
      ["name", s.name],
      ["content type", s.contentType],
      ["owner", "node " + s.owner + " at epoch " + s.ownerEpoch + (s.open ? " (open)" : " (not open)")],
      ["stream epoch", s.streamEpoch],
      ["closed", s.closed],
      ["committed", "[" + s.start + ", " + s.committedEnd + ") in " + s.objects + " objects"],
      ["transfer to", s.transferTo ? "node " + s.transferTo : "none"],
    ]);
  } catch (err) {
    rows(dl, [["error", err.message]]);
  }
}

// Tokens.

function matchers(list) {
  return (list || []).map((m) => (m.prefix !== undefined ? m.prefix + "*" : m.exact)).join(", ");
}

// scopeSummary says in a line what a scope grants, but for its audiences
// and expiry, which have their own columns.
function scopeSummary(scope) {
  const parts = [];
  if (scope.streams && scope.streams.length) {
    parts.push("streams " + matchers(scope.streams));
  }
  if (scope.tokens && scope.tokens.length) {
    parts.push("tokens " + matchers(scope.tokens));
  }
  const grants = [];
  for (const [group, rw] of Object.entries(scope.groups || {})) {
    if (rw.read) {
      grants.push(group + " read");
    }
    if (rw.write) {
      grants.push(group + " write");
    }
  }
  grants.push(...(scope.ops || []));
  parts.push(grants.length ? grants.join(", ") : "no operations");
  if (scope.autoPrefixStreams) {
    parts.push("names relative to its prefix");
  }
  return parts.join("; ");
}

function expiry(scope) {
  if (scope.expiresAtMs == null) {
    return "never";
  }
  const when = new Date(scope.expiresAtMs).toLocaleString();
  return scope.expiresAtMs <= Date.now() ? when + " (expired)" : when;
}

function tokenRow(tok) {
  const scope = tok.scope || {};
  const button = document.createElement("button");
  button.type = "button";
  show(button, "revoke");
  button.addEventListener("click", () => revoke(tok.id));
  return cells([tok.id, tok.issuer || "-", (scope.audiences || []).join(", ") || "none",
    scopeSummary(scope), expiry(scope), new Date(tok.createdAtMs).toLocaleString(), button]);
}

async function loadTokens(done = "") {
  const status = document.getElementById("tokens-status");
  const tbody = document.getElementById("tokens");
  try {
    const list = await api("/admin/tokens");
    tbody.replaceChildren(...list.tokens.map(tokenRow));
    note(status, done || list.tokens.length + " tokens", false);
  } catch (err) {
    tbody.replaceChildren();
    note(status, (done ? done + "; " : "") + "cannot list the tokens: " + err.message, true);
  }
}

async function revoke(id) {
  if (!confirm("Revoke the token " + id + "? Requests that carry it will be refused.")) {
    return;
  }
  try {
    await api("/admin/tokens/" + encodeURIComponent(id), { method: "DELETE" });
  } catch (err) {
    note(document.getElementById("tokens-status"), "cannot revoke " + id + ": " + err.message, true);
    return;
  }
  await loadTokens("revoked " + id);
}

function showIssued(issued) {
  const box = document.getElementById("issued");
  const text = document.createElement("p");
  show(text, "The token " + issued.id + " is shown this once, never again: copy it now.");
  const wire = document.createElement("code");
  show(wire, issued.token);
  const done = document.createElement("button");
  done.type = "button";
  show(done, "done");
  done.addEventListener("click", () => {
    box.replaceChildren();
    box.hidden = true;
  });
  box.replaceChildren(text, wire, done);
  box.hidden = false;
}

async function issue(event) {
  event.preventDefault();
  const status = document.getElementById("tokens-status");
  const id = document.getElementById("token-id").value.trim();
  let scope;
  try {
    scope = JSON.parse(document.getElementById("token-scope").value);
  } catch (err) {
    note(status, "the scope is not JSON: " + err.message, true);
    return;
  }
  let issued;
  try {
    issued = await api("/admin/tokens", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id, scope }),
    });
  } catch (err) {
    note(status, "cannot issue " + id + ": " + err.message, true);
    return;
  }
  showIssued(issued);
  document.getElementById("token-id").value = "";
  await loadTokens("issued " + issued.id);
}

// The example scope: read and write streams under /logs/ for 30 days.
const exampleScope = {
  streams: [{ prefix: "/logs/" }],
  groups: { stream: { read: true, write: true } },
  audiences: ["pico"],
  expiresAtMs: Date.now() + 30 * 24 * 3600 * 1000,
};

document.getElementById("token-scope").value = JSON.stringify(exampleScope, null, 2);
document.getElementById("lookup").addEventListener("submit", lookup);
document.getElementById("issue").addEventListener("submit", issue);
document.getElementById("tokens-reload").addEventListener("click", () => loadTokens());
document.getElementById("forget").addEventListener("click", forget);
showForget();
refresh();
loadTokens();
setInterval(refresh, refreshMs);
