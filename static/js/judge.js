// The judge console: every judge action is a call to the JSON API (docs/api.md), with the
// session cookie and the CSRF token; what the console shows is the judge's state from
// GET /api/tournaments/<id>/state, kept fresh by live.js, and the log from .../log?after=.
//
// Strings come translated from the page (#judge-config); errors are the API's own `detail`.

import { showCommitment } from "./commitment.js";
import { el } from "./dom.js";
import { formatClock } from "./format.js";
import { connectLive, remainingSeconds, turnOver } from "./live.js";
import { drawScoreChart, fill, formatTime, turnWords } from "./screen.js";

const config = JSON.parse(document.getElementById("judge-config").textContent);
const S = config.strings;
const $ = (id) => document.getElementById(id);
const provinces = Object.fromEntries(config.provinces.map((p) => [p.id, p]));
const clans = Object.fromEntries(config.clans.map((c) => [c.id, c]));

let state = JSON.parse(document.getElementById("initial-state").textContent);
let offsetMs = 0;
let players = config.players;
let lastLogId = 0;
let logBusy = false;
let overlay = null;
let selectedArmy = "";
const LOG_ROWS_KEPT = 400;

// --- Small helpers ----------------------------------------------------------------------------

function provinceName(id) {
  return id ? provinces[id]?.name || id : "";
}

function clanName(id) {
  return id ? clans[id]?.name || id : S.nobody;
}

// Who gave an order, as the log names him (referees/log_texts.py log_who): "Ivan (General,
// Crab)" or "judge Anna" in the page's language, not the stored "general Ivan (crab)".
function whoText(label) {
  if (!label) return "";
  if (label.startsWith("judge ")) return fill(S.judge_named, { name: label.slice("judge ".length) });
  const found = /^(general|daimyo|karo) (.+) \(([a-z]+)\)$/.exec(label);
  if (!found) return label;
  return fill(S.player_named, { name: found[2], role: config.roles[found[1]] || found[1], clan: clanName(found[3]) });
}

function clanTag(clan) {
  const tag = el("span", { className: `clan clan-${clan}`, text: clanName(clan) });
  return tag;
}

function option(value, label, selected = false) {
  const node = el("option", { text: label, attrs: { value } });
  if (selected) node.selected = true;
  return node;
}

function fillSelect(select, options, keep = true) {
  const previous = keep ? select.value : "";
  select.replaceChildren(...options);
  if (keep && [...select.options].some((o) => o.value === previous)) select.value = previous;
}

function say(message, kind = "info") {
  const box = $("console-message");
  box.textContent = message;
  box.className = `console-message is-${kind}`;
  box.hidden = !message;
  box.setAttribute("role", kind === "error" ? "alert" : "status");
}

// --- The API ----------------------------------------------------------------------------------

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

class ApiError extends Error {}

async function api(method, path, body) {
  if (!csrfToken()) {
    try {
      await fetch("/api/csrf", { credentials: "same-origin" });
    } catch {
      throw new ApiError(S.network_error);
    }
  }
  const headers = { Accept: "application/json", "X-CSRFToken": csrfToken() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(`${config.api}${path}`, {
      method,
      headers,
      credentials: "same-origin",
      cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(S.network_error);
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(data?.detail || fill(S.server_error, { status: response.status }));
  return data;
}

/** Run one judge action: the button waits, the answer (or the API's refusal) is shown. */
async function act(button, run, success = S.done) {
  if (button) button.disabled = true;
  say(S.working);
  try {
    const result = await run();
    say(typeof success === "function" ? success(result) : success, "ok");
    await refreshState();
    return result;
  } catch (error) {
    say(error instanceof ApiError ? error.message : String(error), "error");
    return null;
  } finally {
    if (button) button.disabled = false;
  }
}

async function refreshState() {
  try {
    const fresh = await api("GET", "/state");
    if (fresh.tournament.version >= state.tournament.version) apply(fresh);
  } catch (error) {
    console.warn("judge: could not fetch the state", error);
  }
  loadLog();
}

async function loadPlayers() {
  try {
    players = await api("GET", "/players");
    drawPlayers();
    drawPositions();
    drawArmySelects();
  } catch (error) {
    say(error.message, "error");
  }
}

// --- Drawing the state -------------------------------------------------------------------------

function phase() {
  return state.tournament.clock.phase;
}

function drawHead() {
  const t = state.tournament;
  const p = phase();
  $("judge-console").dataset.phase = p;
  $("phase-label").textContent = config.phases[p] || p;
  $("clock-phase").textContent = config.phases[p] || p;
  $("turn-label").textContent = t.ended_after_turn != null
    ? turnWords(t, S)
    : t.turn ? (t.turns_total ? `${t.turn} / ${t.turns_total}` : String(t.turn)) : "—";
  showCommitment(state);
  const paused = Boolean(t.clock.paused);
  $("clock-paused").hidden = !paused;
  const hasClock = t.clock.deadline !== null || paused;
  const running = !["setup", "finished"].includes(p);
  $("btn-pause").hidden = paused;
  $("btn-resume").hidden = !paused;
  $("btn-pause").disabled = !running || !hasClock;
  $("btn-resume").disabled = !running;
  for (const button of document.querySelectorAll('[data-action="extend"]')) button.disabled = !running || !hasClock;
  $("btn-start").hidden = p !== "setup";
  $("btn-advance").hidden = !["planning", "deployment", "negotiation"].includes(p);
  $("btn-resolve").hidden = p !== "running";
  $("btn-resolve").textContent = t.turn ? `${$("btn-resolve").dataset.label} (${t.turn})` : $("btn-resolve").dataset.label;
  $("btn-end").hidden = !running;
  $("btn-redraw").hidden = p !== "running";
  $("btn-reopen").hidden = p !== "finished";
  $("clock-deadline").textContent = t.clock.deadline ? fill(S.deadline_at, { time: formatTime(t.clock.deadline, config.timeZone, true) }) : "";
  $("register-form").hidden = p !== "setup";
  $("undo-row").hidden = !["running", "finished"].includes(p);
  $("screen-gong").checked = Boolean(t.screen_gong);
  $("positions-form").hidden = !["planning", "deployment"].includes(p);
  $("declared-panel").hidden = !["planning", "deployment"].includes(p);
}

// R3.1: which clans have declared their starting positions (state.declared_clans).
function drawDeclared() {
  const panel = $("declared-panel");
  const items = Object.entries(state.declared_clans || {}).map(([clan, declared]) =>
    el("li", { className: declared ? "is-declared" : "is-undeclared", attrs: { "data-clan": clan } },
      clanTag(clan), document.createTextNode(` — ${declared ? panel.dataset.declared : panel.dataset.undeclared}`)));
  $("declared-clans").replaceChildren(...items);
}

function tick() {
  const seconds = remainingSeconds(state, offsetMs);
  const node = $("countdown");
  // Past the deadline the clock has nothing to count; the result is being worked out.
  const over = turnOver(state, offsetMs);
  const text = over ? S.turn_over : seconds === null ? S.no_clock : formatClock(seconds);
  if (node.textContent !== text) node.textContent = text;
  node.classList.toggle("is-idle", seconds === null || over);
  node.classList.toggle("is-low", seconds !== null && seconds < 60 && !state.tournament.clock.paused);
}

function orderText(order) {
  if (!order) return S.no_order;
  let text;
  if (order.kind === "move") text = fill(S.move_to, { path: order.path.map(provinceName).join(" → ") });
  else if (order.kind === "reform") text = fill(S.reform_in, { province: provinceName(order.reform) });
  else text = S.hold;
  const notes = [];
  if (order.claim === false) notes.push(S.no_claim);
  if (order.on_swap === "stay") notes.push(S.on_swap_stay);
  return notes.length ? `${text} (${notes.join(", ")})` : text;
}

function armyPlace(army) {
  if (army.destroyed) return S.destroyed;
  const name = provinceName(army.province);
  return army.in_battle ? `${name} (${S.in_battle})` : name;
}

function sortedArmies() {
  return [...state.armies].sort((a, b) => a.clan.localeCompare(b.clan) || a.id.localeCompare(b.id, undefined, { numeric: true }));
}

function drawOrders() {
  const orders = Object.fromEntries(state.orders.map((o) => [o.army, o]));
  const rows = sortedArmies().map((army) => {
    const order = orders[army.id];
    const tr = el("tr", { className: army.id === selectedArmy ? "is-selected" : "" });
    tr.dataset.army = army.id;
    const code = el("th", { attrs: { scope: "row" } }, el("span", { className: `swatch swatch-${army.clan}` }), document.createTextNode(army.id));
    tr.append(
      code,
      el("td", { text: armyPlace(army) }),
      el("td", { text: army.destroyed && !order ? fill(S.destroyed_reform, { turn: army.reform_from ?? "?" }) : orderText(order), className: order ? "" : "muted" }),
      el("td", { text: order ? whoText(order.given_by) : "", attrs: order?.by_judge ? { title: S.by_judge } : {} }),
      el("td", { text: order ? formatTime(order.given_at, config.timeZone, true) : "", className: "num" }),
    );
    tr.addEventListener("click", () => chooseArmy(army.id));
    return tr;
  });
  $("orders-body").replaceChildren(...rows);
  // Issue 32: who has not ordered yet, at a glance (an army in a battle gives no order, R4).
  // A destroyed army is waited for only from the turn it may reform in (R9).
  const turn = state.tournament.turn;
  const expected = state.armies.filter((a) => !a.in_battle
    && (a.province || (a.destroyed && a.reform_from != null && a.reform_from <= turn)));
  const waiting = expected.filter((a) => !orders[a.id]).map((a) => a.id);
  const summary = $("orders-summary");
  summary.hidden = phase() !== "running";
  summary.textContent = fill(S.orders_given, { given: expected.length - waiting.length, expected: expected.length })
    + (waiting.length ? ` · ${fill(S.orders_waiting, { armies: waiting.join(", ") })}` : "");
}

function allArmyCodes() {
  const codes = new Map();
  for (const army of state.armies) codes.set(army.id, army.clan);
  for (const player of players) if (player.army) codes.set(player.army, player.clan);
  return [...codes.entries()].sort((a, b) => a[1].localeCompare(b[1]) || a[0].localeCompare(b[0], undefined, { numeric: true }));
}

function drawArmySelects() {
  const placed = sortedArmies().map((a) => option(a.id, `${a.id} · ${armyPlace(a)}`));
  fillSelect($("order-army"), [option("", S.choose), ...placed]);
  const every = allArmyCodes().map(([code, clan]) => {
    const army = state.armies.find((a) => a.id === code);
    return option(code, army ? `${code} · ${armyPlace(army)}` : `${code} · ${S.not_placed}`);
  });
  fillSelect($("correct-army"), [option("", S.choose), ...every]);
  drawOrderFields();
}

function chooseArmy(code) {
  selectedArmy = code;
  $("order-army").value = code;
  $("correct-army").value = code;
  const current = state.orders.find((o) => o.army === code);
  if (current) {
    $("order-kind").value = current.kind;
    $("order-claim").checked = current.claim !== false;
    $("order-on-swap").value = current.on_swap || "advance";
  }
  drawOrderFields(current);
  drawOrders();
  drawMap();
}

function neighbours(id) {
  return (config.neighbours[id] || []).filter((p) => !provinces[p]?.impassable);
}

function drawOrderFields(current = null) {
  const code = $("order-army").value;
  const army = state.armies.find((a) => a.id === code);
  const kind = $("order-kind").value;
  $("order-move-fields").hidden = kind !== "move";
  $("order-reform-fields").hidden = kind !== "reform";
  const from = army?.province;
  const step1 = $("order-step1");
  fillSelect(step1, [option("", S.choose), ...(from ? neighbours(from) : []).map((p) => option(p, provinceName(p)))]);
  if (current?.kind === "move") step1.value = current.path[0] || "";
  const step2 = $("order-step2");
  const second = step1.value ? neighbours(step1.value).filter((p) => p !== from) : [];
  fillSelect(step2, [option("", "—"), ...second.map((p) => option(p, provinceName(p)))]);
  if (current?.kind === "move") step2.value = current.path[1] || "";
  step2.disabled = !army || army.clan !== "unicorn" || !step1.value;
  const castles = config.provinces.filter((p) => army && p.castle && p.home_clan === army.clan);
  fillSelect($("order-reform"), castles.map((p) => option(p.id, p.name)));
  if (current?.kind === "reform") $("order-reform").value = current.reform;
}

function drawPlayers() {
  if (!players.length) {
    $("players-body").replaceChildren(el("tr", {}, el("td", { text: S.no_players, attrs: { colspan: "6" }, className: "muted" })));
    return;
  }
  const rows = players.map((player) => {
    const link = player.join_url
      ? el("span", { className: "join-link" },
          // Cut to the column (the copy button beside it takes the whole link); the title shows it.
          el("a", { text: player.join_url.replace(/^https?:\/\//, ""), attrs: { href: player.join_url, title: player.join_url, target: "_blank", rel: "noopener" } }),
          copyButton(player.join_url))
      : el("span", { className: "tag tag-warn", text: S.link_revoked });
    const reissue = el("button", { text: S.reissue, attrs: { type: "button" } });
    reissue.addEventListener("click", () => {
      if (!window.confirm(fill(S.confirm_reissue, { name: player.name }))) return;
      act(reissue, () => api("POST", `/players/${player.id}/join-link`)).then(loadPlayers);
    });
    const revoke = el("button", { text: S.revoke, className: "danger", attrs: { type: "button" } });
    revoke.disabled = !player.join_url;
    revoke.addEventListener("click", () => {
      if (!window.confirm(fill(S.confirm_revoke, { name: player.name }))) return;
      act(revoke, () => api("DELETE", `/players/${player.id}/join-link`)).then(loadPlayers);
    });
    return el("tr", {},
      el("th", { text: player.name, attrs: { scope: "row" } }),
      el("td", {}, clanTag(player.clan)),
      el("td", { text: config.roles[player.role] || player.role }),
      el("td", { text: player.army || "—" }),
      el("td", {}, link),
      el("td", { className: "actions" },
        el("a", { text: S.edit, className: "edit-player", attrs: { href: `${config.playerPages}${player.id}/` } }),
        reissue, revoke));
  });
  $("players-body").replaceChildren(...rows);
}

function copyButton(text) {
  const button = el("button", { text: S.copy, className: "small", attrs: { type: "button" } });
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = S.copied;
      setTimeout(() => { button.textContent = S.copy; }, 1500);
    } catch {
      window.prompt("", text);
    }
  });
  return button;
}

function drawPositions() {
  const clan = $("positions-clan").value;
  const placed = Object.fromEntries(state.armies.map((a) => [a.id, a.province]));
  const homes = config.provinces
    .filter((p) => p.home_clan === clan && !p.impassable)
    .sort((a, b) => Number(b.castle) - Number(a.castle) || a.name.localeCompare(b.name));
  const armies = players.filter((p) => p.clan === clan && p.army).map((p) => p.army).sort();
  const fields = armies.map((code, index) => {
    const select = el("select", { attrs: { name: code, required: "" } });
    const chosen = placed[code] || homes[index]?.id || "";
    select.append(...homes.map((p) => option(p.id, p.castle ? `${p.name} ♜` : p.name, p.id === chosen)));
    return el("label", {}, document.createTextNode(`${code} `), select);
  });
  $("positions-armies").replaceChildren(...(fields.length ? fields : [el("p", { className: "muted", text: S.no_army })]));
}

// A deadline that passed while the server was not serving: what happened and the orders
// around it, until a judge has ruled (the log keeps both).
function drawFlags() {
  const flags = state.flags || [];
  $("flags").hidden = !flags.length;
  $("flags-list").replaceChildren(...flags.map((flag) => {
    const button = el("button", { text: S.flag_ruled, attrs: { type: "button", "data-flag": String(flag.id) } });
    button.addEventListener("click", () => act(button, () => api("POST", `/clock/flags/${flag.id}/ruled`)));
    return el("li", {}, el("p", { text: flag.text }), button);
  }));
}

function drawAnnouncements() {
  const items = (state.announcements || []).map((a) =>
    el("li", {}, el("time", { text: formatTime(a.at, config.timeZone), attrs: { datetime: a.at } }), document.createTextNode(` ${a.text}`)));
  $("announcements-list").replaceChildren(...(items.length ? items : [el("li", { className: "muted", text: S.no_announcements })]));
}

function drawTables() {
  const clanOf = Object.fromEntries(state.armies.map((a) => [a.id, a.clan]));
  const meetings = (state.meetings || []).map((meeting) =>
    el("li", {},
      el("strong", { text: provinceName(meeting.province) }),
      meeting.new ? el("span", { className: "tag", text: S.new_meeting }) : null,
      el("span", { className: "meeting-armies" },
        ...meeting.armies.map((code) => el("span", { className: `army clan-${clanOf[code] || ""}`, text: code })))));
  $("tables-list").replaceChildren(...(meetings.length ? meetings : [el("li", { className: "muted", text: S.no_meetings })]));
  const draws = (state.last_draws || []).map((draw) =>
    el("li", { text: fill(S.draw, {
      a: provinceName(draw.provinces[0]),
      b: provinceName(draw.provinces[1]),
      from: provinceName(draw.moving_from),
      method: config.drawMethods[draw.method] || draw.method,
    }) + (draw.source ? ` · ${draw.source}` : "") }));
  $("draws-list").replaceChildren(...(draws.length ? draws : [el("li", { className: "muted", text: "—" })]));
}

function drawScores() {
  const scores = state.scores || {};
  const rows = Object.entries(scores)
    .sort((a, b) => b[1].total - a[1].total || clanName(a[0]).localeCompare(clanName(b[0])))
    .map(([clan, s]) => el("tr", {},
      el("th", { attrs: { scope: "row" } }, clanTag(clan)),
      el("td", { className: "num", text: s.home_provinces * 2 }),
      el("td", { className: "num", text: s.other_provinces }),
      el("td", { className: "num", text: s.castles }),
      el("td", { className: "num total", text: s.total })));
  $("scores-body").replaceChildren(...rows);
  const history = state.score_history || [];
  if (history.length > 1) {
    drawScoreChart($("score-chart"), history, { clans: config.clans, strings: S, width: 420, height: 300, fontSize: 12 });
  } else {
    $("score-chart").replaceChildren();
  }
}

function drawMap() {
  const svg = document.querySelector("#map-frame svg");
  if (!overlay || !svg) return;
  const army = state.armies.find((a) => a.id === selectedArmy);
  const chosen = $("order-step2").value || $("order-step1").value || army?.province || null;
  try {
    overlay(svg, state, {
      clanColours: config.clanColours,
      onProvinceClick: provinceClicked,
      highlight: army?.province ? [army.province, ...neighbours(army.province)] : [],
      selected: chosen,
      strings: { battle: S.map_battle, meeting: S.map_meeting },
    });
  } catch (error) {
    console.warn("judge: the map overlay failed", error);
  }
}

function provinceClicked(id) {
  // A click on an army's province chooses that army; otherwise the province goes into the
  // order (as its next step) and into the correction forms.
  const here = state.armies.filter((a) => a.province === id);
  const step1 = $("order-step1");
  const step2 = $("order-step2");
  if ($("order-army").value && [...step1.options].some((o) => o.value === id) && !step1.value) {
    $("order-kind").value = "move";
    step1.value = id;
    drawOrderFields();
  } else if (step1.value && !step2.disabled && [...step2.options].some((o) => o.value === id)) {
    step2.value = id;
  } else if (here.length) {
    chooseArmy(here[0].id);
  }
  drawMap();
  $("correct-army-province").value = id;
  $("correct-province").value = id;
  say(fill(S.province_clicked, { province: provinceName(id) }));
}

function apply(fresh) {
  const phaseChanged = !state || fresh.tournament.clock.phase !== state.tournament.clock.phase;
  state = fresh;
  drawHead();
  drawDeclared();
  drawOrders();
  drawArmySelects();
  drawLogArmies();
  drawFlags();
  drawAnnouncements();
  drawTables();
  drawScores();
  drawMap();
  tick();
  if (phaseChanged) drawPositions();
  if (["setup", "planning", "deployment"].includes(phase()) && phaseChanged) loadPlayers();
  document.dispatchEvent(new CustomEvent("sl5r:state", { detail: fresh })); // battles_console.js
}

// --- The log -------------------------------------------------------------------------------------

// Each entry comes with its sentence in the reader's language (referees/log_texts.py); the
// codes and data stay in the JSON export.
function logRow(entry) {
  return el("tr", { className: `log-${entry.kind || "entry"}` },
    el("td", { className: "num", text: formatTime(entry.at, config.timeZone, true), attrs: { title: entry.at } }),
    el("td", { className: "num", text: entry.turn ?? "" }),
    el("td", { className: "log-text", text: entry.text }));
}

// The console's filters (turn, army, clan, kind): applied by the server (?turn=&army=…).
let logQuery = "";
let logGeneration = 0;

function logFiltersChanged() {
  const form = $("log-filters");
  const params = new URLSearchParams();
  for (const name of ["turn", "army", "clan", "kind"]) {
    const value = (form.elements.namedItem(name)?.value ?? "").trim();
    if (value) params.set(name, value);
  }
  const query = params.toString() ? `&${params}` : "";
  if (query === logQuery) return;
  logQuery = query;
  logGeneration += 1;
  lastLogId = 0;
  loadLog();
}

function drawLogArmies() {
  const select = $("log-army");
  if (!select) return;
  const first = select.options[0];
  fillSelect(select, [first, ...allArmyCodes().map(([code]) => option(code, code))]);
}

async function loadLog() {
  if (logBusy) return;
  logBusy = true;
  try {
    for (let page = 0; page < 20; page += 1) {
      const generation = logGeneration;
      const answer = await api("GET", `/log?after=${lastLogId}${logQuery}`);
      // The filters changed while this page was on its way: start again with the new ones.
      if (generation !== logGeneration) {
        page = -1;
        continue;
      }
      const body = $("log-body");
      if (lastLogId === 0 && answer.entries.length === 0) {
        body.replaceChildren(el("tr", {}, el("td", { className: "muted", text: S.no_log, attrs: { colspan: "3" } })));
      }
      if (answer.entries.length) {
        if (lastLogId === 0) body.replaceChildren();
        for (const entry of answer.entries) body.prepend(logRow(entry));
        lastLogId = answer.after;
        while (body.rows.length > LOG_ROWS_KEPT) body.deleteRow(body.rows.length - 1);
      }
      if (!answer.more) break;
    }
  } catch (error) {
    console.warn("judge: could not load the log", error);
  } finally {
    logBusy = false;
  }
}

// --- Wiring the controls ------------------------------------------------------------------

function showUndoDialog(preview) {
  const list = $("undo-items");
  const title = $("undo-title");
  title.textContent = fill(title.dataset.title, { turn: preview.turn });
  list.replaceChildren(
    ...preview.items.map((item) =>
      el("li", { className: `undo-item undo-${item.kind}` },
        el("time", { text: formatTime(item.at, config.timeZone, true), attrs: { datetime: item.at } }),
        el("span", { className: "undo-kind", text: list.dataset[item.kind] || item.kind }),
        el("span", { className: "undo-text", text: item.text }),
        el("span", { className: "undo-who", text: item.who }))));
  list.hidden = preview.items.length === 0;
  $("undo-nothing").hidden = preview.items.length > 0;
  // Said before the judge confirms, never promised and then refused (issue 30).
  $("undo-refused").textContent = preview.problem || "";
  $("undo-refused").hidden = !preview.problem;
  $("undo-confirm").disabled = Boolean(preview.problem);
  // The time the turn really had (1:17 resolved early, 0:00 by the clock); under a minute
  // it reopens with the default the server names, and says so.
  const left = $("undo-left");
  left.textContent = preview.left_seconds === preview.default_seconds
    ? fill(left.dataset.text, { time: formatClock(preview.left_seconds) })
    : fill(left.dataset.short, { left: formatClock(preview.left_seconds), time: formatClock(preview.default_seconds) });
  $("undo-full").textContent = fill($("undo-full").dataset.text, { time: formatClock(preview.full_seconds) });
  const form = $("undo-form");
  form.querySelector('input[name="time"][value="left"]').checked = true;
  $("undo-minutes").value = String(Math.max(1, Math.round(preview.default_seconds / 60)));
  $("undo-problem").hidden = true;
  // Refused: nothing to choose or explain; the focus goes to Cancel, the one thing to do.
  $("undo-time").disabled = Boolean(preview.problem);
  $("undo-reason").disabled = Boolean(preview.problem);
  $("undo-dialog").showModal();
  (preview.problem ? $("undo-cancel") : $("undo-reason")).focus();
}

function formValue(form, name) {
  return form.elements.namedItem(name)?.value ?? "";
}

function wire() {
  // The venue's address (issue 31): the page is drawn with the addresses and codes, so it is
  // simply drawn again once the choice is stored.
  for (const button of document.querySelectorAll(".venue-choose")) {
    button.addEventListener("click", () =>
      act(button, () => api("POST", "/venue-address", { site: button.dataset.site })).then((done) => {
        if (done) window.location.reload();
      }));
  }
  const logFilters = $("log-filters");
  logFilters.addEventListener("change", logFiltersChanged);
  logFilters.addEventListener("submit", (event) => {
    event.preventDefault();
    logFiltersChanged();
  });
  logFilters.addEventListener("reset", () => setTimeout(logFiltersChanged));
  const resolveButton = $("btn-resolve");
  resolveButton.dataset.label = resolveButton.textContent;
  // Issue 32: the big screen's gong at the deadlines; the box shows what the state says.
  const gongBox = $("screen-gong");
  gongBox.addEventListener("change", () =>
    act(gongBox, () => api("POST", "/screen/gong", { on: gongBox.checked })).then(() => {
      gongBox.checked = Boolean(state.tournament.screen_gong);
    }));

  for (const button of document.querySelectorAll("[data-action]")) {
    button.addEventListener("click", () => {
      const action = button.dataset.action;
      const turn = state.tournament.turn;
      if (action === "pause") act(button, () => api("POST", "/clock/pause"));
      else if (action === "resume") act(button, () => api("POST", "/clock/resume"));
      else if (action === "extend") act(button, () => api("POST", "/clock/extend", { seconds: Number(button.dataset.seconds) }));
      else if (action === "start") act(button, () => api("POST", "/start"));
      // The phase on screen: if the clock moved on first, the server refuses rather
      // than skip the phase the judge never saw (R3.3).
      else if (action === "advance") act(button, () => api("POST", `/advance?phase=${encodeURIComponent(state.tournament.clock.phase)}`));
      else if (action === "resolve") {
        if (window.confirm(fill(S.confirm_resolve, { turn }))) act(button, () => api("POST", `/clock/resolve-now?turn=${encodeURIComponent(turn)}`));
      } else if (action === "end") {
        if (window.confirm(S.confirm_end)) act(button, () => api("POST", "/clock/end"));
      } else if (action === "reopen") {
        // A mistaken "End the game": the unplayed turn opens again, paused; logged with why.
        const reason = (window.prompt(S.reopen_reason, "") || "").trim();
        if (reason) act(button, () => api("POST", "/clock/reopen", { reason }));
      } else if (action === "redraw") {
        // R11: a deliberate re-draw needs a reason; the new commitment is published and logged.
        const reason = (window.prompt(S.redraw_reason, "") || "").trim();
        if (reason) act(button, () => api("POST", "/clock/redraw", { reason }));
      }
    });
  }

  // R4: the Undo button shows what the undo discards and asks for the reopened turn's time.
  let undoPreview = null;
  $("btn-undo").addEventListener("click", async (event) => {
    const button = event.currentTarget;
    button.disabled = true;
    try {
      undoPreview = await api("GET", "/clock/undo");
    } catch (error) {
      say(error instanceof ApiError ? error.message : String(error), "error");
      return;
    } finally {
      button.disabled = false;
    }
    say("");
    showUndoDialog(undoPreview);
  });
  $("undo-cancel").addEventListener("click", () => $("undo-dialog").close());
  $("undo-minutes").addEventListener("input", () => {
    $("undo-form").querySelector('input[name="time"][value="minutes"]').checked = true;
  });
  $("undo-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    // Refusals are shown in the dialog: the page's message box is behind it.
    const problem = $("undo-problem");
    problem.hidden = true;
    const reason = formValue(form, "reason").trim();
    if (!reason) {
      problem.textContent = S.reason_required;
      problem.hidden = false;
      $("undo-reason").focus();
      return;
    }
    const choice = formValue(form, "time");
    let seconds = undoPreview.default_seconds;
    if (choice === "full") seconds = undoPreview.full_seconds;
    else if (choice === "minutes") seconds = Math.round(Number(formValue(form, "minutes")) * 60);
    // The turn this dialog was opened for: the same request sent twice undoes one turn.
    const body = { reason, turn: undoPreview.turn, seconds };
    const confirm = $("undo-confirm");
    confirm.disabled = true;
    try {
      await api("POST", "/clock/undo", body);
    } catch (error) {
      problem.textContent = error instanceof ApiError ? error.message : String(error);
      problem.hidden = false;
      return;
    } finally {
      confirm.disabled = false;
    }
    $("undo-dialog").close();
    form.reset();
    say(S.done, "ok");
    await refreshState();
  });

  $("register-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const body = { name: formValue(form, "name").trim(), clan: formValue(form, "clan"), role: formValue(form, "role") };
    act(form.querySelector("button"), () => api("POST", "/players", body), (p) => fill(S.player_registered, { name: p.name }))
      .then((done) => {
        if (done) {
          form.elements.namedItem("name").value = "";
          loadPlayers();
        }
      });
  });

  $("positions-clan").addEventListener("change", drawPositions);
  $("positions-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const clan = formValue(form, "clan");
    const positions = {};
    for (const select of $("positions-armies").querySelectorAll("select")) positions[select.name] = select.value;
    act(form.querySelector('button[type="submit"]'), () => api("PUT", `/positions/${clan}`, { positions }), fill(S.positions_saved, { clan: clanName(clan) }));
  });

  $("order-army").addEventListener("change", () => chooseArmy($("order-army").value));
  $("order-kind").addEventListener("change", () => drawOrderFields());
  $("order-step1").addEventListener("change", () => {
    drawOrderFields();
    drawMap();
  });
  $("order-step2").addEventListener("change", drawMap);
  $("order-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const army = $("order-army").value;
    if (!army) return say(S.choose_army, "error");
    const kind = $("order-kind").value;
    const button = form.querySelector('button[type="submit"]');
    if (kind === "withdraw") {
      act(button, () => api("DELETE", `/armies/${encodeURIComponent(army)}/order`), fill(S.order_saved, { army }));
      return;
    }
    const body = { kind, claim: $("order-claim").checked, on_swap: $("order-on-swap").value };
    if (kind === "move") body.path = [$("order-step1").value, $("order-step2").value].filter(Boolean);
    if (kind === "reform") body.reform = $("order-reform").value;
    act(button, () => api("PUT", `/armies/${encodeURIComponent(army)}/order`, body), fill(S.order_saved, { army }));
  });

  $("army-correction-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const reason = formValue(form, "reason").trim();
    if (!reason) return say(S.reason_required, "error");
    const body = {
      army: formValue(form, "army"),
      province: formValue(form, "province") || null,
      destroyed_by: formValue(form, "destroyed_by"),
      reason,
    };
    act(form.querySelector("button"), () => api("POST", "/corrections/army", body)).then((done) => {
      if (done) form.elements.namedItem("reason").value = "";
    });
  });

  $("control-correction-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const reason = formValue(form, "reason").trim();
    if (!reason) return say(S.reason_required, "error");
    const body = { province: formValue(form, "province"), clan: formValue(form, "clan") || null, reason };
    act(form.querySelector("button"), () => api("POST", "/corrections/control", body)).then((done) => {
      if (done) form.elements.namedItem("reason").value = "";
    });
  });

  $("announcement-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const text = formValue(form, "text");
    act(form.querySelector("button"), () => api("POST", "/announcements", { text }), S.posted).then((done) => {
      if (done) form.elements.namedItem("text").value = "";
    });
  });
}

// --- Start -----------------------------------------------------------------------------------

function start() {
  wire();
  apply(state);
  drawPlayers();
  drawPositions();
  loadLog();
  if (document.querySelector("#map-frame svg")) {
    import("./map.js")
      .then((module) => {
        overlay = module.renderOverlay;
        drawMap();
      })
      .catch((error) => console.warn("judge: no map overlay", error));
  }
  const status = $("live-status");
  const labels = { live: S.live_connected, reconnecting: S.live_offline, offline: S.live_offline };
  connectLive({
    tournamentId: config.tournamentId,
    onState(fresh, { serverOffsetMs }) {
      offsetMs = serverOffsetMs;
      apply(fresh);
      loadLog();
      // Another judge may have registered, moved or replaced players: before the turns run
      // (few changes, no orders) the list is read again on every change.
      if (["setup", "planning", "deployment", "negotiation"].includes(phase())) loadPlayers();
    },
    onStatus(value) {
      status.textContent = labels[value] || value;
      status.dataset.status = value;
    },
  });
  setInterval(tick, 250);
}

start();
