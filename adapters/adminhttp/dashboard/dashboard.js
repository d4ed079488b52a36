// The node's dashboard: the admin listener's JSON, read every two seconds.
// Values are written with textContent only, never as markup.
"use strict";

const refreshMs = 2000;

function show(el, text) {
  el.textContent = text;
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

async function getJSON(path) {
  const resp = await fetch(path, { cache: "no-store" });
  const body = await resp.json();
  if (!resp.ok) {
    throw new Error(body.error || resp.status + " " + resp.statusText);
  }
  return body;
}

async function refresh() {
  const status = document.getElementById("status");
  try {
    const c = await getJSON("/admin/cluster");
    rows(document.getElementById("cluster"), [
      ["applied index", c.appliedIndex],
      ["streams", c.streamCount],
      ["garbage objects", c.garbageObjects],
      ["maintenance lease", c.leaseHeldHere ? "held by this node (epoch " + c.leaseEpoch + ")" : "not held by this node"],
    ]);
    const tbody = document.getElementById("nodes");
    tbody.replaceChildren();
    for (const n of c.nodes) {
      const tr = document.createElement("tr");
      for (const v of [n.id, n.epoch, n.address, n.slots, n.assignedStreams]) {
        const td = document.createElement("td");
        show(td, String(v));
        tr.append(td);
      }
      tbody.append(tr);
    }
    status.classList.remove("error");
    show(status, "updated " + new Date().toLocaleTimeString());
  } catch (err) {
    status.classList.add("error");
    show(status, "cannot read the cluster: " + err.message);
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
    const s = await getJSON(streamPath(document.getElementById("name").value));
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

document.getElementById("lookup").addEventListener("submit", lookup);
refresh();
setInterval(refresh, refreshMs);
