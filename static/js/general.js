/**
 * general.js: a General's page (referees/templates/referees/general.html), phone first.
 *
 * Everything shown comes from the state (GET /api/tournaments/{id}/state through live.js),
 * which holds only what this General may see (R1.1), his Daimyo's written instructions
 * included. Orders go to PUT/DELETE /api/tournaments/{id}/orders/mine with the session's
 * CSRF token. The alarm at 60 s and 10 s before the deadline is alarm.js's (issue 32).
 */

import {
  blockedProvinces,
  focusOn,
  provinceDetails,
  provinceInfo,
  renderOverlay,
  renderProvincePanel,
  showWholeMap,
} from "./map.js";
import {
  apiCall,
  errorText,
  fmt,
  formatTime,
  isNetworkFailure,
  pageStrings,
  panelStrings,
  renderInstructions,
  renderScores,
  startPlayerPage,
} from "./players.js";
import { renderBattleLink } from "./battle_link.js";
import { startAlarm } from "./alarm.js";

const root = document.getElementById("player-page");
const S = pageStrings();
const PANEL = panelStrings(S);
const tournamentId = Number(root.dataset.tournament);
const armyId = root.dataset.army;
const myClan = root.dataset.clan;
const isUnicorn = root.dataset.unicorn === "true";
const decidesSwap = root.dataset.decidesSwap === "true";

const $ = (id) => document.getElementById(id);
const svg = $("war-map");
const ui = {
  live: $("live-status"),
  armyLine: $("army-line"),
  stored: $("stored-order"),
  lastRejection: $("last-rejection"),
  message: $("order-message"),
  note: $("order-note"),
  form: $("order-form"),
  moveChoices: $("move-choices"),
  destinations: $("destinations"),
  secondStep: $("second-step"),
  secondDestinations: $("second-destinations"),
  hold: $("hold-button"),
  reformChoices: $("reform-choices"),
  reformDestinations: $("reform-destinations"),
  noClaim: $("no-claim"),
  swap: $("swap-choice"),
  summary: $("choice-summary"),
  send: $("send-button"),
  withdraw: $("withdraw-button"),
  retry: $("retry-button"),
  offline: $("order-offline"),
  zoom: $("zoom-button"),
  panel: $("province-panel"),
  instructions: $("instructions-list"),
};

let state = null;
let choice = null; // {kind: "move", path: [..]} | {kind: "hold"} | {kind: "reform", reform}
let choiceKey = ""; // the turn and province the choice was made for
let zoomedIn = true;
let focusedFor = null;
let busy = false;
let page = null;
let panelProvince = null;
// The message under the order belongs to one turn; a new turn's state clears it.
let messageTurn = null;
// A send that never reached the server: {method, body, okText, turn}, for the Retry button.
let unsent = null;

const name = (id) => (provinceInfo(svg, id) || { name: id }).name;

function myArmy() {
  return (state && (state.armies || []).find((a) => a.id === armyId)) || null;
}

function myOrder() {
  return (state && (state.orders || []).find((o) => o.army === armyId)) || null;
}

// Issue 32: the alarm before the deadline is for a General who could give an order this turn
// and has none: not one in a battle (R4), nor a destroyed army that may not reform yet (R9).
function awaitingOrder() {
  const army = myArmy();
  if (!army || !running() || army.in_battle || myOrder()) return false;
  return army.destroyed ? reformTargets().length > 0 : Boolean(army.province);
}

function running() {
  return Boolean(state && state.tournament.clock.phase === "running");
}

// The deadline has passed by the server's clock: nothing may be sent until the next turn's
// state arrives, whatever the last state said.
function over() {
  return Boolean(page && page.isOver());
}

function live() {
  return Boolean(page && page.isLive());
}

function showMessage(kind, text) {
  ui.message.className = kind ? `message is-${kind}` : "message";
  ui.message.textContent = text;
  // "Order stored" is about the turn it was said in and goes with it. A refusal (late, a
  // lost connection) stays, whatever the page hears meanwhile, until the player says he
  // has read it: otherwise the resync after the deadline wipes it before he looks.
  messageTurn = text && state && kind !== "error" ? state.tournament.turn : null;
  if (text && kind === "error") {
    const seen = document.createElement("button");
    seen.type = "button";
    seen.className = "message-seen";
    seen.textContent = S["message-seen"];
    seen.addEventListener("click", () => showMessage("", ""));
    ui.message.append(" ", seen);
  }
}

function abilitiesOn() {
  return Boolean(state && state.tournament.clan_abilities);
}

function orderText(order) {
  if (!order) return "";
  let text;
  if (order.kind === "move") text = fmt(S["order-move"], { path: order.path.map(name).join(" → ") });
  else if (order.kind === "reform") text = fmt(S["order-reform"], { province: name(order.reform) });
  else text = S["order-hold"];
  const extra = [];
  if (order.claim === false) extra.push(S["order-no-claim"]);
  if (decidesSwap && order.kind === "move") {
    extra.push(order.on_swap === "stay" ? S["order-stay"] : S["order-advance"]);
  }
  return extra.length ? `${text} (${extra.join("; ")})` : text;
}

// --- Where the army may go -----------------------------------------------------------------

function firstSteps(army) {
  if (!army || !army.province) return [];
  const blocked = blockedProvinces(svg, state);
  const info = provinceInfo(svg, army.province);
  return (info ? info.neighbours : []).filter((id) => !blocked.has(id));
}

function secondSteps(army, first) {
  if (!isUnicorn || !abilitiesOn() || !army || !first) return [];
  const blocked = blockedProvinces(svg, state);
  const info = provinceInfo(svg, first);
  return (info ? info.neighbours : []).filter((id) => id !== army.province && !blocked.has(id));
}

// R9: the castles the server's engine says this army may reform in (state.reform, sent to
// this General only); the page never works the rule out itself.
function reformTargets() {
  if (!state || !state.reform || reformNote(myArmy())) return [];
  return state.reform.provinces;
}

// Why a destroyed army cannot reform this turn (R9), or "" when it may.
function reformNote(army) {
  const reform = state.reform;
  if (!army || !army.destroyed || !reform) return "";
  if (state.tournament.turn < reform.from_turn) return fmt(S["reform-from"], { turn: reform.from_turn });
  if (!reform.provinces.length) {
    return fmt(S["reform-no-castle"], { castles: byName(reform.home_castles).map(name).join(", ") });
  }
  return "";
}

function byName(ids) {
  return [...ids].sort((a, b) => name(a).localeCompare(name(b)));
}

function button(label, pressed, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "big-button";
  b.textContent = label;
  b.setAttribute("aria-pressed", pressed ? "true" : "false");
  b.disabled = busy || over();
  b.addEventListener("click", onClick);
  return b;
}

function choose(next) {
  choice = next;
  unsent = null;
  showMessage("", "");
  render();
}

function pickProvince(id) {
  const army = myArmy();
  if (!army || !running() || over() || army.in_battle) return false;
  if (army.destroyed) {
    if (reformTargets().includes(id)) {
      choose({ kind: "reform", reform: id });
      return true;
    }
    return false;
  }
  const first = choice && choice.kind === "move" ? choice.path[0] : null;
  if (first && choice.path.length === 1 && secondSteps(army, first).includes(id)) {
    choose({ kind: "move", path: [first, id] });
    return true;
  }
  if (firstSteps(army).includes(id)) {
    choose({ kind: "move", path: [id] });
    return true;
  }
  return false;
}

// --- Rendering -----------------------------------------------------------------------------------

// Why the last deadline rejected this army's order (R1.1: a General who may not see the
// map is told only then, e.g. that his clan lost the castle he meant to reform in).
function renderLastRejection() {
  const last = state.last_order;
  ui.lastRejection.hidden = !last;
  ui.lastRejection.textContent = last ? fmt(S["last-rejected"], last) : "";
}

function renderArmy(army) {
  renderLastRejection();
  if (!army) {
    // Before the turns an army has no place until its clan declares one (R3).
    const starting = ["setup", "planning", "deployment"].includes(state.tournament.clock.phase);
    ui.armyLine.textContent = starting ? S["army-not-placed"] : S["army-unknown"];
    return;
  }
  if (!army.province) {
    ui.armyLine.textContent = army.destroyed ? S["army-destroyed"] : S["army-not-placed"];
    return;
  }
  ui.armyLine.replaceChildren();
  const text = fmt(S["army-at"], { army: army.id, province: "\u0000" }).split("\u0000");
  const strong = document.createElement("strong");
  strong.textContent = name(army.province);
  ui.armyLine.append(text[0], strong, text[1] || "");
  // The table his army sits at now, not the last turn's record of meetings: a battle that
  // ended mid-turn leaves no meeting behind for its winner (R8).
  const meeting = Boolean(state.battle && state.battle.status === "meeting");
  const extra = army.in_battle ? S["army-in-battle"] : meeting ? S["army-meeting"] : "";
  if (extra) {
    const p = document.createElement("span");
    p.textContent = ` ${extra}`;
    ui.armyLine.append(p);
  }
}

function renderOrderForm(army) {
  const order = myOrder();
  ui.stored.replaceChildren();
  if (order) {
    ui.stored.append(orderText(order));
    const when = document.createElement("span");
    when.className = "when";
    const given = fmt(S["order-given"], { time: formatTime(order.given_at, state) });
    when.textContent = ` · ${given}${order.by_judge ? ` · ${S["order-by-judge"]}` : ""}`;
    ui.stored.append(when);
  } else if (running() && army && army.province && !army.in_battle) {
    // R6, R7: while another clan's army is in his province (a meeting, a peace), holding
    // takes nothing: control does not change.
    const sharing = Boolean(state.battle && ["meeting", "peace"].includes(state.battle.status));
    ui.stored.textContent = sharing ? S["order-none-shared"] : S["order-none"];
  }
  ui.withdraw.hidden = !order || !running();

  let note = "";
  let open = running() && Boolean(army);
  const closed = over();
  if (state.tournament.phase === "finished") note = S["game-over"];
  else if (!running()) note = S["not-running"];
  else if (closed) note = S["clock-over"];
  else if (!army) note = S["army-unknown"];
  else if (army.in_battle) {
    note = S["army-in-battle"];
    open = false;
  } else if (!army.province && !army.destroyed) {
    note = S["army-not-placed"];
    open = false;
  } else if (reformNote(army)) {
    // R9: no Reform buttons before the army may use them.
    note = reformNote(army);
    open = false;
  }
  ui.note.textContent = note;
  ui.form.hidden = !open;
  // Warned, not disabled: the order may still get through over HTTP, and if it does not the
  // page says so and offers to send it again.
  ui.offline.hidden = !open || closed || live();
  ui.retry.hidden = !unsent || closed || !running() || unsent.turn !== state.tournament.turn;
  ui.retry.disabled = busy;
  if (!open) return;

  const destroyed = Boolean(army.destroyed);
  ui.moveChoices.hidden = destroyed;
  ui.reformChoices.hidden = !destroyed;
  if (ui.swap) ui.swap.hidden = destroyed;

  if (destroyed) {
    $("reform-blind").hidden = !state.reform || state.reform.sees_map !== false;
    ui.reformDestinations.replaceChildren(
      ...byName(reformTargets()).map((id) =>
        button(name(id), choice && choice.kind === "reform" && choice.reform === id, () =>
          choose({ kind: "reform", reform: id }),
        ),
      ),
    );
  } else {
    const path = choice && choice.kind === "move" ? choice.path : [];
    ui.destinations.replaceChildren(
      ...byName(firstSteps(army)).map((id) =>
        button(name(id), path[0] === id, () => choose({ kind: "move", path: [id] })),
      ),
    );
    const seconds = path.length ? secondSteps(army, path[0]) : [];
    ui.secondStep.hidden = !seconds.length;
    ui.secondDestinations.replaceChildren(
      ...byName(seconds).map((id) =>
        button(name(id), path[1] === id, () =>
          choose({ kind: "move", path: path[1] === id ? [path[0]] : [path[0], id] }),
        ),
      ),
    );
    ui.hold.setAttribute("aria-pressed", choice && choice.kind === "hold" ? "true" : "false");
    ui.hold.disabled = busy || closed;
  }
  ui.noClaim.disabled = closed;
  if (ui.swap) for (const input of ui.swap.querySelectorAll("input")) input.disabled = closed;

  ui.summary.textContent = choice
    ? fmt(S.chosen, { order: orderText({ ...choice, claim: !ui.noClaim.checked, on_swap: swapValue() }) })
    : S.choose;
  ui.send.disabled = busy || !choice || closed;
  ui.withdraw.disabled = busy || closed;
}

function swapValue() {
  const checked = ui.swap && ui.swap.querySelector("input[name=on_swap]:checked");
  return checked ? checked.value : "advance";
}

function highlights(army) {
  if (!army || !running() || army.in_battle) return { highlight: [], selected: null };
  if (army.destroyed) {
    return {
      highlight: reformTargets(),
      selected: choice && choice.kind === "reform" ? choice.reform : null,
    };
  }
  const path = choice && choice.kind === "move" ? choice.path : [];
  const ids = firstSteps(army);
  if (path.length) ids.push(...secondSteps(army, path[0]));
  if (!choice) {
    // Nothing chosen: show where the stored order sends the army.
    const order = myOrder();
    const target = order && order.kind === "move" ? order.path[order.path.length - 1] : null;
    return { highlight: ids, selected: target };
  }
  return { highlight: ids, selected: path.length ? path[path.length - 1] : null };
}

function showPanel(id) {
  panelProvince = id;
  renderProvincePanel(ui.panel, provinceDetails(svg, state, id), PANEL, svg, armyId);
}

function renderMap(army) {
  const { highlight, selected } = highlights(army);
  renderOverlay(svg, state, {
    onProvinceClick: (id) => {
      pickProvince(id);
      showPanel(id);
    },
    highlight,
    selected,
    strings: PANEL,
  });
  const home = army && army.province;
  ui.zoom.hidden = !home;
  if (home && focusedFor !== home) {
    focusedFor = home;
    zoomedIn = true;
  }
  if (home && zoomedIn) {
    focusOn(svg, [home, ...(provinceInfo(svg, home) || { neighbours: [] }).neighbours]);
    ui.zoom.textContent = S["zoom-whole"];
  } else {
    showWholeMap(svg);
    ui.zoom.textContent = S["zoom-near"];
  }
  if (panelProvince && !ui.panel.hidden) showPanel(panelProvince);
}

function render() {
  if (!state) return;
  const army = myArmy();
  const key = `${state.tournament.turn}|${army ? army.province : ""}|${army ? army.destroyed : ""}`;
  if (key !== choiceKey) {
    choiceKey = key;
    choice = null;
  }
  // "Order stored" or a refusal is about the turn it was said in, not the next one.
  if (messageTurn !== null && messageTurn !== state.tournament.turn) showMessage("", "");
  // An order lost offline whose turn has since been resolved did not count: say so, rather
  // than keep "the connection is back, send it again" for a turn that is over.
  if (unsent && unsent.turn !== state.tournament.turn) {
    unsent = null;
    showMessage("error", S["error-unsent-late"]);
  }
  // Too late to retry: say what happened instead of "retry when the connection is back".
  if (unsent && over()) {
    unsent = null;
    showMessage("error", S["error-unsent-late"]);
  }
  renderArmy(army);
  renderOrderForm(army);
  renderMap(army);
  const mapNote = document.getElementById("daimyo-map-note");
  if (mapNote) mapNote.hidden = state.tournament.phase === "finished";
  renderInstructions(ui.instructions, state.instructions, S, state);
  renderScores(svg, state);
}

// --- Sending ---------------------------------------------------------------------------------------

async function send(method, body, okText, turn = state.tournament.turn) {
  if (over()) return;
  busy = true;
  render();
  try {
    // The turn on screen: an order that arrives after it was resolved is refused as late
    // instead of being carried into the next turn.
    const payload = body ? { ...body, turn } : body;
    await apiCall(method, `/tournaments/${tournamentId}/orders/mine`, payload);
    unsent = null;
    showMessage("ok", okText);
    choice = null;
    await refresh();
  } catch (error) {
    unsent = isNetworkFailure(error) ? { method, body, okText, turn } : null;
    showMessage("error", errorText(S, error));
  } finally {
    busy = false;
    render();
  }
}

function refresh() {
  return page.refresh();
}

ui.send.addEventListener("click", () => {
  if (!choice) return;
  const body = { kind: choice.kind, claim: !ui.noClaim.checked };
  if (choice.kind === "move") {
    body.path = choice.path;
    body.on_swap = swapValue();
  } else if (choice.kind === "reform") {
    body.reform = choice.reform;
  }
  send("PUT", body, S.sent);
});
ui.withdraw.addEventListener("click", () => send("DELETE", undefined, S.withdrawn));
ui.retry.addEventListener("click", () => {
  if (unsent) send(unsent.method, unsent.body, unsent.okText, unsent.turn);
});
ui.hold.addEventListener("click", () => choose({ kind: "hold" }));
ui.noClaim.addEventListener("change", () => render());
if (ui.swap) ui.swap.addEventListener("change", () => render());
ui.zoom.addEventListener("click", () => {
  zoomedIn = !zoomedIn;
  render();
});
page = startPlayerPage({
  tournamentId,
  svg,
  S,
  urgent: true,
  onState(next) {
    state = next;
    render();
    renderBattleLink(next);
  },
  onChange({ live: connected }) {
    // Back online with an order still unsent: the offline message is no longer true, but
    // the order still has to go.
    if (connected && unsent && ui.message.classList.contains("is-error")) {
      showMessage("error", S["error-not-sent"]);
    }
    render();
  },
});
startAlarm({
  strings: S,
  secondsLeft: () => page.secondsLeft(),
  getState: () => state,
  awaiting: awaitingOrder,
  clock: $("clock"),
  region: $("clock-alarm"),
  toggle: $("alarm-sounds"),
});
