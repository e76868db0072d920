/**
 * players.js: what the General's page (general.js) and the clan page (clan.js) share.
 *
 *   pageStrings()                 the texts the template translated (#page-strings data-*)
 *   fmt(text, {name: value})      fills {name} placeholders
 *   panelStrings(S)               the province panel's texts for map.js
 *   apiCall(method, path, body)   a JSON call to /api with the session's CSRF token;
 *                                 throws ApiError(status, code, detail) on a 4xx/5xx
 *   errorText(S, error)           an ApiError or a network failure in plain words
 *   startClock(elements, S, getState, {urgent})  the countdown from the server's clock
 *   liveStatusText(S, status)     connectLive's status in plain words
 *   formatTime(iso, state)        a time of day in the tournament's time zone
 *   startPlayerPage({...})        legend swatches, the countdown and the live connection;
 *                                 returns {refresh(), isLive(), isOver(), secondsLeft()}
 *   isNetworkFailure(error)       the request never reached the server (no ApiError)
 *   renderInstructions(list, instructions, S, state)  a Daimyo's written instructions (R1.1)
 *   renderStartPanel(panel, state, offsetMs)  what happens now and next before the turns (R3)
 *   renderScores(svg, state)      the standings (#scores, referees/_scores.html): what the
 *                                 player may see, everyone's at the end (R12)
 */

import { ApiError, apiCall } from "./api.js";
import { renderCall } from "./call_judge.js";
import { showCommitment } from "./commitment.js";
import { formatClock } from "./format.js";
import { connectLive, remainingSeconds, turnOver } from "./live.js";
import { clanStyles, clanSwatch } from "./map.js";
import { formatTime as formatTimeOfDay } from "./screen.js";

export { ApiError, apiCall } from "./api.js";

export function pageStrings(id = "page-strings") {
  const node = document.getElementById(id);
  const strings = {};
  if (!node) return strings;
  for (const attr of node.attributes) {
    if (attr.name.startsWith("data-")) strings[attr.name.slice(5)] = attr.value;
  }
  return strings;
}

export function fmt(text, values = {}) {
  return String(text || "").replace(/\{(\w+)\}/g, (all, key) =>
    key in values ? String(values[key]) : all,
  );
}

export function panelStrings(S) {
  const out = {};
  for (const [key, value] of Object.entries(S)) {
    if (!key.startsWith("panel-")) continue;
    const camel = key.slice(6).replace(/-(\w)/g, (_, c) => c.toUpperCase());
    out[camel] = value;
  }
  return out;
}

export function reasonText(S, code, detail) {
  const key = `reason-${String(code || "").replace(/_/g, "-")}`;
  return S[key] || detail || code || "";
}

export function isNetworkFailure(error) {
  return !(error instanceof ApiError);
}

export function errorText(S, error) {
  if (!(error instanceof ApiError)) {
    // The browser knows it has no network: say so, rather than blame the server.
    if (navigator.onLine === false && S["error-offline"]) return S["error-offline"];
    return S["error-network"];
  }
  const { status, code, detail } = error;
  if (status === 409 && code === "late") return S["error-late"];
  if (status === 409 && (code === "not_running" || code === "phase")) return S["error-not-running"];
  if (status === 422 || status === 400 || status === 409) {
    return fmt(S["error-refused"], { reason: reasonText(S, code, detail) });
  }
  if (status === 401) return S["error-signed-out"];
  if (status === 403 && code === "csrf") return S["error-csrf"];
  if (status === 403) return fmt(S["error-forbidden"], { reason: reasonText(S, code, detail) });
  if (status === 429) return S["error-rate"];
  return fmt(S["error-other"], { status, reason: reasonText(S, code, detail) });
}

export function liveStatusText(S, status) {
  // connectLive reports "live", "reconnecting" or "offline".
  const value = String(status || "").toLowerCase();
  if (value === "live") return { text: S["live-live"], ok: true };
  if (value === "connecting") return { text: S["live-connecting"], ok: true };
  // Reconnecting is offline too as far as the player is concerned: nothing he sends now
  // is sure to arrive.
  return { text: S["live-offline"], ok: false };
}

export function phaseText(S, state) {
  const t = state.tournament || {};
  const phase = (t.clock && t.clock.phase) || "";
  if (phase === "running") {
    return t.turns_total
      ? fmt(S["phase-running-of"], { turn: t.turn, total: t.turns_total })
      : fmt(S["phase-running"], { turn: t.turn });
  }
  // "Ended after turn 5 of 8": the same words as the console and the big screen.
  if (phase === "finished" && t.ended_after_turn != null) {
    const turn = t.ended_after_turn;
    return t.turns_total
      ? fmt(S["ended-after-of"], { turn, total: t.turns_total })
      : fmt(S["ended-after"], { turn });
  }
  return S[`phase-${phase}`] || phase;
}

/**
 * Count down from the server's clock. ``elements``: {box, turn, time, note}; ``getState``
 * returns [state, offsetMs]. With ``urgent`` the box turns red under 60 s of a running turn
 * and urges sending, unless ``isLive()`` says the page is offline.
 */
export function startClock(elements, S, getState, { urgent = true, isLive = () => true } = {}) {
  const tick = () => {
    const [state, offsetMs] = getState();
    if (!state) return;
    const clock = (state.tournament && state.tournament.clock) || {};
    const seconds = remainingSeconds(state, offsetMs);
    elements.turn.textContent = phaseText(S, state);
    // Over, there is no time to show ("--:--" read as a broken clock).
    elements.time.textContent = clock.phase === "finished" ? "" : formatClock(seconds, { padMinutes: true });
    const running = clock.phase === "running";
    const paused = Boolean(clock.paused);
    const hasTime = seconds !== null && seconds !== undefined && Number.isFinite(seconds);
    // Decided by the deadline itself, not by the rounded seconds: an order sent in the last
    // fraction of a second is already late on the server.
    const over = turnOver(state, offsetMs);
    const isUrgent = urgent && running && !paused && hasTime && !over && seconds < 60;
    elements.box.classList.toggle("is-urgent", isUrgent);
    elements.box.classList.toggle("is-paused", paused);
    elements.box.classList.toggle("is-over", over);
    let note = "";
    if (paused) note = S["clock-paused"];
    else if (over) note = S["clock-over"];
    else if (!hasTime && clock.phase !== "finished") note = S["clock-none"];
    // Offline, "send your order now" would be a promise the page cannot keep.
    else if (isUrgent) note = isLive() ? S["clock-urgent"] : S["live-offline"];
    if (elements.note.textContent !== note) elements.note.textContent = note;
  };
  tick();
  return window.setInterval(tick, 250);
}

// One time format on every page: the console's and the big screen's (screen.js).
export function formatTime(iso, state) {
  const zone = state && state.tournament ? state.tournament.time_zone : undefined;
  return formatTimeOfDay(iso, zone || undefined, true);
}

/**
 * A Daimyo's written instructions (R1.1) into `list` (#instructions-list), newest first, in
 * the markup of referees/instruction_list.html. `instructions` is state.instructions (what
 * the server lets this player read); without it the list is left as it is.
 */
export function renderInstructions(list, instructions, S, state) {
  if (!list || !Array.isArray(instructions)) return;
  const items = instructions.map((instruction) => {
    const item = document.createElement("li");
    item.className = "instruction";
    item.dataset.id = String(instruction.id);
    const head = document.createElement("div");
    head.className = "instruction-head";
    const to = document.createElement("span");
    to.className = "instruction-to";
    to.textContent =
      instruction.to_id === null || instruction.to_id === undefined
        ? S["instruction-to-all"]
        : fmt(S["instruction-to"], { name: instruction.to });
    const time = document.createElement("time");
    time.dateTime = instruction.at;
    time.textContent = formatTime(instruction.at, state);
    head.append(to, " · ", time);
    if (instruction.turn) {
      const turn = document.createElement("span");
      turn.className = "instruction-turn";
      turn.textContent = fmt(S["instruction-turn"], { turn: instruction.turn });
      head.append(" · ", turn);
    }
    const text = document.createElement("p");
    text.className = "instruction-text";
    text.textContent = instruction.text;
    item.append(head, text);
    return item;
  });
  if (!items.length) {
    const none = document.createElement("li");
    none.className = "note instruction-none";
    none.textContent = S["instructions-none"];
    items.push(none);
  }
  list.replaceChildren(...items);
}

function setText(node, text) {
  if (node && node.textContent !== text) node.textContent = text;
}

/**
 * What happens now and next before the turns (R3), in `panel` (#start-panel of
 * referees/start_panel.html): the texts of the state's phase from its data-now-<phase> and
 * data-next-<phase>, `{time}` the phase's countdown. The player who declares for his clan
 * (data-declares) gets the link to the positions page, saying whether his clan has declared
 * (state.declared_clans); the others a line saying it. Hidden once the turns run.
 */
export function renderStartPanel(panel, state, offsetMs = 0) {
  if (!panel || !state) return;
  const phase = state.tournament.clock.phase;
  const text = (key) => panel.getAttribute(`data-${key}`);
  const now = text(`now-${phase}`);
  panel.hidden = !now;
  if (!now) return;
  const time = formatClock(remainingSeconds(state, offsetMs), { padMinutes: true });
  setText(panel.querySelector("#start-now"), fmt(now, { time }));
  setText(panel.querySelector("#start-next"), fmt(text(`next-${phase}`) || "", { time }));
  const declaring = phase === "planning" || phase === "deployment";
  const declared = Boolean((state.declared_clans || {})[panel.dataset.clan]);
  const link = panel.querySelector("#positions-link");
  if (link) {
    link.hidden = !declaring;
    link.classList.toggle("is-primary", !declared);
    link.classList.toggle("is-done", declared);
    setText(link, declared ? fmt(text(`declared-${phase}`) || "", { time }) : text("declare"));
  }
  const status = panel.querySelector("#start-status");
  if (status) {
    status.hidden = !declaring;
    setText(status, text(declared ? "clan-declared" : "clan-undeclared") || "");
  }
}

/** The state once more over HTTP (after an order, in case the live update is slow). */
export async function fetchState(tournamentId) {
  return apiCall("GET", `/tournaments/${tournamentId}/state`);
}

/**
 * What both player pages do on start: a swatch beside each clan of the legend, the
 * countdown from the server's clock (`urgent`: warn in the last minute), and the live
 * connection. `onState(state)` gets every new state. `onChange({live, over})` is called when
 * the connection comes or goes and when the turn's deadline passes, so that the page can
 * close or warn its order controls. `refresh()`, after the page has changed something,
 * fetches the state at once when the live connection is down (live, the change's event
 * brings it); a failure is left to the live connection.
 */
export function startPlayerPage({ tournamentId, svg, S, urgent, onState, onChange = () => {} }) {
  const $ = (id) => document.getElementById(id);
  let current = null;
  let offsetMs = 0;
  let live = false;
  let over = false;
  const startPanel = $("start-panel");

  function changed() {
    const nowOver = turnOver(current, offsetMs);
    if (nowOver === over) return false;
    over = nowOver;
    return true;
  }
  for (const item of document.querySelectorAll(".legend li[data-clan]")) {
    item.prepend(clanSwatch(svg, item.dataset.clan));
  }

  function received(next, meta = {}) {
    current = next;
    if (meta && Number.isFinite(meta.serverOffsetMs)) offsetMs = meta.serverOffsetMs;
    changed();
    onState(next);
    showCommitment(next);
    renderCall(next);
    renderStartPanel(startPanel, current, offsetMs);
  }

  const liveLabel = $("live-status");
  function onStatus(status) {
    const { text, ok } = liveStatusText(S, status);
    liveLabel.textContent = text;
    liveLabel.classList.toggle("is-offline", !ok);
    const nowLive = String(status) === "live";
    if (nowLive !== live) {
      live = nowLive;
      onChange({ live, over });
    }
  }

  startClock(
    { box: $("clock"), turn: $("clock-turn"), time: $("clock-time"), note: $("clock-note") },
    S,
    () => [current, offsetMs],
    { urgent, isLive: () => live },
  );
  // The deadline passes between two states: the page hears of it from this tick.
  window.setInterval(() => {
    if (changed()) onChange({ live, over });
    renderStartPanel(startPanel, current, offsetMs);
  }, 250);
  connectLive({ tournamentId, onState: received, onStatus });
  return {
    isLive: () => live,
    isOver: () => over,
    // The seconds the countdown shows now, by the server's clock (alarm.js, issue 32).
    secondsLeft: () => remainingSeconds(current, offsetMs),
    async refresh({ evenLive = false } = {}) {
      // Live, the change the page just made comes back with its event, this viewer's new
      // state in it (issue 33: at a deadline, a fetch after every order doubled the load).
      // A refused change brings no event: the page asks with evenLive to undo its controls.
      if (live && !evenLive) return;
      try {
        received(await fetchState(tournamentId), { serverOffsetMs: offsetMs });
      } catch (_error) {
        // The live connection brings the next state anyway.
      }
    },
  };
}

export function renderScores(svg, state) {
  const section = document.getElementById("scores");
  if (!section) return;
  if (!state.scores) {
    section.hidden = true;
    return;
  }
  const styles = clanStyles(svg);
  const rows = Object.entries(state.scores).sort(([, a], [, b]) => b.total - a.total);
  document.getElementById("scores-body").replaceChildren(
    ...rows.map(([clan, score]) => {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.scope = "row";
      // The place, shared on equal points, as the big screen's standings show it (R12).
      const place = 1 + rows.filter(([, other]) => other.total > score.total).length;
      const rank = document.createElement("span");
      rank.className = "place";
      rank.textContent = `${place}.`;
      th.append(rank, " ", clanSwatch(svg, clan), (styles[clan] && styles[clan].name) || clan);
      tr.append(th);
      // Points, so that a row adds up to its total: two per home province (R12).
      for (const value of [score.home_provinces * 2, score.other_provinces, score.castles, score.total]) {
        const td = document.createElement("td");
        td.className = "num";
        td.textContent = String(value);
        tr.append(td);
      }
      return tr;
    }),
  );
  // Once it is over the played turns are everyone's (R12), and the standings say so.
  document.getElementById("scores-history").hidden = state.tournament.ended_after_turn == null;
  section.hidden = false;
}
