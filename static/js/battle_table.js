/**
 * battle_table.js: one battle table (battles/templates/battles/table.html), phone first.
 *
 * What is drawn is the table as the API shows it to this viewer (R1.1):
 * GET /api/tournaments/{id}/battles/{bid}, first from the page (#battle-initial), then again
 * whenever live.js hears that the tournament changed (a "battle" event bumps its version).
 * The buttons come from the row's `actions` (what the table game lets this viewer send now)
 * and `you` (vote, choose the survivors, correct); they POST to .../vote, .../actions,
 * .../result and .../correct. A refusal's `detail` is shown on the page.
 *
 * Texts come translated from the page: #page-strings (the players' pages' common texts) and
 * #battle-strings (this page's), read with pageStrings(); {name} placeholders are filled here.
 */

import { ask } from "./battle_confirm.js";
import { ApiError, apiCall, fmt, pageStrings, startPlayerPage } from "./players.js";

const $ = (id) => document.getElementById(id);
const config = JSON.parse($("battle-config").textContent);
const S = { ...pageStrings("page-strings"), ...pageStrings("battle-strings") };
const root = $("battle-page");
const base = `/tournaments/${config.tournamentId}/battles/${config.battleId}`;
const judge = config.viewer.kind === "judge";
const mine = config.viewer.army || null;

const L5R_PHASES = ["straighten", "events", "action", "attack", "dynasty", "end"];
const BUSHIDO_PHASES = ["starting", "main", "end"];
const ELEMENTS = ["air", "earth", "fire", "water", "void"];
const HONOR_FLOOR = -19; // R13: the Legacy Sensei never take family honor below −19
const PRODUCTION_TURNS = 2; // R8
const OK_SHOWN_MS = 8000;

let row = JSON.parse($("battle-initial").textContent);
let busy = false;
let fetching = false;
let again = false;
let seatingDraft = null; // the chooser's seating while he arranges it

// --- Small helpers ------------------------------------------------------------------------

function el(tag, { text, className, attrs } = {}, ...children) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

/** A button; `key` names it across renders (focus comes back to it after a change). */
function button(text, onClick, { className = "big-button", pressed, disabled, title, key, label } = {}) {
  const node = el("button", { text, className, attrs: { type: "button", "data-key": key || text } });
  if (label) node.setAttribute("aria-label", label);
  if (pressed !== undefined) node.setAttribute("aria-pressed", pressed ? "true" : "false");
  if (disabled) node.disabled = true;
  if (title) node.title = title;
  node.addEventListener("click", () => onClick(node));
  return node;
}

/** The page's text for a code: S["<prefix>-<value>"] (underscores as hyphens), else the code. */
function named(prefix, value) {
  if (value === null || value === undefined) return "";
  return S[`${prefix}-${String(value).replace(/_/g, "-")}`] || String(value);
}

function clanName(clan) {
  return config.clans[clan] || clan || "";
}

function seat(army) {
  return (row.armies || []).find((a) => a.code === army) || null;
}

/** "crab-1 (Crab, Name)" as far as it is known. */
function armyLabel(army) {
  const found = seat(army);
  const clan = found ? found.clan : (army || "").replace(/-\d+$/, "");
  const parts = [clanName(clan)];
  if (found && found.general) parts.push(found.general);
  return `${army} (${parts.join(", ")})`;
}

function armyShort(army) {
  if (army === mine) return fmt(S["army-you"], { army });
  return army;
}

function list(items) {
  return items.join(", ");
}

function can(kind) {
  return (row.actions || []).includes(kind);
}

function tableState() {
  return row.table || null;
}

function tablePlayer(army) {
  const table = tableState();
  return table ? (table.players || []).find((p) => p.army === army) || null : null;
}

function summaryPlayer(army) {
  const summary = row.summary;
  return summary ? (summary.players || []).find((p) => p.army === army) || null : null;
}

function phaseName(phase) {
  return named("lphase", phase);
}

function signed(n) {
  if (n > 0) return `+${n}`;
  if (n < 0) return `−${Math.abs(n)}`;
  return "0";
}

// --- Talking to the API ----------------------------------------------------------------------

function errorText(error) {
  if (!(error instanceof ApiError)) {
    // The browser knows it has no network: say so, rather than blame the server.
    return navigator.onLine === false && S["battle-offline"] ? S["battle-offline"] : S["battle-network"];
  }
  const reason = error.detail || error.code || "";
  if (error.status === 401) return S["error-signed-out"];
  if (error.status === 403 && error.code === "csrf") return S["error-csrf"];
  if (error.status === 429) return S["battle-rate"];
  if (error.status >= 400 && error.status < 500) return fmt(S["battle-refused"], { reason });
  return fmt(S["error-other"], { status: error.status, reason });
}

let sayTimer = null;

/** A message above the table; a success fades after a while, a refusal stays. */
function say(text, kind = "ok") {
  const box = $("battle-message");
  box.textContent = text || "";
  box.className = `message${text ? ` is-${kind}` : ""}`;
  window.clearTimeout(sayTimer);
  if (text && kind === "ok") sayTimer = window.setTimeout(() => say(""), OK_SHOWN_MS);
}

/** A number field that keeps what the user typed when the table is drawn again. */
function numberInput(key, attrs) {
  const input = el("input", {
    className: "honor-input",
    attrs: { type: "number", inputmode: "numeric", "data-key": key, ...attrs },
  });
  input.addEventListener("input", () => {
    input.dataset.typed = "1";
  });
  return input;
}

async function send(path, body, source, okText = S["battle-done"], onOk = null) {
  if (busy) return;
  busy = true;
  let askFirst = false;
  const buttons = [...root.querySelectorAll("button")];
  for (const b of buttons) b.dataset.wasDisabled = b.disabled ? "1" : "";
  for (const b of buttons) b.disabled = true;
  say(S["battle-sending"], "info");
  try {
    const fresh = await apiCall("POST", `${base}${path}`, body);
    row = fresh;
    if (onOk) onOk();
    say(okText, "ok");
  } catch (error) {
    // R8: the server asks before an action that ends the game for a player (say −20 honor);
    // the dialog asks him, and only a yes sends it again.
    askFirst = error instanceof ApiError && error.status === 409 && error.code === "confirm" && !body.confirm;
    say(askFirst ? "" : errorText(error), "error");
  } finally {
    busy = false;
    for (const b of buttons) b.disabled = b.dataset.wasDisabled === "1";
    const key = source && source.dataset ? source.dataset.key : null;
    render();
    if (source && document.body.contains(source)) source.focus();
    else if (key) refocus(key);
  }
  if (askFirst && (await ask(S["confirm-ending"]))) await send(path, { ...body, confirm: true }, source, okText, onOk);
}

function act(action, source, okText, onOk) {
  // R8, R13: a General's change to another player's counts waits for that player's consent.
  // R14: in Bushido a side is a clan, and its Generals keep its counts together.
  const target = action.army;
  const counted = ["honor", "province", "ring", "models", "victory_points"].includes(action.type);
  const otherSide = row.game !== "bushido" || (seat(target) && seat(mine) && seat(target).clan !== seat(mine).clan);
  const proposal = !judge && target && target !== mine && counted && otherSide;
  const text = proposal ? fmt(S["proposal-made"], { army: target }) : okText;
  return send("/actions", action, source, text, onOk);
}

// --- Proposals waiting for consent (R8, R13) -----------------------------------------------------

function proposalText(proposal) {
  const a = proposal.action || {};
  const army = armyShort(proposal.to);
  let what;
  if (a.type === "honor") what = fmt(S["proposal-honor"], { army, delta: signed(a.delta) });
  else if (a.type === "province" && a.delta < 0) what = fmt(S["proposal-province-lost"], { army });
  else if (a.type === "province") what = fmt(S["proposal-province-regained"], { army });
  else if (a.type === "ring") what = fmt(S["proposal-ring"], { army, ring: S[`ring-${a.element}`] || a.element });
  else if (a.type === "models") what = fmt(S["proposal-models"], { army, count: a.count });
  else if (a.type === "victory_points") what = fmt(S["proposal-victory-points"], { army, delta: signed(a.points) });
  else what = fmt(S["proposal-other"], { army, type: named("action", a.type) });
  return fmt(S["proposal-line"], { by: armyLabel(proposal.by), what });
}

function renderProposals() {
  const proposals = row.proposals || [];
  $("proposals-panel").hidden = proposals.length === 0;
  $("proposal-list").replaceChildren(
    ...proposals.map((proposal) => {
      const answer = (word, okKey) => async (b) => {
        // Consenting to his own end (his last province, −20 honor) is asked once more (R8).
        const a = proposal.action || {};
        const p = tablePlayer(proposal.to);
        const ending =
          p &&
          ((a.type === "province" && a.delta < 0 && p.provinces === 1) ||
            (a.type === "honor" && p.honor > -20 && p.honor + a.delta <= -20));
        if (word === "confirm" && ending && !(await ask(S["confirm-ending"]))) return;
        send(`/proposals/${proposal.id}`, { answer: word }, b, S[okKey]);
      };
      const buttons = [];
      if (proposal.may_answer) {
        buttons.push(
          button(S["proposal-confirm"], answer("confirm", "proposal-confirmed"), {
            className: "big-button is-primary",
            key: `proposal-confirm-${proposal.id}`,
          }),
          button(S["proposal-decline"], answer("decline", "proposal-declined"), {
            key: `proposal-decline-${proposal.id}`,
          }),
        );
      }
      if (proposal.may_withdraw) {
        buttons.push(
          button(S["proposal-withdraw"], answer("withdraw", "proposal-withdrawn"), {
            className: "big-button is-quiet",
            key: `proposal-withdraw-${proposal.id}`,
          }),
        );
      }
      const item = el(
        "li",
        { className: "proposal", attrs: { "data-proposal": String(proposal.id) } },
        el("p", { className: "proposal-text", text: proposalText(proposal) }),
      );
      if (!proposal.may_answer) {
        item.append(el("p", { className: "note", text: fmt(S["proposal-waiting"], { army: armyShort(proposal.to) }) }));
      }
      if (buttons.length) item.append(el("div", { className: "button-row tight" }, ...buttons));
      return item;
    }),
  );
}

function refocus(key) {
  const node = [...root.querySelectorAll("[data-key]")].find((n) => n.dataset.key === key);
  if (node && !node.disabled) node.focus();
}

async function refresh() {
  if (fetching) {
    again = true;
    return;
  }
  fetching = true;
  try {
    do {
      again = false;
      row = await apiCall("GET", base);
      $("load-message").textContent = "";
      if (!busy) render();
    } while (again);
  } catch (error) {
    $("load-message").textContent = fmt(S["battle-load-failed"], { reason: errorText(error) });
  } finally {
    fetching = false;
  }
}

// --- The header and the seats --------------------------------------------------------------------

/** R11: the commitment of the table's seed, and the seed itself once the table is over. */
function renderDrawSeed() {
  const draws = row.draws || {};
  const lines = [
    ["battle-commitment", draws.commitment],
    ["battle-seed", draws.seed],
  ];
  for (const [id, value] of lines) {
    $(id).hidden = !value;
    const code = $(`${id}-value`);
    if (code.textContent !== (value || "")) code.textContent = value || "";
  }
}

function renderStatus() {
  renderDrawSeed();
  root.dataset.status = row.status;
  root.dataset.stage = row.summary ? row.summary.stage : "";
  $("status-line").textContent = fmt(S["status-line"], {
    status: named("status", row.status),
    turn: row.opened_turn,
  });
}

function voteText(army) {
  if (army.vote) return named("vote", army.vote);
  return army.voted ? S["vote-hidden"] : S["vote-none"];
}

function renderSeats() {
  const gathering = ["meeting", "peace"].includes(row.status);
  const items = (row.armies || []).map((army) => {
    const player = summaryPlayer(army.code);
    const bits = [];
    if (army.general) bits.push(army.general);
    if (army.mine) bits.push(S["you"]);
    if (army.reinforcement) bits.push(fmt(S["seat-reinforcement"], { turn: army.joined_turn }));
    if (player && player.status && !gathering) bits.push(named("pstatus", player.status));
    const item = el(
      "li",
      { className: `seat${army.mine ? " is-mine" : ""}` },
      el("span", { className: `clan clan-${army.clan}`, text: clanName(army.clan) }),
      " ",
      el("strong", { text: army.code }),
      bits.length ? el("span", { className: "seat-info", text: ` · ${bits.join(" · ")}` }) : null,
    );
    if (gathering || (row.status !== "battle" && army.vote)) {
      item.append(
        el("span", { className: `seat-vote vote-${army.vote || "none"}`, text: voteText(army) }),
      );
    }
    return item;
  });
  $("seat-list").replaceChildren(...items);
}

// --- The meeting: peace or battle (R7) ---------------------------------------------------------

function renderMeeting() {
  const panel = $("meeting-panel");
  const gathering = ["meeting", "peace"].includes(row.status);
  panel.hidden = !gathering;
  if (!gathering) return;
  $("meeting-explain").textContent =
    row.status === "peace" ? S["meeting-peace-explain"] : S["meeting-explain"];
  const own = mine ? seat(mine) : null;
  const voting = Boolean(row.you.may_vote && own);
  $("vote-buttons").hidden = !voting;
  $("your-word").textContent = own
    ? own.vote
      ? fmt(S["your-word"], { vote: named("vote", own.vote) })
      : S["your-word-none"]
    : "";
  for (const b of $("vote-buttons").querySelectorAll("button")) {
    b.setAttribute("aria-pressed", own && own.vote === b.dataset.vote ? "true" : "false");
  }
  const box = $("judge-votes");
  box.hidden = !(judge && row.you.may_vote);
  if (!box.hidden) {
    box.replaceChildren(
      el("h3", { text: S["judge-votes"] }),
      ...(row.armies || []).map((army) =>
        el(
          "div",
          { className: "judge-vote" },
          el("span", { text: `${armyLabel(army.code)}: ${voteText(army)}` }),
          el(
            "div",
            { className: "button-row" },
            button(S["vote-peace-button"], (b) => send("/vote", { army: army.code, vote: "peace" }, b), {
              pressed: army.vote === "peace",
            }),
            button(S["vote-battle-button"], (b) => send("/vote", { army: army.code, vote: "battle" }, b), {
              className: "big-button is-primary",
              pressed: army.vote === "battle",
            }),
          ),
        ),
      ),
    );
  }
}

$("vote-buttons").addEventListener("click", async (event) => {
  const target = event.target.closest("button[data-vote]");
  if (!target) return;
  const vote = target.dataset.vote;
  if (vote === "battle" && !(await ask(S["confirm-battle"]))) return;
  send("/vote", { vote }, target, S["vote-stored"]);
});

// --- The set-up (R7, R10, R13) -------------------------------------------------------------------

function startHonor(p) {
  // R13: the stronghold's honor with the Sensei's change (never below −19), then the
  // battle's bonus (Crane, R10). Before the battle begins it is simply the honor now.
  if (!p.stronghold) return null;
  const sensei = (p.stronghold.sensei && p.stronghold.sensei.honor) || 0;
  return Math.max(HONOR_FLOOR, p.stronghold.honor + sensei) + (p.honor_bonus || 0);
}

function drawText(draw) {
  const what = named("draw", draw.what);
  const result = Array.isArray(draw.result) ? draw.result.join(" → ") : draw.result;
  const method = draw.method === "given" ? S["draw-given"] : S["draw-random"];
  return fmt(S["draw-line"], { what, from: list(draw.from || []), result, method });
}

function setupFacts(participant, p, table) {
  const facts = [];
  const add = (label, value) => facts.push(el("div", {}, el("dt", { text: label }), el("dd", { text: value })));
  const honor = p ? (table.stage === "setup" ? p.honor : startHonor(p)) : null;
  add(S["setup-honor"], honor === null || honor === undefined ? S["setup-no-stronghold"] : String(honor));
  if (participant && participant.honor_bonus) {
    add(S["setup-honor-bonus"], signed(participant.honor_bonus));
  }
  if (p && table.starting_player) {
    add(
      S["setup-start"],
      p.army === table.starting_player ? S["setup-starting-player"] : S["setup-bamboo"],
    );
  } else if (p && p.bamboo_harvesters) {
    add(S["setup-start"], S["setup-bamboo"]);
  }
  const strength = p ? p.province_strength : null;
  add(
    S["setup-provinces"],
    strength === null || strength === undefined ? "4" : fmt(S["setup-provinces-value"], { count: 4, strength }),
  );
  if (p && p.gold !== null && p.gold !== undefined) add(S["setup-gold"], String(p.gold));
  const hand = participant ? participant.hand_size : p ? p.hand_size : null;
  if (hand !== null && hand !== undefined) add(S["setup-hand"], fmt(S["setup-hand-value"], { count: hand }));
  const farms = participant ? participant.small_farms : p ? p.small_farms : 0;
  add(S["setup-farms"], String(farms || 0));
  const force = participant ? participant.force_modifier : p ? p.force_modifier : 0;
  add(S["setup-force"], force ? fmt(S["setup-force-value"], { value: signed(force) }) : S["setup-force-none"]);
  return facts;
}

function renderSetup() {
  const panel = $("setup-panel");
  const table = tableState();
  const setup = row.setup;
  panel.hidden = !setup && !table;
  if (panel.hidden) return;
  const l5r = row.game === "l5r";
  const participants = Object.fromEntries(((setup && setup.participants) || []).map((p) => [p.army, p]));

  // The seating and how it came about (R7, R10, R11).
  let seating = "";
  if (table && l5r) {
    if (table.seating) {
      const how = named("seating-by", table.seating_by);
      seating = fmt(S["seating-line"], { order: table.seating.join(" → "), how });
    } else if (table.chooser) {
      seating = fmt(S["seating-waiting"], { army: armyShort(table.chooser) });
    }
  }
  $("seating-line").textContent = seating;
  const draws = (table && table.draws) || [];
  $("draw-list").replaceChildren(...draws.map((d) => el("li", { text: drawText(d) })));
  $("starting-line").textContent =
    table && table.starting_player ? fmt(S["starting-line"], { army: armyShort(table.starting_player) }) : "";

  // One card per army: what it starts the battle with.
  const order = l5r && table && table.seating ? table.seating : (row.armies || []).map((a) => a.code);
  const armies = [...new Set([...order, ...Object.keys(participants)])];
  const cards = armies.map((army) => {
    const participant = participants[army];
    const p = l5r ? tablePlayer(army) : null;
    const clan = participant ? participant.clan : p ? p.clan : "";
    const notes = ((participant && participant.notes) || []).map((n) => el("li", { text: config.notes[n] || n }));
    return el(
      "article",
      { className: `setup-card${army === mine ? " is-mine" : ""}`, attrs: { "data-army": army } },
      el(
        "h3",
        {},
        el("span", { className: `clan clan-${clan}`, text: clanName(clan) }),
        " ",
        el("span", { text: armyShort(army) }),
      ),
      l5r || participant
        ? el("dl", { className: "facts" }, ...(l5r ? setupFacts(participant, p, table || {}) : bushidoFacts(participant)))
        : null,
      notes.length ? el("ul", { className: "notes" }, ...notes) : null,
      participant && participant.reinforcement ? el("p", { className: "note", text: S["setup-reinforcement"] }) : null,
    );
  });
  $("setup-cards").replaceChildren(...cards);
  renderStrongholdForm();
  renderSeatingForm();
  renderBegin();
}

function bushidoFacts(participant) {
  if (!participant) return [];
  const out = [];
  const add = (label, value) => out.push(el("div", {}, el("dt", { text: label }), el("dd", { text: value })));
  add(S["setup-farms"], String(participant.small_farms || 0));
  const force = participant.force_modifier;
  add(S["setup-force"], force ? fmt(S["setup-force-value"], { value: signed(force) }) : S["setup-force-none"]);
  return out;
}

function needsStronghold() {
  const table = tableState();
  if (!table || row.game !== "l5r") return [];
  return (table.players || [])
    .filter((p) => p.honor === null && p.status !== "lost")
    .map((p) => p.army);
}

function renderStrongholdForm() {
  const form = $("stronghold-form");
  const missing = needsStronghold();
  const armies = judge ? missing : missing.filter((a) => a === mine);
  form.hidden = !(can("stronghold") && armies.length);
  if (form.hidden) return;
  const select = $("stronghold-army");
  const previous = select.value;
  select.replaceChildren(...armies.map((a) => el("option", { text: armyLabel(a), attrs: { value: a } })));
  if (armies.includes(previous)) select.value = previous;
  $("stronghold-army-label").hidden = !judge && armies.length === 1;
}

$("stronghold-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const number = (name) => {
    const value = form.elements.namedItem(name).value.trim();
    return value === "" ? null : Number(value);
  };
  const action = {
    type: "stronghold",
    army: form.elements.namedItem("army").value || mine,
    honor: number("honor"),
    province_strength: number("province_strength"),
    gold: number("gold"),
  };
  const sensei = {};
  for (const key of ["honor", "province_strength", "gold"]) {
    const value = number(`sensei_${key}`);
    if (value !== null) sensei[key] = value;
  }
  if (Object.keys(sensei).length) action.sensei = sensei;
  act(action, form.querySelector("button[type=submit]"), S["stronghold-stored"]);
});

function renderSeatingForm() {
  const box = $("seating-form");
  const table = tableState();
  const show = Boolean(
    row.game === "l5r" && table && table.stage === "setup" && can("seating") && (judge || table.chooser === mine),
  );
  box.hidden = !show;
  if (!show) {
    seatingDraft = null;
    return;
  }
  const armies = (table.players || []).map((p) => p.army);
  if (!seatingDraft || seatingDraft.length !== armies.length || armies.some((a) => !seatingDraft.includes(a))) {
    seatingDraft = table.seating ? [...table.seating] : [...armies];
  }
  const items = seatingDraft.map((army, index) =>
    el(
      "li",
      { className: "seating-item" },
      el("span", { className: "seating-army", text: armyLabel(army) }),
      button("↑", () => moveSeat(index, -1), {
        className: "small-button",
        disabled: index === 0,
        title: S["seating-up"],
      }),
      button("↓", () => moveSeat(index, 1), {
        className: "small-button",
        disabled: index === seatingDraft.length - 1,
        title: S["seating-down"],
      }),
    ),
  );
  $("seating-order").replaceChildren(...items);
}

function moveSeat(index, step) {
  const other = index + step;
  if (!seatingDraft || other < 0 || other >= seatingDraft.length) return;
  [seatingDraft[index], seatingDraft[other]] = [seatingDraft[other], seatingDraft[index]];
  renderSeatingForm();
}

$("seating-send").addEventListener("click", (event) => {
  if (!seatingDraft) return;
  act({ type: "seating", order: [...seatingDraft] }, event.currentTarget, S["seating-stored"]);
});

function renderBegin() {
  const box = $("begin-box");
  const table = tableState();
  box.hidden = !(row.game === "l5r" && can("begin"));
  if (box.hidden || !judge) return;
  const honors = (table.players || []).map((p) => p.honor).filter((h) => h !== null);
  const top = Math.max(...honors);
  const tied = (table.players || []).filter((p) => p.honor === top).map((p) => p.army);
  const label = $("begin-first-label");
  label.hidden = tied.length < 2;
  const select = $("begin-first");
  const previous = select.value;
  select.replaceChildren(
    el("option", { text: S["begin-draw"], attrs: { value: "" } }),
    ...tied.map((a) => el("option", { text: armyLabel(a), attrs: { value: a } })),
  );
  if (tied.includes(previous)) select.value = previous;
}

$("begin-button").addEventListener("click", (event) => {
  const action = { type: "begin" };
  const first = $("begin-first");
  if (first && !$("begin-first-label").hidden && first.value) action.first = first.value;
  act(action, event.currentTarget, S["begun"]);
});

// --- The L5R game: whose turn, phases, players (R8, R13) -------------------------------------------

function freezeText(summary, table) {
  if (summary.stage === "production" && table && table.production) {
    const production = table.production;
    const army = production.order[production.index];
    return [
      fmt(S["production-now"], {
        army: armyShort(army),
        turn: production.turn,
        of: PRODUCTION_TURNS,
      }),
      S["production-rules"],
    ];
  }
  if (summary.frozen && table) {
    const arriving = (table.players || [])
      .filter((p) => p.status === "newcomer" && !(table.seating || []).includes(p.army))
      .map((p) => p.army);
    return [
      fmt(S["frozen-now"], { army: armyShort(summary.current), newcomers: list(arriving) }),
      S["production-rules"],
    ];
  }
  return null;
}

function renderL5R() {
  const panel = $("play-panel");
  const summary = row.summary;
  const table = tableState();
  const playing = Boolean(summary && row.game === "l5r" && ["playing", "production"].includes(summary.stage));
  panel.hidden = !playing;
  if (!playing) return;
  const production = summary.stage === "production";
  const current = summary.current;
  const yours = current && current === mine;
  panel.classList.toggle("is-your-turn", Boolean(yours));
  panel.classList.toggle("is-frozen", Boolean(production || summary.frozen));
  $("turn-who").textContent = yours
    ? S["turn-yours"]
    : fmt(production ? S["turn-production-of"] : S["turn-of"], { army: armyLabel(current) });
  $("turn-phase").textContent = production
    ? fmt(S["production-turn"], { turn: table.production.turn, of: PRODUCTION_TURNS })
    : fmt(S["phase-line"], { phase: phaseName(summary.phase) });
  $("turn-round").textContent = fmt(S["round-line"], { round: summary.round, turn: summary.turn });

  const freeze = freezeText(summary, table);
  const note = $("freeze-note");
  note.hidden = !freeze;
  if (freeze) note.replaceChildren(...freeze.map((t, i) => el(i ? "p" : "strong", { text: t })));

  // The phases: the current one marked; a later one is a button when the turn may move on.
  const steps = $("phase-steps");
  steps.hidden = production;
  const at = L5R_PHASES.indexOf(summary.phase);
  steps.replaceChildren(
    ...L5R_PHASES.map((phase, index) => {
      const item = el("li", { className: index === at ? "is-current" : index < at ? "is-done" : "" });
      if (index === at) item.setAttribute("aria-current", "step");
      if (index > at && can("phase")) {
        item.append(button(phaseName(phase), (b) => act({ type: "phase", phase }, b), { className: "step-button" }));
      } else {
        item.append(el("span", { text: phaseName(phase) }));
      }
      return item;
    }),
  );

  const buttons = [];
  if (can("phase") && at >= 0 && at < L5R_PHASES.length - 1) {
    const next = L5R_PHASES[at + 1];
    buttons.push(
      button(fmt(S["next-phase"], { phase: phaseName(next) }), (b) => act({ type: "phase", phase: next }, b)),
    );
  }
  if (can("end_turn")) {
    buttons.push(
      button(S["end-turn"], (b) => act({ type: "end_turn" }, b, S["turn-ended"]), {
        className: "big-button is-primary",
      }),
    );
  }
  if (can("production_done")) {
    buttons.push(
      button(S["production-done"], (b) => act({ type: "production_done" }, b), {
        className: "big-button is-primary",
      }),
    );
  }
  $("turn-buttons").replaceChildren(...buttons);
  $("player-cards").replaceChildren(...(summary.players || []).map((p) => playerCard(p, summary)));
}

function playerCard(p, summary) {
  const army = p.army;
  const out = p.status === "lost";
  const card = el("article", {
    className: [
      "player-card",
      army === mine ? "is-mine" : "",
      army === summary.current ? "is-current" : "",
      out ? "is-out" : "",
    ].filter(Boolean).join(" "),
    attrs: { "data-army": army },
  });
  const info = tablePlayer(army);
  const status = named("pstatus", p.status);
  const lost = out && info && info.lost_reason ? ` (${named("lost", info.lost_reason)})` : "";
  card.append(
    el(
      "h3",
      {},
      el("span", { className: `clan clan-${p.clan}`, text: clanName(p.clan) }),
      " ",
      el("span", { text: armyShort(army) }),
      el("span", { className: "player-status", text: ` · ${status}${lost}` }),
    ),
  );
  const general = seat(army) && seat(army).general;
  if (general) card.append(el("p", { className: "note general-name", text: general }));

  const quick = can("honor") && !out && p.honor !== null;
  const honorRow = el(
    "div",
    { className: "counter honor-counter" },
    el("span", { className: "counter-label", text: S["honor"] }),
    quick
      ? button("−1", (b) => act({ type: "honor", army, delta: -1 }, b), {
          className: "quick-button",
          label: fmt(S["honor-minus"], { army }),
          key: `honor-minus-${army}`,
        })
      : null,
    el("span", { className: "counter-value honor-value", text: p.honor === null ? "—" : String(p.honor) }),
    quick
      ? button("+1", (b) => act({ type: "honor", army, delta: 1 }, b), {
          className: "quick-button",
          label: fmt(S["honor-plus"], { army }),
          key: `honor-plus-${army}`,
        })
      : null,
  );
  card.append(honorRow);
  if (quick) {
    card.append(honorOther(army));
  }

  const provinces = el(
    "div",
    { className: "counter province-counter" },
    el("span", { className: "counter-label", text: S["provinces-left"] }),
    el("span", { className: "counter-value province-value", text: fmt(S["provinces-value"], { count: p.provinces, of: 4 }) }),
  );
  card.append(provinces);
  if (can("province") && !out && p.honor !== null) {
    card.append(
      el(
        "div",
        { className: "button-row tight" },
        button(S["province-lost"], async (b) => {
          // Another player's province is a proposal he confirms (R8, R13): nothing to ask here.
          const last = p.provinces === 1 && (judge || army === mine);
          const text = army === mine ? S["confirm-own-last-province"] : fmt(S["confirm-last-province"], { army });
          if (last && !(await ask(text))) return;
          act({ type: "province", army, delta: -1, ...(last ? { confirm: true } : {}) }, b);
        }, { className: "big-button", key: `province-lost-${army}` }),
        p.provinces < 4
          ? button(S["province-regained"], (b) => act({ type: "province", army, delta: 1 }, b), {
              className: "big-button is-quiet",
              key: `province-regained-${army}`,
            })
          : null,
      ),
    );
  }

  const rings = el("div", { className: "rings" }, el("span", { className: "counter-label", text: S["rings"] }));
  const claimable = can("ring") && !out && p.honor !== null;
  for (const element of ELEMENTS) {
    const held = (p.rings || []).includes(element);
    if (held) {
      rings.append(el("span", { className: `ring ring-${element} is-held`, text: `✓ ${S[`ring-${element}`]}` }));
    } else if (claimable) {
      rings.append(
        button(S[`ring-${element}`], async (b) => {
          if (!(await ask(fmt(S["confirm-ring"], { army, ring: S[`ring-${element}`] })))) return;
          act({ type: "ring", army, element, confirm: true }, b);
        }, { className: `ring-button ring-${element}`, key: `ring-${element}-${army}` }),
      );
    }
  }
  if (!(p.rings || []).length && !claimable) rings.append(el("span", { className: "note", text: S["rings-none"] }));
  card.append(rings);

  // Enlightenment declared (R13): a General for himself, a judge for anyone.
  const extra = [];
  if (can("declare") && !out && (judge || army === mine)) {
    extra.push(
      button(S["declare-enlightenment"], async (b) => {
        if (!(await ask(fmt(S["confirm-enlightenment"], { army })))) return;
        act({ type: "declare", kind: "enlightenment", army, confirm: true }, b);
      }, { className: "big-button is-quiet", key: `declare-${army}` }),
    );
  }
  if (extra.length) card.append(el("div", { className: "button-row tight" }, ...extra));
  return card;
}

function honorOther(army) {
  // Larger changes (an honor gain of 3, a loss of 5…): a number and a button.
  const input = numberInput(`honor-${army}`, {
    min: "-99",
    max: "99",
    placeholder: "±",
    "aria-label": fmt(S["honor-change-label"], { army }),
  });
  const go = button(S["honor-change"], (b) => {
    const delta = Number(input.value);
    if (input.value.trim() === "" || !Number.isInteger(delta) || delta === 0) {
      say(S["honor-change-invalid"], "error");
      return;
    }
    act({ type: "honor", army, delta }, b, undefined, () => {
      input.value = "";
      delete input.dataset.typed;
    });
  }, { className: "small-button", key: `honor-change-${army}` });
  return el("div", { className: "honor-other" }, input, go);
}

// --- Bushido (R14) ---------------------------------------------------------------------------

function renderBushido() {
  const panel = $("bushido-panel");
  const summary = row.summary;
  const table = tableState();
  const playing = Boolean(summary && row.game === "bushido" && summary.stage === "playing" && summary.phase);
  panel.hidden = !playing;
  if (!playing) return;
  const [a, b] = summary.sides;
  $("bushido-sides").textContent = fmt(S["bushido-game"], {
    n: summary.game_number,
    a: clanName(a),
    b: clanName(b),
  });
  $("bushido-phase").textContent = fmt(S["phase-line"], { phase: named("bphase", summary.phase) });
  $("bushido-turn").textContent = fmt(S["bushido-turn"], { turn: summary.turn, turns: summary.turns });
  $("bushido-queue").textContent = summary.queue.length
    ? fmt(S["bushido-queue"], { clans: list(summary.queue.map(clanName)) })
    : "";
  const at = BUSHIDO_PHASES.indexOf(summary.phase);
  $("bushido-steps").replaceChildren(
    ...BUSHIDO_PHASES.map((phase, index) => {
      const item = el("li", { className: index === at ? "is-current" : index < at ? "is-done" : "" });
      if (index === at) item.setAttribute("aria-current", "step");
      item.append(el("span", { text: named("bphase", phase) }));
      return item;
    }),
  );

  const fighting = (summary.players || []).filter((p) => p.status === "fighting" || p.status === "winner");
  const first = (clan) => (fighting.find((p) => p.clan === clan) || {}).army;
  const body = [];
  // The Starting phase: the tactical test and the models (pass tokens follow, seed 002).
  const test = table ? table.tactical_test : null;
  body.push(el("p", { text: test ? fmt(S["tactical-won"], { army: armyLabel(test) }) : S["tactical-none"] }));
  if (can("tactical_test")) {
    body.push(
      el(
        "div",
        { className: "button-row" },
        ...[a, b].map((clan) =>
          button(
            fmt(S["tactical-button"], { clan: clanName(clan) }),
            (btn) => act({ type: "tactical_test", winner: first(clan) }, btn),
            { pressed: Boolean(test && seat(test) && seat(test).clan === clan), key: `tactical-${clan}` },
          ),
        ),
      ),
    );
  }
  const tokens = summary.pass_tokens;
  body.push(
    el("p", {
      text: tokens
        ? tokens.side
          ? fmt(S["pass-tokens"], { clan: clanName(tokens.side), count: tokens.count })
          : S["pass-tokens-none"]
        : "",
    }),
  );
  for (const clan of [a, b]) {
    const models = table && table.models ? table.models[clan] : null;
    const points = table && table.victory_points ? table.victory_points[clan] : 0;
    const side = el(
      "article",
      { className: "player-card", attrs: { "data-clan": clan } },
      el(
        "h3",
        {},
        el("span", { className: `clan clan-${clan}`, text: clanName(clan) }),
        " ",
        el("span", { text: list(fighting.filter((p) => p.clan === clan).map((p) => armyShort(p.army))) }),
      ),
      el(
        "div",
        { className: "counter" },
        el("span", { className: "counter-label", text: S["models"] }),
        el("span", { className: "counter-value", text: models === null || models === undefined ? "—" : String(models) }),
      ),
    );
    if (can("models")) {
      const input = numberInput(`models-${clan}`, {
        min: "0",
        max: "999",
        "aria-label": fmt(S["models-label"], { clan: clanName(clan) }),
      });
      if (models !== null && models !== undefined) input.value = String(models);
      side.append(
        el(
          "div",
          { className: "honor-other" },
          input,
          button(S["models-set"], (btn) => {
            const count = Number(input.value);
            if (input.value.trim() === "" || !Number.isInteger(count) || count < 0) {
              return say(S["models-invalid"], "error");
            }
            act({ type: "models", army: first(clan), count }, btn, undefined, () => {
              delete input.dataset.typed;
            });
          }, { className: "small-button", key: `models-set-${clan}` }),
        ),
      );
    }
    const vp = el(
      "div",
      { className: "counter" },
      el("span", { className: "counter-label", text: S["victory-points"] }),
      can("victory_points")
        ? button("−1", (btn) => act({ type: "victory_points", army: first(clan), points: -1 }, btn), {
            className: "quick-button",
            key: `vp-minus-${clan}`,
          })
        : null,
      el("span", { className: "counter-value", text: String(points || 0) }),
      can("victory_points")
        ? button("+1", (btn) => act({ type: "victory_points", army: first(clan), points: 1 }, btn), {
            className: "quick-button",
            key: `vp-plus-${clan}`,
          })
        : null,
    );
    side.append(vp);
    body.push(side);
  }
  const results = (table && table.results) || [];
  for (const result of results) {
    body.push(
      el("p", {
        className: "note",
        text: fmt(S["bushido-result"], {
          n: result.game,
          winner: result.winner ? clanName(result.winner) : S["nobody"],
          points: result.sides.map((s) => `${clanName(s)} ${result.victory_points[s]}`).join(" – "),
        }),
      }),
    );
  }
  $("bushido-body").replaceChildren(...body);

  const buttons = [];
  if (can("phase") && at >= 0 && at < BUSHIDO_PHASES.length - 1) {
    const next = BUSHIDO_PHASES[at + 1];
    buttons.push(button(fmt(S["next-phase"], { phase: named("bphase", next) }), (b) => act({ type: "phase", phase: next }, b)));
  }
  if (can("end_turn")) {
    buttons.push(
      button(S["end-turn"], (b) => act({ type: "end_turn" }, b, S["turn-ended"]), {
        className: "big-button is-primary",
      }),
    );
  }
  if (can("declare")) {
    buttons.push(
      button(S["declare-all-scored"], async (b) => {
        if (!(await ask(S["confirm-all-scored"]))) return;
        act({ type: "declare", kind: "all_scored", confirm: true }, b);
      }, { className: "big-button is-quiet" }),
    );
  }
  $("bushido-buttons").replaceChildren(...buttons);
}

// --- Truce (R8) ----------------------------------------------------------------------------------

function renderTruce() {
  const panel = $("truce-panel");
  const table = tableState();
  const show = row.status === "battle" && Boolean(row.summary) && row.summary.stage !== "over";
  panel.hidden = !show;
  if (!show) return;
  const agreed = (table && table.truce) || [];
  $("truce-line").textContent = agreed.length
    ? fmt(S["truce-agreed"], { armies: list(agreed.map(armyShort)) })
    : S["truce-none"];
  const buttons = [];
  if (can("truce")) {
    const armies = judge
      ? (row.summary.players || []).filter((p) => p.status !== "lost").map((p) => p.army)
      : mine
        ? [mine]
        : [];
    for (const army of armies) {
      const yes = agreed.includes(army);
      const label = judge
        ? fmt(yes ? S["truce-withdraw-for"] : S["truce-agree-for"], { army })
        : yes
          ? S["truce-withdraw"]
          : S["truce-agree"];
      buttons.push(
        button(label, (b) => act({ type: "truce", army, agree: !yes }, b), {
          className: yes ? "big-button is-quiet" : "big-button",
          pressed: yes,
        }),
      );
    }
  }
  $("truce-buttons").replaceChildren(...buttons);
}

// --- The outcome, the winner's choice and a judge's correction (R8, R9) -------------------------

function reasonText(reason) {
  return named("why", reason);
}

function renderOutcome() {
  const panel = $("outcome-panel");
  const outcome = row.outcome || (row.summary && row.summary.outcome) || null;
  const stopped = row.status === "stopped" || row.status === "dispersed";
  panel.hidden = !outcome && !stopped;
  if (panel.hidden) return;
  let line = "";
  if (outcome && outcome.kind === "win") {
    line = fmt(S["outcome-win"], { army: armyLabel(outcome.winner), reason: reasonText(outcome.reason) });
  } else if (outcome && outcome.kind === "truce") {
    line = outcome.reason && !["truce", "judge", "tie"].includes(outcome.reason)
      ? fmt(S["outcome-truce-because"], { reason: outcome.reason })
      : fmt(S["outcome-truce"], { reason: reasonText(outcome.reason) });
  } else if (row.status === "stopped") {
    line = S["outcome-stopped"];
  } else if (row.status === "dispersed") {
    line = S["outcome-dispersed"];
  }
  if (outcome && outcome.corrected) line += ` ${S["outcome-corrected"]}`;
  $("outcome-line").textContent = line;
  const losers = (outcome && outcome.losers) || [];
  $("losers-line").textContent = losers.length ? fmt(S["outcome-losers"], { armies: list(losers.map(armyShort)) }) : "";

  const decided = row.status === "decided";
  let note = "";
  if (decided) {
    if (judge) note = fmt(S["decided-judge"], { army: armyShort(outcome.winner) });
    else if (row.you.may_choose_survivors) note = S["decided-you"];
    else note = fmt(S["decided-wait"], { army: armyShort(outcome.winner) });
  }
  $("decided-note").textContent = note;
  $("decided-note").hidden = !note;
  renderSurvivorsForm(outcome);

  const casualties = row.casualties || [];
  const items = casualties.map((c) =>
    el("li", {
      text: fmt(S["casualty"], {
        army: armyLabel(c.army),
        how: named("destroyed", c.destroyed_by),
        turn: c.reform_from,
      }),
    }),
  );
  if (row.status === "ended" && outcome && outcome.survivors) {
    items.unshift(
      el("li", {
        text: outcome.survivors.length
          ? fmt(S["survivors"], { armies: list(outcome.survivors.map(armyShort)) })
          : S["survivors-none"],
      }),
    );
  }
  $("casualty-list").replaceChildren(...items);
  $("control-line").textContent =
    row.status === "ended" && outcome && "control_after" in outcome
      ? fmt(S["control-after"], {
          province: row.province_name,
          clan: outcome.control_after ? clanName(outcome.control_after) : S["nobody"],
        })
      : "";
  renderCorrection(outcome);
}

function choosable(outcome) {
  // The armies the winner decides about: not the winner, not a loser, not of his clan (R7).
  if (!outcome || outcome.kind !== "win") return [];
  const winner = seat(outcome.winner);
  return (row.armies || [])
    .filter((a) => a.code !== outcome.winner && !(outcome.losers || []).includes(a.code))
    .filter((a) => !winner || a.clan !== winner.clan)
    .map((a) => a.code);
}

function checkList(box, armies, checked = new Set()) {
  const before = new Map([...box.querySelectorAll("input")].map((i) => [i.value, i.checked]));
  box.replaceChildren(
    ...armies.map((army) => {
      const input = el("input", { attrs: { type: "checkbox", name: "survivor", value: army } });
      input.checked = before.has(army) ? before.get(army) : checked.has(army);
      return el("label", { className: "check" }, input, ` ${armyLabel(army)}`);
    }),
  );
}

function renderSurvivorsForm(outcome) {
  const form = $("survivors-form");
  const show = row.status === "decided" && row.you.may_choose_survivors;
  form.hidden = !show;
  if (show) checkList($("survivor-choices"), choosable(outcome));
}

$("survivors-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const survivors = [...form.querySelectorAll("input[name=survivor]:checked")].map((i) => i.value);
  const spared = survivors.length ? list(survivors) : S["nobody"];
  if (!(await ask(fmt(S["confirm-survivors"], { armies: spared })))) return;
  send("/result", { survivors }, form.querySelector("button[type=submit]"), S["survivors-stored"]);
});

function renderCorrection(outcome) {
  const box = $("correct-box");
  if (!box) return;
  box.hidden = !row.you.may_correct;
  if (box.hidden) return;
  const armies = (row.armies || []).map((a) => a.code);
  const winner = $("correct-winner");
  const previous = winner.value || (outcome && outcome.winner) || "";
  winner.replaceChildren(...armies.map((a) => el("option", { text: armyLabel(a), attrs: { value: a } })));
  if (armies.includes(previous)) winner.value = previous;
  $("correct-winner-label").hidden = $("correct-kind").value !== "win";
  checkList($("correct-survivors"), armies, new Set((outcome && outcome.survivors) || []));
}

if ($("correct-form")) {
  $("correct-kind").addEventListener("change", () => {
    $("correct-winner-label").hidden = $("correct-kind").value !== "win";
  });
  $("correct-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const kind = $("correct-kind").value;
    const body = {
      kind,
      winner: kind === "win" ? $("correct-winner").value : null,
      survivors: [...$("correct-survivors").querySelectorAll("input:checked")].map((i) => i.value),
      reason: form.elements.namedItem("reason").value.trim(),
    };
    if (!body.reason) return say(S["correct-reason-required"], "error");
    send("/correct", body, form.querySelector("button[type=submit]"), S["corrected"]).then(() => {
      if ($("battle-message").classList.contains("is-ok")) form.elements.namedItem("reason").value = "";
    });
  });
}

// --- A judge's result at the table ---------------------------------------------------------------

function renderJudge() {
  const panel = $("judge-panel");
  if (!panel) return;
  panel.hidden = !can("judge_result");
  if (panel.hidden) return;
  const players = ((row.summary && row.summary.players) || []).filter((p) => p.status !== "lost");
  const select = $("judge-winner");
  const previous = select.value;
  select.replaceChildren(...players.map((p) => el("option", { text: armyLabel(p.army), attrs: { value: p.army } })));
  if (players.some((p) => p.army === previous)) select.value = previous;
  $("judge-winner-label").hidden = $("judge-kind").value !== "win";
}

if ($("judge-result-form")) {
  $("judge-kind").addEventListener("change", () => {
    $("judge-winner-label").hidden = $("judge-kind").value !== "win";
  });
  $("judge-result-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const kind = $("judge-kind").value;
    const action = { type: "judge_result", kind };
    if (kind === "win") action.winner = $("judge-winner").value;
    const submit = event.currentTarget.querySelector("button[type=submit]");
    if (!(await ask(S["confirm-judge-result"]))) return;
    act(action, submit);
  });
}

// --- Start ---------------------------------------------------------------------------------------

function render() {
  // What the user typed and where he was survive the new drawing (a live update may come
  // while he types a number).
  const typed = new Map();
  for (const input of root.querySelectorAll("input[data-key][data-typed]")) {
    typed.set(input.dataset.key, input.value);
  }
  const active = document.activeElement;
  const focused = active && root.contains(active) && active.dataset ? active.dataset.key : null;
  renderStatus();
  renderProposals();
  renderMeeting();
  renderSeats();
  renderOutcome();
  renderL5R();
  renderBushido();
  renderTruce();
  renderSetup();
  renderJudge();
  for (const input of root.querySelectorAll("input[data-key]")) {
    if (typed.has(input.dataset.key)) {
      input.value = typed.get(input.dataset.key);
      input.dataset.typed = "1";
    }
  }
  if (focused && !(document.activeElement && root.contains(document.activeElement))) refocus(focused);
}

render();
startPlayerPage({
  tournamentId: config.tournamentId,
  svg: null,
  S,
  urgent: false,
  onState() {
    refresh();
  },
});
