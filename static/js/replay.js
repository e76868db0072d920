// The campaign told on the big screen (issue 32): one step at a time, the start, then for
// every turn its orders (arrows from where each army stood) and what came of them (the
// board after it, meetings and battles, provinces that changed hands outlined), then the
// standings; the points chart grows with the steps.
//
// The server draws every step's panel (referees/templates/referees/replay.html) and hands
// the story over as JSON (#replay-story, referees/replay.py campaign_story); this shows one
// panel, draws its board with map.js and the points with screen.js's chart, and steps:
//
//   → PageDown Space: next · ← PageUp: previous · Home End: first, last · P or K: pause/play
//
// (a presentation clicker sends PageDown and PageUp). Playing, it steps on by itself every
// few seconds (the speed select) and starts again after the standings, for unattended play.
// ?play=1 starts playing, ?speed=N sets the seconds per step; the step is kept in the
// address (#step-N), so a reload stays where it was.

import { renderOverlay } from "./map.js";
import { drawScoreChart, fill } from "./screen.js";

const config = JSON.parse(document.getElementById("replay-config").textContent);
const story = JSON.parse(document.getElementById("replay-story").textContent);
const S = config.strings;
const steps = config.steps;
const $ = (id) => document.getElementById(id);

const map = document.querySelector("#replay-map svg.war-map");
const chart = $("replay-chart");
const playButton = $("replay-play");
const speedSelect = $("replay-speed");
const turns = new Map(story.turns.map((turn) => [turn.turn, turn]));

let index = 0;
let playing = false;
let timer = null;

function state(board, orders = [], meetings = []) {
  return {
    viewer: { kind: "public", sees_all_armies: true },
    tournament: { excluded_clans: story.tournament.excluded_clans || [] },
    visible_provinces: null,
    armies: board.armies,
    control: board.control,
    orders,
    meetings,
  };
}

/** The board a step shows, its arrows and the provinces outlined on it. */
function boardOf(step) {
  const turn = turns.get(step.turn);
  if (step.kind === "orders" && turn) {
    const moves = turn.orders.filter((o) => o.outcome !== "rejected");
    return { shown: state(turn.before, moves), highlight: turn.between.control_changes.map((c) => c.province) };
  }
  if (step.kind === "result" && turn) {
    return { shown: state(turn.after, [], turn.meetings), highlight: turn.control_changes.map((c) => c.province) };
  }
  if (step.kind === "final") return { shown: state(story.end), highlight: [] };
  return { shown: state(story.start), highlight: [] };
}

/** The points up to the step's turn; the turns still to come keep the chart's width. */
function historyUpTo(step) {
  const upTo = step.kind === "orders" ? step.turn - 1 : step.kind === "start" ? 0 : step.turn;
  const known = story.score_history.filter((h) => h.turn <= upTo);
  const later = story.score_history.filter((h) => h.turn > upTo).map((h) => ({ turn: h.turn, scores: {} }));
  return [...known, ...later];
}

function chartSize() {
  if (window.matchMedia("(max-width: 900px)").matches) return { width: 720, height: 420, fontSize: 20 };
  // At the end the chart has the whole column beside the standings, as on the big screen.
  return steps[index].kind === "final" ? { width: 1000, height: 760, fontSize: 26 } : { width: 1000, height: 400, fontSize: 22 };
}

/**
 * Two armies ordered into each other's province (a swap, R5.2) have arrows on the same line:
 * each arrow moves a little to its own left, so both stay visible.
 */
function sideBySide(svg) {
  const shift = (Number(svg.dataset.markerSize) || 12) * 0.45;
  let casing = null;
  for (const path of svg.querySelectorAll(".map-orders path")) {
    if (path.classList.contains("order-casing")) {
      casing = path;
      continue;
    }
    const numbers = (path.getAttribute("d") || "").match(/-?\d+(\.\d+)?/g)?.map(Number) || [];
    if (numbers.length < 4) continue;
    const [x1, y1, x2, y2] = numbers;
    const length = Math.hypot(x2 - x1, y2 - y1) || 1;
    const offset = `translate(${((shift * (y2 - y1)) / length).toFixed(1)} ${((-shift * (x2 - x1)) / length).toFixed(1)})`;
    path.setAttribute("transform", offset);
    if (casing) casing.setAttribute("transform", offset);
    casing = null;
  }
}

/** On a projector the whole step stands on the screen: a long one is set smaller. */
function fitPanel() {
  const panel = $("replay-panel");
  panel.style.fontSize = "";
  if (window.matchMedia("(max-width: 900px)").matches) return;
  const fits = () => panel.scrollHeight <= panel.clientHeight + 1 && panel.scrollWidth <= panel.clientWidth + 1;
  if (fits()) return;
  // The largest size that fits, found by halving (lists flow into two columns as they shrink).
  let high = parseFloat(getComputedStyle(panel).fontSize);
  let low = window.innerHeight * 0.013;
  for (let tries = 0; tries < 8; tries += 1) {
    const middle = (low + high) / 2;
    panel.style.fontSize = `${middle.toFixed(2)}px`;
    if (fits()) low = middle;
    else high = middle;
  }
  panel.style.fontSize = `${low.toFixed(2)}px`;
}

function show(next) {
  index = Math.max(0, Math.min(steps.length - 1, next));
  const step = steps[index];
  let title = "";
  for (const article of document.querySelectorAll(".replay-step")) {
    const here = Number(article.dataset.step) === index;
    article.hidden = !here;
    if (here) title = article.dataset.title || "";
  }
  $("replay-step-title").textContent = title;
  $("replay-progress").textContent = fill(S.step_of, { step: index + 1, total: steps.length });
  document.body.dataset.step = String(index);
  document.body.dataset.kind = step.kind;
  $("replay-previous").disabled = index === 0;
  $("replay-next").disabled = index === steps.length - 1 && !playing;
  if (map) {
    const { shown, highlight } = boardOf(step);
    renderOverlay(map, shown, { clanColours: config.clanColours, strings: S, highlight });
    sideBySide(map);
  }
  if (chart) {
    drawScoreChart(chart, historyUpTo(step), { clans: config.clans, strings: S, ...chartSize() });
  }
  fitPanel();
  history.replaceState(null, "", `#step-${index}`);
  schedule();
}

function seconds() {
  return Number(speedSelect.value) || config.speeds[0];
}

function schedule() {
  if (timer !== null) clearTimeout(timer);
  timer = null;
  if (!playing) return;
  // After the standings, unattended play starts the story again.
  timer = setTimeout(() => show(index >= steps.length - 1 ? 0 : index + 1), seconds() * 1000);
}

function setPlaying(on) {
  playing = on;
  playButton.textContent = on ? S.pause : S.play;
  playButton.setAttribute("aria-pressed", on ? "true" : "false");
  document.body.classList.toggle("is-playing", on);
  $("replay-next").disabled = index === steps.length - 1 && !playing;
  schedule();
}

$("replay-previous").addEventListener("click", () => show(index - 1));
$("replay-next").addEventListener("click", () => show(index + 1));
playButton.addEventListener("click", () => setPlaying(!playing));
speedSelect.addEventListener("change", schedule);

document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const target = event.target;
  if (target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
  // A focused button answers Space and Enter itself.
  if (target instanceof HTMLButtonElement && (event.key === " " || event.key === "Enter")) return;
  const key = event.key;
  let handled = true;
  if (key === "ArrowRight" || key === "PageDown" || key === " ") show(index + 1);
  else if (key === "ArrowLeft" || key === "PageUp") show(index - 1);
  else if (key === "Home") show(0);
  else if (key === "End") show(steps.length - 1);
  else if (["p", "P", "k", "K", "з", "З", "л", "Л"].includes(key)) setPlaying(!playing);
  else handled = false;
  if (handled) event.preventDefault();
});

const params = new URLSearchParams(window.location.search);
const asked = Number(params.get("speed"));
if (asked && [...speedSelect.options].some((o) => Number(o.value) === asked)) speedSelect.value = String(asked);
const fromHash = /^#step-(\d+)$/.exec(window.location.hash);
if (params.get("play") === "1") setPlaying(true);
show(fromHash ? Number(fromHash[1]) : 0);
// The chart fits its column: drawn again when a phone turns or a window is resized.
window.addEventListener("resize", () => {
  if (chart) drawScoreChart(chart, historyUpTo(steps[index]), { clans: config.clans, strings: S, ...chartSize() });
  fitPanel();
});
