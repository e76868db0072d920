/**
 * battles_console.js: "Battle tables" on the judge console (battles/_console_tables.html).
 *
 * Every table of the tournament, as GET /api/tournaments/{id}/battles shows it to a judge:
 * status, province, armies and clans, the Generals' words, whose turn and which phase, family
 * honor and provinces, a freeze or production turns (R8), the outcome and the Small Farms to
 * hand out (R7), with a link to each table's page. Fetched again whenever the console's live
 * state changes (judge.js sends "sl5r:state" on the document); a refusal is shown as it came.
 */

import { el } from "./dom.js";

const panel = document.getElementById("battle-tables-panel");
const list = document.getElementById("battle-tables");
const message = document.getElementById("battle-tables-message");
const showClosed = document.getElementById("battle-tables-closed");
const T = panel.dataset;
const OPEN = new Set(["meeting", "peace", "battle", "decided"]);

let rows = [];
let version = null;
let fetching = false;
let again = false;

function clanNames() {
  try {
    const config = JSON.parse(document.getElementById("judge-config").textContent);
    return Object.fromEntries((config.clans || []).map((c) => [c.id, c.name]));
  } catch {
    return {};
  }
}
const clans = clanNames();

function fill(text, values) {
  return String(text || "").replace(/\{(\w+)\}/g, (all, key) => (key in values ? String(values[key]) : all));
}

function key(prefix, value) {
  // data-why-last-standing is dataset.whyLastStanding
  const name = `${prefix}-${String(value || "").replace(/_/g, "-")}`.replace(/-(\w)/g, (_, c) => c.toUpperCase());
  return T[name];
}

function clanName(clan) {
  return clans[clan] || clan;
}

function armyText(army) {
  const parts = [clanName(army.clan)];
  if (army.general) parts.push(army.general);
  return `${army.code} (${parts.join(", ")})`;
}

function reason(code) {
  return key("why", code) || code || "";
}

function gameLines(row) {
  const s = row.summary;
  const lines = [];
  if (!s) return lines;
  if (row.game === "bushido") {
    if (s.phase) {
      lines.push(
        fill(T.bushido, {
          n: s.game_number,
          a: clanName(s.sides[0]),
          b: clanName(s.sides[1]),
          turn: s.turn,
          turns: s.turns,
          phase: key("phase", s.phase) || s.phase,
        }),
      );
    }
    const byClan = new Map();
    for (const p of s.players || []) if (!byClan.has(p.clan) && p.status !== "lost") byClan.set(p.clan, p);
    for (const p of byClan.values()) lines.push(fill(T.vp, { army: clanName(p.clan), points: p.victory_points }));
    return lines;
  }
  if (s.stage === "setup") lines.push(T.setup);
  else if (s.stage === "production") lines.push(fill(T.production, { army: s.current }));
  else if (s.stage === "playing") {
    lines.push(fill(T.turn, { army: s.current, phase: key("phase", s.phase) || s.phase, round: s.round }));
    if (s.frozen) lines.push(T.frozen);
  }
  for (const p of s.players || []) {
    lines.push(
      p.status === "lost"
        ? fill(T.playerLost, { army: p.army })
        : fill(T.player, { army: p.army, honor: p.honor === null ? "—" : p.honor, provinces: p.provinces }),
    );
  }
  return lines;
}

function outcomeLines(row) {
  const outcome = row.outcome;
  if (!outcome) return [];
  const lines = [];
  const corrected = outcome.corrected ? ` (${T.corrected})` : "";
  if (outcome.kind === "win") lines.push(fill(T.win, { army: outcome.winner, reason: reason(outcome.reason) }) + corrected);
  else lines.push(fill(T.truce, { reason: reason(outcome.reason) }) + corrected);
  if ((outcome.losers || []).length) lines.push(fill(T.losers, { armies: outcome.losers.join(", ") }));
  return lines;
}

function farmsLine(row) {
  if (!row.setup) return "";
  const given = row.setup.participants.filter((p) => p.small_farms > 0);
  if (!given.length) return T.farmsNone;
  return fill(T.farms, {
    list: given.map((p) => `${p.army} ×${p.small_farms}`).join(", "),
    total: row.small_farms_total ?? given.reduce((n, p) => n + p.small_farms, 0),
  });
}

function draw() {
  const shown = rows.filter((row) => showClosed.checked || OPEN.has(row.status));
  if (!shown.length) {
    // Tables that have all ended are not "none yet": say how many there were.
    const text = rows.length ? fill(T.noneOpen, { count: rows.length }) : T.none;
    list.replaceChildren(el("li", { className: "muted", text }));
    return;
  }
  list.replaceChildren(
    ...shown.map((row) => {
      const gathering = row.status === "meeting" || row.status === "peace";
      const armies = el(
        "ul",
        {},
        ...row.armies.map((army) => {
          let text = armyText(army);
          if (army.reinforcement) text += ` · ${T.reinforcement}`;
          if (gathering || army.vote) text += ` · ${key("vote", army.vote || "none")}`;
          return el("li", { text });
        }),
      );
      const lines = [...gameLines(row), ...outcomeLines(row)];
      const farms = farmsLine(row);
      if (farms) lines.push(farms);
      const link = el("a", {
        text: T.open,
        attrs: { href: T.tableUrl.replace(/\/0\/$/, `/${row.id}/`), "data-battle": String(row.id) },
      });
      return el(
        "li",
        {
          className: `battle-table-row${OPEN.has(row.status) ? "" : " is-closed"}`,
          attrs: { "data-status": row.status, "data-battle": String(row.id) },
        },
        el(
          "h3",
          {},
          el("span", { text: row.province_name }),
          el("span", { className: "badge-status", text: key("status", row.status) || row.status }),
          el("span", { className: "muted", text: `${key("game", row.game) || row.game} · ${fill(T.since, { turn: row.opened_turn })}` }),
        ),
        armies,
        ...lines.map((line) => el("p", { text: line })),
        el("p", {}, link),
      );
    }),
  );
}

async function load() {
  if (fetching) {
    again = true;
    return;
  }
  fetching = true;
  try {
    do {
      again = false;
      const response = await fetch(T.api, {
        credentials: "same-origin",
        cache: "no-store",
        headers: { Accept: "application/json" },
      });
      let data = null;
      try {
        data = await response.json();
      } catch {
        data = null;
      }
      if (!response.ok) throw new Error((data && data.detail) || `HTTP ${response.status}`);
      rows = data;
      message.hidden = true;
      draw();
    } while (again);
  } catch (error) {
    message.textContent = String(error.message || error);
    message.hidden = false;
  } finally {
    fetching = false;
  }
}

document.addEventListener("sl5r:state", (event) => {
  const fresh = event.detail && event.detail.tournament ? event.detail.tournament.version : null;
  if (fresh !== null && fresh === version) return;
  version = fresh;
  load();
});
showClosed.addEventListener("change", draw);
load();
