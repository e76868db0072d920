// The big screen: clock, turn, announcements, the map where the public may see the armies,
// and at the end the final standings (R12) with the points of every clan turn by turn. At
// each turn's deadline a gong (alarm.js) and "Orders closed"; the next deadline's time.
//
// Everything shown comes from the public state (GET /api/tournaments/<id>/state), kept
// fresh by live.js. The strings come translated from the page (#screen-config).
//
// `drawScoreChart` is exported for the judge console too: an inline SVG line chart, no
// library. Each clan has its colour, a dash pattern and a marker of its own, and its name
// at the end of its line, so the chart reads without colours as well.

import { showCommitment } from "./commitment.js";
import { svgEl } from "./dom.js";
import { formatClock } from "./format.js";
import { connectLive, remainingSeconds, turnOver } from "./live.js";
import { audioUnlocker, playGong } from "./alarm.js";

// Told apart without colour: every clan a different dash pattern and marker (the clan's
// marker shape on the map, from strategic_map/drawing.py, when the page gives it).
const DASHES = ["", "14 6", "4 5", "16 5 4 5", "2 6", "24 8", "9 4 2 4 2 4", "10 10"];
const MARKERS = ["circle", "square", "triangle", "diamond", "triangle-down", "star", "hexagon", "pentagon", "cross", "plus"];

/** The turn in words, the same on every page: "Turn 3 of 8", or once over "Ended after
 * turn 5 of 8" (the last turn played: "End the game" leaves its open turn unplayed). */
export function turnWords(t, strings) {
  if (t.ended_after_turn != null) {
    const turn = t.ended_after_turn;
    return t.turns_total ? fill(strings.ended_after_of, { turn, total: t.turns_total }) : fill(strings.ended_after, { turn });
  }
  if (!t.turn) return "";
  return t.turns_total ? fill(strings.turn_of, { turn: t.turn, total: t.turns_total }) : fill(strings.turn_n, { turn: t.turn });
}

/** "%(name)s" placeholders filled in, as Django's Python-format strings. */
export function fill(text, params = {}) {
  return String(text).replace(/%\((\w+)\)s/g, (_, key) => (key in params ? params[key] : ""));
}

/** A server time (ISO 8601) as hours and minutes in the tournament's time zone. */
export function formatTime(iso, timeZone, withSeconds = false) {
  if (!iso) return "";
  const date = new Date(String(iso).replace(/(\.\d{3})\d+/, "$1"));
  const options = { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone };
  if (withSeconds) options.second = "2-digit";
  try {
    return new Intl.DateTimeFormat(document.documentElement.lang || undefined, options).format(date);
  } catch {
    return date.toISOString().slice(11, withSeconds ? 19 : 16);
  }
}

function marker(shape, x, y, r, colour, parent) {
  const common = { fill: colour, stroke: "#fff", "stroke-width": Math.max(1, r / 3) };
  const points = (list) => list.map(([px, py]) => `${x + px * r},${y + py * r}`).join(" ");
  switch (shape) {
    case "square":
      return svgEl("rect", { x: x - r * 0.85, y: y - r * 0.85, width: r * 1.7, height: r * 1.7, ...common }, parent);
    case "triangle":
      return svgEl("polygon", { points: points([[0, -1.2], [1.1, 0.8], [-1.1, 0.8]]), ...common }, parent);
    case "triangle-down":
      return svgEl("polygon", { points: points([[0, 1.2], [1.1, -0.8], [-1.1, -0.8]]), ...common }, parent);
    case "diamond":
      return svgEl("polygon", { points: points([[0, -1.25], [1.1, 0], [0, 1.25], [-1.1, 0]]), ...common }, parent);
    case "cross":
      return svgEl("polygon", {
        points: points([[-1, -0.6], [-0.6, -1], [0, -0.4], [0.6, -1], [1, -0.6], [0.4, 0],
          [1, 0.6], [0.6, 1], [0, 0.4], [-0.6, 1], [-1, 0.6], [-0.4, 0]]),
        ...common,
      }, parent);
    case "plus":
      return svgEl("polygon", {
        points: points([[-0.35, -1.1], [0.35, -1.1], [0.35, -0.35], [1.1, -0.35], [1.1, 0.35],
          [0.35, 0.35], [0.35, 1.1], [-0.35, 1.1], [-0.35, 0.35], [-1.1, 0.35], [-1.1, -0.35],
          [-0.35, -0.35]]),
        ...common,
      }, parent);
    case "hexagon":
    case "pentagon": {
      const sides = shape === "hexagon" ? 6 : 5;
      const list = [];
      for (let i = 0; i < sides; i += 1) {
        const angle = -Math.PI / 2 + (i * 2 * Math.PI) / sides;
        list.push([Math.cos(angle) * 1.15, Math.sin(angle) * 1.15]);
      }
      return svgEl("polygon", { points: points(list), ...common }, parent);
    }
    case "star": {
      const list = [];
      for (let i = 0; i < 10; i += 1) {
        const angle = -Math.PI / 2 + (i * Math.PI) / 5;
        const radius = i % 2 === 0 ? 1.3 : 0.55;
        list.push([Math.cos(angle) * radius, Math.sin(angle) * radius]);
      }
      return svgEl("polygon", { points: points(list), ...common }, parent);
    }
    default:
      return svgEl("circle", { cx: x, cy: y, r, ...common }, parent);
  }
}

function niceMax(value) {
  if (value <= 5) return 5;
  const step = value <= 20 ? 5 : value <= 50 ? 10 : 20;
  return Math.ceil(value / step) * step;
}

/**
 * Draw the points of every clan after every turn into `container` as an SVG line chart.
 *
 * history: [{turn, scores: {clan: points}}] (turn 0 is the start);
 * clans: [{id, name, colour}] in the order they get their patterns;
 * strings: the page's catalog (start, turn, scores_by_turn, chart_description).
 */
export function drawScoreChart(container, history, { clans, strings = {}, width = 960, height = 540, fontSize = 18 } = {}) {
  container.replaceChildren();
  if (!history || history.length === 0) return null;
  const turns = history.map((h) => h.turn);
  const minTurn = Math.min(...turns);
  const maxTurn = Math.max(...turns, minTurn + 1);
  const shown = clans.filter((c) => history.some((h) => c.id in (h.scores || {})));
  const top = Math.max(1, ...history.flatMap((h) => shown.map((c) => h.scores?.[c.id] ?? 0)));
  const yMax = niceMax(top);
  const last = history[history.length - 1].scores || {};
  const labelChars = Math.max(...shown.map((c) => `${c.name} ${last[c.id] ?? ""}`.length), 4);
  const labelWidth = labelChars * fontSize * 0.64 + fontSize * 2.6;
  const m = { left: fontSize * 3, right: labelWidth, top: fontSize, bottom: fontSize * 2.6 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const x = (turn) => m.left + ((turn - minTurn) / (maxTurn - minTurn)) * plotW;
  const y = (points) => m.top + plotH - (points / yMax) * plotH;

  const root = svgEl("svg", {
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": strings.chart_description || "",
    class: "score-chart-svg",
    preserveAspectRatio: "xMidYMid meet",
  });
  svgEl("title", {}, root).textContent = strings.scores_by_turn || "";
  const grid = svgEl("g", { class: "chart-grid", "font-size": fontSize }, root);
  const yStep = yMax <= 10 ? 2 : yMax <= 30 ? 5 : 10;
  for (let v = 0; v <= yMax; v += yStep) {
    svgEl("line", { x1: m.left, x2: m.left + plotW, y1: y(v), y2: y(v), stroke: "#d4cfc4", "stroke-width": 1 }, grid);
    const label = svgEl("text", { x: m.left - fontSize * 0.4, y: y(v) + fontSize * 0.35, "text-anchor": "end", fill: "#333" }, grid);
    label.textContent = String(v);
  }
  const span = maxTurn - minTurn;
  const xStep = span <= 16 ? 1 : Math.ceil(span / 16);
  for (let turn = minTurn; turn <= maxTurn; turn += xStep) {
    const label = svgEl("text", { x: x(turn), y: m.top + plotH + fontSize * 1.3, "text-anchor": "middle", fill: "#333" }, grid);
    label.textContent = turn === 0 ? strings.start || "0" : String(turn);
  }
  const axis = svgEl("text", {
    x: m.left + plotW / 2, y: height - fontSize * 0.3, "text-anchor": "middle", fill: "#333",
  }, grid);
  axis.textContent = strings.turn || "";
  svgEl("line", { x1: m.left, x2: m.left + plotW, y1: y(0), y2: y(0), stroke: "#555", "stroke-width": 1.5 }, grid);

  const ends = [];
  shown.forEach((clan, index) => {
    const colour = clan.colour || "#333";
    const points = history.filter((h) => clan.id in (h.scores || {})).map((h) => [x(h.turn), y(h.scores[clan.id]), h]);
    const group = svgEl("g", { class: `chart-clan chart-clan-${clan.id}` }, root);
    svgEl("title", {}, group).textContent = `${clan.name}: ${points.map(([, , h]) => h.scores[clan.id]).join(", ")}`;
    svgEl("polyline", {
      points: points.map(([px, py]) => `${px},${py}`).join(" "),
      fill: "none",
      stroke: colour,
      "stroke-width": Math.max(2.5, fontSize / 5),
      "stroke-dasharray": DASHES[index % DASHES.length],
      "stroke-linejoin": "round",
      "stroke-linecap": "round",
    }, group);
    const shape = clan.shape || MARKERS[index % MARKERS.length];
    for (const [px, py] of points) marker(shape, px, py, fontSize * 0.32, colour, group);
    const [lx, ly, last] = points[points.length - 1];
    ends.push({ clan, colour, shape, x: lx, y: ly, value: last.scores[clan.id], group });
  });

  // Names at the ends of the lines, pushed apart so that equal scores stay readable.
  ends.sort((a, b) => a.y - b.y);
  const gap = fontSize * 1.15;
  for (let i = 1; i < ends.length; i += 1) ends[i].labelY = Math.max(ends[i].y, (ends[i - 1].labelY ?? ends[i - 1].y) + gap);
  if (ends.length) ends[0].labelY = ends[0].labelY ?? ends[0].y;
  const overflow = (ends.at(-1)?.labelY ?? 0) - (m.top + plotH);
  if (overflow > 0) for (const end of ends) end.labelY -= overflow;
  for (let i = ends.length - 2; i >= 0; i -= 1) ends[i].labelY = Math.min(ends[i].labelY, ends[i + 1].labelY - gap);
  const labelX = m.left + plotW + fontSize * 0.8;
  for (const end of ends) {
    svgEl("line", { x1: end.x, y1: end.y, x2: labelX + fontSize * 0.2, y2: end.labelY, stroke: end.colour, "stroke-width": 1, opacity: 0.6 }, end.group);
    marker(end.shape, labelX + fontSize * 0.7, end.labelY, fontSize * 0.32, end.colour, end.group);
    const text = svgEl("text", {
      x: labelX + fontSize * 1.4, y: end.labelY + fontSize * 0.35, fill: end.colour,
      "font-size": fontSize, "font-weight": 700,
    }, end.group);
    text.textContent = `${end.clan.name} ${end.value}`;
  }
  container.appendChild(root);
  return root;
}

/** R12: clans by points, equal scores sharing the place. */
export function standings(scores, clans) {
  const names = Object.fromEntries(clans.map((c) => [c.id, c]));
  const rows = Object.entries(scores || {})
    .map(([clan, s]) => ({ clan, name: names[clan]?.name || clan, colour: names[clan]?.colour, ...s }))
    .sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
  let place = 0;
  let previous = null;
  rows.forEach((row, index) => {
    if (row.total !== previous) {
      place = index + 1;
      previous = row.total;
    }
    row.place = place;
  });
  return rows;
}

// --- The page -------------------------------------------------------------------------------

function bootScreen(configNode) {
  const config = JSON.parse(configNode.textContent);
  const S = config.strings;
  const initial = document.getElementById("screen-state");
  let state = initial ? JSON.parse(initial.textContent) : null;
  let offsetMs = 0;
  let overlay = null;
  const $ = (id) => document.getElementById(id);

  const mapSvg = document.querySelector("#screen-map svg");
  if (mapSvg) {
    import("./map.js")
      .then((module) => {
        overlay = module.renderOverlay;
        if (state) drawMap(state);
      })
      .catch((error) => console.warn("screen: no map overlay", error));
  }

  function drawMap(current) {
    if (!overlay || !mapSvg || !current.viewer?.sees_all_armies) return;
    overlay(mapSvg, current, { clanColours: config.clanColours });
  }

  function turnText(current) {
    return turnWords(current.tournament, S);
  }

  function drawAnnouncements(current) {
    const list = $("screen-announcements-list");
    if (!list) return;
    const items = (current.announcements || []).map((a) => {
      const li = document.createElement("li");
      const time = document.createElement("time");
      time.dateTime = a.at;
      time.textContent = formatTime(a.at, config.timeZone);
      const text = document.createElement("span");
      text.className = "announcement-text";
      text.textContent = a.text;
      li.append(time, text);
      return li;
    });
    if (!items.length) {
      const li = document.createElement("li");
      li.className = "muted";
      li.textContent = S.no_announcements;
      items.push(li);
    }
    list.replaceChildren(...items);
    const latest = (current.announcements || [])[0];
    const final = $("final-announcement");
    if (final) {
      final.hidden = !latest;
      $("final-announcement-text").textContent = latest ? latest.text : "";
    }
  }

  function drawStandings(current) {
    const body = $("standings-body");
    if (!body || !current.scores) return;
    const rows = standings(current.scores, config.clans).map((row) => {
      const tr = document.createElement("tr");
      const cells = [
        row.place,
        row.name,
        row.home_provinces * 2,
        row.other_provinces,
        row.castles,
        row.total,
      ];
      cells.forEach((value, i) => {
        const td = document.createElement(i === 1 ? "th" : "td");
        if (i === 1) {
          td.scope = "row";
          const swatch = document.createElement("span");
          swatch.className = `swatch swatch-${row.clan}`;
          swatch.style.background = row.colour || "#333";
          td.append(swatch, document.createTextNode(String(value)));
        } else {
          td.textContent = String(value);
          td.className = i === 0 ? "place" : "num";
        }
        if (i === 5) td.classList.add("total");
        tr.appendChild(td);
      });
      return tr;
    });
    body.replaceChildren(...rows);
    const chart = $("score-chart");
    if (chart) {
      drawScoreChart(chart, current.score_history || [], {
        clans: config.clans, strings: S, width: 1000, height: 760, fontSize: 26,
      });
    }
  }

  // R1.1: where the public sees the board, each clan's provinces and points so far.
  function drawPoints(current) {
    const body = $("points-body");
    if (!body || !current.scores) return;
    const rows = standings(current.scores, config.clans).map((row) => {
      const tr = document.createElement("tr");
      const name = document.createElement("th");
      name.scope = "row";
      const swatch = document.createElement("span");
      swatch.className = `swatch swatch-${row.clan}`;
      name.append(swatch, document.createTextNode(row.name));
      const provinces = document.createElement("td");
      provinces.className = "num";
      provinces.textContent = String(row.home_provinces + row.other_provinces);
      const total = document.createElement("td");
      total.className = "num total";
      total.textContent = String(row.total);
      tr.append(name, provinces, total);
      return tr;
    });
    body.replaceChildren(...rows);
  }

  // Issue 32: a gong at each turn's deadline (if the judges leave it on: screen_gong, and
  // once the operator has pressed "Sound on", as browsers require), "Orders closed" from the
  // deadline until the next turn arrives, and when the next deadline is.
  const audio = audioUnlocker({ enabled: () => Boolean(state && state.tournament.screen_gong) });
  const soundButton = $("screen-sound");
  if (soundButton) {
    soundButton.addEventListener("click", () => {
      audio.unlock();
      tick();
    });
  }
  let closedKey = null; // the turn and deadline whose deadline this screen saw pass
  let openTurn = null; // the turn this screen saw running before its deadline
  const gonged = new Set();

  const deadlineKey = (current) => `${current.tournament.turn}|${current.tournament.clock.deadline}`;

  function gong(turn) {
    if (gonged.has(turn)) return;
    gonged.add(turn);
    const context = state.tournament.screen_gong ? audio.context() : null;
    if (!context) return;
    try {
      playGong(context);
    } catch (error) {
      console.warn("screen: no gong", error);
    }
  }

  function draw(current) {
    // A judge resolved the turn before its deadline: its orders closed then, gong and all.
    const before = state;
    if (before && openTurn === before.tournament.turn && current.tournament.turn > openTurn) gong(openTurn);
    state = current;
    const t = current.tournament;
    const finished = t.clock.phase === "finished";
    document.body.classList.toggle("is-finished", finished);
    document.body.classList.toggle("is-paused", Boolean(t.clock.paused));
    $("screen-name").textContent = t.name;
    $("screen-turn").textContent = turnText(current);
    showCommitment(current);
    // While the turns run, the turn number says it all.
    $("screen-phase").textContent = t.clock.phase === "running" ? "" : config.phases[t.clock.phase] || t.clock.phase;
    $("screen-phase").hidden = remainingSeconds(current, offsetMs) === null;
    $("screen-paused").hidden = !t.clock.paused;
    $("screen-final").hidden = !finished;
    $("screen-live").hidden = finished;
    drawAnnouncements(current);
    if (finished) drawStandings(current);
    else drawPoints(current);
    drawMap(current);
    tick();
  }

  function tick() {
    if (!state) return;
    const seconds = remainingSeconds(state, offsetMs);
    const clock = $("screen-countdown");
    // No clock (set-up, declaring positions): the phase stands where the countdown would.
    const phase = state.tournament.clock.phase;
    // Past the deadline a 0:00 would look like a frozen screen: say what is happening. Once
    // seen, the deadline stays passed until the next turn (or a changed deadline) arrives,
    // whatever a fresh state's clock says meanwhile.
    const t = state.tournament;
    const running = phase === "running" && !t.clock.paused;
    if (turnOver(state, offsetMs)) closedKey = deadlineKey(state);
    const over = running && closedKey === deadlineKey(state);
    if (running && !over) openTurn = t.turn;
    else if (over && openTurn === t.turn) gong(t.turn);
    drawDeadline(over);
    const text = over ? S.turn_over : seconds === null ? config.phases[phase] || S.no_clock : formatClock(seconds);
    if (clock.textContent !== text) clock.textContent = text;
    clock.classList.toggle("is-low", seconds !== null && seconds < 60 && !state.tournament.clock.paused && !over);
    clock.classList.toggle("is-idle", seconds === null || over);
    clock.classList.toggle("is-over", over);
    clock.classList.toggle("is-long", seconds !== null && seconds >= 3600 && !over);
  }

  function drawDeadline(over) {
    const t = state.tournament;
    document.body.classList.toggle("is-closed", over);
    $("screen-closed").hidden = !over;
    const next = $("screen-next");
    const deadline = t.clock.deadline;
    next.hidden = !deadline || over || Boolean(t.clock.paused) || t.clock.phase === "finished";
    next.parentElement.classList.toggle("has-next", !next.hidden);
    const time = $("screen-next-time");
    const text = deadline ? formatTime(deadline, config.timeZone) : "";
    if (time.textContent !== text) {
      time.textContent = text;
      time.dateTime = deadline || "";
    }
    if (soundButton) {
      soundButton.hidden = !t.screen_gong || t.clock.phase === "finished" || audio.unlocked();
    }
  }

  const statusNode = $("screen-status");
  connectLive({
    tournamentId: config.tournamentId,
    onState(current, { serverOffsetMs }) {
      offsetMs = serverOffsetMs;
      draw(current);
    },
    onStatus(status) {
      if (!statusNode) return;
      statusNode.hidden = status === "live";
      statusNode.textContent = status === "live" ? S.live_connected : S.live_offline;
    },
  });
  if (state) draw(state);
  setInterval(tick, 250);
}

const screenConfig = document.getElementById("screen-config");
if (screenConfig) bootScreen(screenConfig);
