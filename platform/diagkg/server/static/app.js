// diagkg web page: plain JavaScript, no libraries. Talks to the JSON API (/api, see /docs) and /sparql.
"use strict";

const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined) e.setAttribute(k, v);
  }
  for (const kid of kids) e.append(kid instanceof Node ? kid : document.createTextNode(String(kid ?? "")));
  return e;
};

// the token is kept for this tab only (sessionStorage), never on disk; older pages kept it in localStorage
const tokenInput = $("#token");
localStorage.removeItem("diagkg-token");
tokenInput.value = sessionStorage.getItem("diagkg-token") || "";
tokenInput.addEventListener("input", () => sessionStorage.setItem("diagkg-token", tokenInput.value));

// what a request shows is shown only while it is the last of its kind asked for: an earlier one answered
// later (a load refused slowly, the scenario chosen before the last) does not overwrite a later answer
const asked = {};
function ask(kind) {
  const n = (asked[kind] || 0) + 1;
  asked[kind] = n;
  return () => asked[kind] === n;
}
async function api(path, opts = {}) {
  const headers = Object.assign({}, opts.headers || {});
  if (tokenInput.value) headers["Authorization"] = "Bearer " + tokenInput.value;
  return fetch(path, Object.assign({}, opts, { headers }));
}
async function json(path, opts) {
  const r = await api(path, opts);
  if (!r.ok) throw new Error(`${r.status}: ${await r.text()}`);
  return r.json();
}
function errorText(t) {
  try { const j = JSON.parse(t); return j.detail || t; } catch (e) { return t; }
}

// --- tabs -------------------------------------------------------------------
for (const b of document.querySelectorAll("nav button")) {
  b.addEventListener("click", () => showTab(b.dataset.tab));
}
function showTab(name) {
  for (const b of document.querySelectorAll("nav button")) b.classList.toggle("on", b.dataset.tab === name);
  for (const s of document.querySelectorAll(".tab")) s.classList.toggle("on", s.id === "tab-" + name);
  if (name === "trajectories") loadTrajectories();
}

// --- scenarios: browse, author, validate, load ----------------------------------------
let systems = [];
async function loadSystems() {
  systems = await json("/api/systems");
  const sel = $("#system");
  sel.replaceChildren(...systems.map((s) => el("option", { value: s.key }, `${s.label} (${s.key})`)));
  await systemChanged();
}
async function systemChanged() {
  const key = $("#system").value;
  const current = ask("system");
  const rows = await json("/api/scenarios?system=" + encodeURIComponent(key));
  if (!current()) return;
  $("#scenario").replaceChildren(el("option", { value: "" }, "(nominal)"),
    ...rows.map((r) => el("option", { value: r.id }, `${r.number} ${r.id}: ${r.label}`)));
  showSchematic($("#schematic"), key, "");
}
async function showSchematic(target, key, scenario, extra = "") {
  const q = scenario ? "?scenario=" + encodeURIComponent(scenario) + extra : "";
  const current = ask("schematic:" + target.id);
  target.textContent = "drawing…";
  const r = await api(`/api/systems/${encodeURIComponent(key)}/schematic.svg${q}`);
  const text = await r.text();
  if (!current()) return;
  if (r.ok) target.innerHTML = text; else target.textContent = errorText(text);
  target.dataset.system = key;
  $("#schematic-png").href = `/api/systems/${encodeURIComponent(key)}/schematic.png${q}`;
}
async function scenarioChanged() {
  const id = $("#scenario").value;
  showSchematic($("#schematic"), $("#system").value, id);
  const current = ask("scenario");
  if (!id) return;
  const s = await json("/api/scenarios/" + encodeURIComponent(id));
  if (!current()) return;          // another scenario was chosen meanwhile: its text, not this one's
  $("#editor").value = s.turtle;
  $("#filename").value = id + ".ttl";
  clearReport();
}
function newScenario() {
  const sys = systems.find((s) => s.key === $("#system").value);
  if (!sys) return;
  $("#editor").value = [
    "@prefix :        <https://example.org/my-scenarios/> .",
    `@prefix sys:     <${sys.system.replace(/[^/#]*$/, "")}> .`,
    "@prefix dk:      <https://w3id.org/diagkg/ontology#> .",
    "@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .",
    "@prefix dcterms: <http://purl.org/dc/terms/> .",
    "",
    ":MY.1 a dk:Scenario ;",
    "    dk:scenarioNumber 9901 ;",
    "    dcterms:identifier \"MY.1\" ;",
    "    rdfs:label \"My scenario\" ;",
    `    dk:onSystem <${sys.system}> ;`,
    "    dk:hasCategory dk:Simple ;",
    "    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:PART ] ;",
    "    dk:initialObservations \"What the user reports.\" ;",
    "    dk:faultyComponent sys:PART ;",
    "    dk:idealRepair [ a dk:RepairPlan ;",
    "        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:PART ] ] ;",
    "    dk:actionBudget 10 .", ""].join("\n");
  $("#filename").value = "my-scenario.ttl";
  clearReport();
}
function clearReport() { $("#verdict").textContent = ""; $("#verdict").className = "verdict"; $("#annotated").replaceChildren(); }

function showReport(report, loadedText) {
  const v = $("#verdict");
  const n = report.violations.length;
  if (loadedText) { v.textContent = loadedText; v.className = "verdict ok"; }
  else if (report.error) { v.textContent = "Unreadable: " + report.error.message; v.className = "verdict bad"; }
  else if (n === 0) { v.textContent = "Conforms: no violation."; v.className = "verdict ok"; }
  else { v.textContent = `${n} violation(s); nothing was loaded.`; v.className = "verdict bad"; }
  // each message next to the line it names
  const byLine = new Map();
  const add = (line, text) => { const k = line || 0; if (!byLine.has(k)) byLine.set(k, []); byLine.get(k).push(text); };
  for (const viol of report.violations) add(viol.line, `${viol.focus} — ${viol.path} — ${viol.message}` + (viol.value ? ` (value: ${viol.value})` : ""));
  if (report.error) add(report.error.line, report.error.detail || report.error.message);
  for (const w of report.warnings || []) add(w.line, `warning: ${w.scenario}: ${w.check}: ${w.message}`);
  const out = $("#annotated");
  out.replaceChildren();
  if (byLine.size === 0) return;
  for (const m of byLine.get(0) || []) out.append(el("div", { class: "msg" }, m));
  $("#editor").value.split("\n").forEach((text, i) => {
    const msgs = byLine.get(i + 1);
    out.append(el("div", { class: "line" + (msgs ? " bad" : ""), "data-line": i + 1 }, el("span", { class: "no" }, i + 1), text));
    for (const m of msgs || []) out.append(el("div", { class: "msg", "data-line": i + 1 }, m));
  });
}
async function validate() {
  const current = ask("verdict");
  const r = await api("/api/scenarios/validate?name=" + encodeURIComponent($("#filename").value),
    { method: "POST", body: $("#editor").value, headers: { "Content-Type": "text/turtle" } });
  const report = await r.json();
  if (current()) showReport(report);
}
async function load() {
  const current = ask("verdict");
  const r = await api("/api/scenarios?name=" + encodeURIComponent($("#filename").value),
    { method: "POST", body: $("#editor").value, headers: { "Content-Type": "text/turtle" } });
  const text = await r.text();
  if (r.status === 200) {
    const rep = JSON.parse(text);
    if (current()) {
      showReport(rep, "Loaded: " + rep.loaded.map((l) => `${l.graph} (${l.triples} triples)`).join(", "));
    }
    await systemChanged(); await loadDiagnosisMenus();       // loaded all the same: the menus show it
  } else if (!current()) return;
  else if (r.status === 422) showReport(JSON.parse(text));
  else { $("#verdict").textContent = errorText(text); $("#verdict").className = "verdict bad"; $("#annotated").replaceChildren(); }
}
$("#system").addEventListener("change", systemChanged);
$("#scenario").addEventListener("change", scenarioChanged);
$("#new-scenario").addEventListener("click", newScenario);
$("#validate").addEventListener("click", validate);
$("#load").addEventListener("click", load);
$("#upload").addEventListener("change", async (ev) => {
  const f = ev.target.files[0]; if (!f) return;
  $("#editor").value = await f.text(); $("#filename").value = f.name; clearReport();
});
$("#run-this").addEventListener("click", () => {
  const m = $("#editor").value.match(/dcterms:identifier\s+"([^"]+)"/);
  showTab("diagnosis");
  if (m) $("#d-scenario").value = m[1];
});

// --- diagnosis: watch or take part ----------------------------------------------------
let current = null, source = null;
async function loadDiagnosisMenus() {
  const rows = await json("/api/scenarios");
  const keep = $("#d-scenario").value;
  $("#d-scenario").replaceChildren(...rows.map((r) => el("option", { value: r.id, "data-system": r.key }, `${r.number} ${r.id}: ${r.label}`)));
  if (keep) $("#d-scenario").value = keep;
  const names = await json("/api/assistants");
  $("#d-assistant").replaceChildren(...names.map((n) => el("option", { value: n }, n === "human" ? "human (me, from menus)" : n)));
  $("#d-assistant").value = names.includes("oracle") ? "oracle" : names[0];
}
function say(cls, ...parts) { const li = el("li", { class: cls }, ...parts); $("#chat").append(li); li.scrollIntoView({ block: "nearest" }); return li; }
async function start() {
  const body = { scenario: $("#d-scenario").value, assistant: $("#d-assistant").value, service: $("#d-service").value,
    seed: Number($("#d-seed").value || 0) };
  $("#chat").replaceChildren(); $("#d-pending").replaceChildren();
  const r = await api("/api/sessions", { method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
  const text = await r.text();
  if (!r.ok) { $("#d-status").textContent = errorText(text); $("#d-status").className = "verdict bad"; return; }
  current = JSON.parse(text);
  $("#d-status").textContent = `Session ${current.id}: ${body.assistant} on ${body.scenario}`; $("#d-status").className = "verdict";
  const opt = $("#d-scenario").selectedOptions[0];
  if (opt) showSchematic($("#d-schematic"), opt.dataset.system, body.scenario, "&faults=false");
  if (source) source.close();
  source = new EventSource(`/api/sessions/${current.id}/events`);
  source.addEventListener("start", (e) => { const d = JSON.parse(e.data); say("service", `Reported: ${d.symptoms}`); });
  source.addEventListener("suggestion", (e) => { const d = JSON.parse(e.data); say("assistant", "Suggests: " + d.suggestion.text); });
  source.addEventListener("waiting", (e) => showPending(JSON.parse(e.data).pending));
  source.addEventListener("round", (e) => {
    const r = JSON.parse(e.data).round;
    $("#d-pending").replaceChildren();
    const what = r.action ? `${r.action.action} ${r.action.targets.join(" ")}` : r.suspects ? `hypothesis: ${r.suspects.join(", ")}` : r.intention;
    say("assistant", `Round ${r.round}: ${what}`);
    say("service", r.message, el("span", { class: "cost" }, ` — ${r.kind}, ${r.success ? "success" : "no success"}, cost ${r.cost} min`));
    refreshSessionSchematic(current.id);
  });
  source.addEventListener("end", (e) => {
    const d = JSON.parse(e.data).result;
    say("end", `End: ${d.end} after ${d.rounds} round(s), ${d.cost} min. Trajectory ${d.trajectory}`);
    $("#d-pending").replaceChildren(); source.close();
  });
  source.addEventListener("error", (e) => {
    if (e.data) { say("error", JSON.parse(e.data).message); source.close(); }
  });
}
async function refreshSessionSchematic(id) {
  // the system as it is now (lamps as simulated; faults not shown)
  const r = await api(`/api/sessions/${id}/schematic.svg`);
  if (r.ok && current && current.id === id) { const t = $("#d-schematic"); t.innerHTML = await r.text(); t.dataset.round = String(Number(t.dataset.round || 0) + 1); }
}
async function answer(body) {
  const r = await api(`/api/sessions/${current.id}/step`, { method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" } });
  if (!r.ok) { const p = $("#d-pending"); p.prepend(el("div", { class: "error" }, errorText(await r.text()))); }
}
function showPending(p) {
  const box = $("#d-pending");
  // each answer names its question: a second click is refused, not taken for the next question's answer
  const step = (body) => answer({ ...body, question: p.question });
  if (p.kind === "execute") {
    box.replaceChildren(el("div", {}, "You are the service agent. The assistant asks you to: ", el("b", {}, p.suggestion.text)),
      el("div", { class: "row" }, el("button", { id: "do-execute", onclick: () => step({ execute: true }) }, "Carry it out"),
        el("button", { onclick: () => step({ stop: true }) }, "Stop the session")));
    return;
  }
  const menus = p.menus;
  const actionSel = el("select", { id: "m-action" }, ...menus.actions.map((a) => el("option", { value: a.id }, `${a.label} (${a.cost} min)`)));
  const targets = el("span", { id: "m-targets" });
  const value = el("input", { id: "m-value", type: "number", step: "any", placeholder: "value", style: "display:none" });
  const refresh = () => {
    const a = menus.actions.find((x) => x.id === actionSel.value);
    targets.replaceChildren(...Array.from({ length: a.target_count }, (_, i) =>
      el("select", { class: "m-target", "data-n": i }, ...a.targets.map((t) => el("option", { value: t }, t)))));
    value.style.display = a.parameter ? "" : "none"; value.placeholder = a.parameter || "value";
  };
  actionSel.addEventListener("change", refresh);
  const parts = el("div", { class: "parts" }, ...menus.parts.map((pt) =>
    el("label", {}, el("input", { type: "checkbox", class: "m-part", value: pt.id }), ` ${pt.id} (${pt.label})`)));
  box.replaceChildren(el("div", {}, "You are the assistant: choose an action, or name the faulty parts."),
    el("div", { class: "row" }, actionSel, targets, value,
      el("button", { id: "m-suggest", onclick: () => step({ action: actionSel.value,
        targets: [...box.querySelectorAll(".m-target")].map((s) => s.value),
        value: value.style.display === "none" || value.value === "" ? null : Number(value.value) }) }, "Suggest this action")),
    parts,
    el("div", { class: "row" },
      el("button", { id: "m-claim", onclick: () => step({ hypothesis: [...box.querySelectorAll(".m-part:checked")].map((c) => c.value) }) }, "These parts are faulty"),
      el("button", { onclick: () => step({ give_up: true }) }, "Give up")));
  refresh();
}
$("#d-start").addEventListener("click", start);

// --- trajectories ----------------------------------------------------------------------
async function loadTrajectories() {
  const rows = await json("/api/trajectories");
  const table = $("#t-list");
  table.replaceChildren(el("tr", {}, ...["started", "scenario", "assistant", "end", "rounds", "cost"].map((h) => el("th", {}, h))),
    ...rows.map((r) => el("tr", { class: "clickable", onclick: () => { $("#t-view").src = `/api/trajectories/${r.trajectory.split("/trajectory/")[1]}/transcript.html`; } },
      ...[r.started, r.id, r.assistant, r.end, r.rounds, r.cost].map((v) => el("td", {}, v)))));
}

// --- SPARQL ---------------------------------------------------------------------------
let examples = [];
async function loadExamples() {
  examples = await json("/api/queries");
  $("#q-examples").append(...examples.map((q) => el("option", { value: q.name }, `${q.name} — ${q.summary}`)));
}
$("#q-examples").addEventListener("change", () => {
  const q = examples.find((x) => x.name === $("#q-examples").value);
  if (q) $("#q-text").value = q.text;
});
$("#q-run").addEventListener("click", async () => {
  $("#q-error").textContent = ""; $("#q-results").replaceChildren(); $("#q-info").textContent = "running…";
  const current = ask("query");
  const t0 = performance.now();
  const r = await fetch("/sparql", { method: "POST", body: new URLSearchParams({ query: $("#q-text").value }),
    headers: { Accept: "application/sparql-results+json" } });
  const text = await r.text();
  if (!current()) return;
  $("#q-info").textContent = `${r.status} in ${Math.round(performance.now() - t0)} ms`;
  if (!r.ok) { $("#q-error").textContent = text; return; }
  if (!r.headers.get("content-type").includes("json")) { $("#q-error").textContent = text; return; }
  const data = JSON.parse(text);
  if ("boolean" in data) { $("#q-results").append(el("tr", {}, el("td", {}, String(data.boolean)))); return; }
  const vars = data.head.vars;
  $("#q-results").append(el("tr", {}, ...vars.map((v) => el("th", {}, v))),
    ...data.results.bindings.map((b) => el("tr", {}, ...vars.map((v) => el("td", {}, b[v] ? b[v].value : "")))));
  $("#q-info").textContent += `, ${data.results.bindings.length} row(s)`;
});

// --- start ------------------------------------------------------------------------------
loadSystems().catch((e) => { $("#verdict").textContent = String(e); });
loadDiagnosisMenus().catch(() => {});
loadExamples().catch(() => {});
