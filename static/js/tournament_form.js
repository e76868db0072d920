// The tournament form (new tournament, settings until the start): the line-up R1 gives is
// redrawn as the judge changes the count or its choices, from GET /api/lineup, in the words
// the page drew it with (#tournament-form-config, translated on the server). Without this
// script the "Preview line-up" button asks the server for the same table.
//
// It also shows only the fields that matter: the number of turns or the end time as the game
// ends, and the Bushido turns when battles are fought with Bushido.

const config = JSON.parse(document.getElementById("tournament-form-config").textContent);
const form = document.getElementById("tournament-form");
const $ = (id) => document.getElementById(id);
const DELAY_MS = 250;

let timer = null;
let asked = 0;

function fill(text, params) {
  return String(text).replace(/%\((\w+)\)s/g, (all, key) => (key in params ? String(params[key]) : all));
}

function checked(name) {
  return form.querySelector(`input[name="${name}"]:checked`)?.value || "";
}

/** "2 Generals, 1 Daimyo": each role with its count, in the order R1 lists them. */
function rolesText(roles) {
  const counts = new Map();
  for (const role of roles) counts.set(role, (counts.get(role) || 0) + 1);
  return [...counts].map(([role, n]) => config.roleCounts[role]?.[String(n)] || `${n} ${role}`).join(", ");
}

function showProblem(text) {
  const problem = $("lineup-problem");
  problem.textContent = text;
  problem.hidden = !text;
  $("lineup-table-wrap").hidden = Boolean(text);
  if (text) $("lineup-notes").replaceChildren();
}

function paragraph(text) {
  const p = document.createElement("p");
  p.textContent = text;
  return p;
}

function draw(lineup) {
  const sizes = Object.values(lineup.clans).map((roles) => roles.length);
  const full = Math.max(...sizes);
  const fullRoles = Object.values(lineup.clans).find((roles) => roles.length === full) || [];
  const smaller = Object.values(lineup.clans).filter((roles) => roles.length < full);
  const rows = config.clans.map((clan) => {
    const roles = lineup.clans[clan.id];
    const tr = document.createElement("tr");
    tr.dataset.clan = clan.id;
    const th = document.createElement("th");
    th.scope = "row";
    const swatch = document.createElement("span");
    swatch.className = `swatch swatch-${clan.id}`;
    swatch.setAttribute("aria-hidden", "true");
    const name = document.createElement("span");
    name.className = "lineup-clan";
    name.textContent = clan.name;
    th.append(swatch, name);
    const rolesCell = document.createElement("td");
    rolesCell.textContent = roles ? rolesText(roles) : "—";
    const note = document.createElement("td");
    note.className = "small";
    if (!roles) {
      tr.className = "is-left-out";
      note.textContent = config.leftOut;
    } else if (roles.length < full) {
      tr.className = "is-smaller";
      note.textContent = config.smaller;
    }
    tr.append(th, rolesCell, note);
    return tr;
  });
  $("lineup-body").replaceChildren(...rows);
  const notes = [paragraph(fill(config.fullText, { roles: rolesText(fullRoles) }))];
  if (smaller.length) {
    const text = config.smallerText[String(smaller.length)];
    if (text) notes.push(paragraph(fill(text, { roles: rolesText(smaller[0]) })));
  }
  const leftOut = config.clans.filter((clan) => lineup.excluded_clans.includes(clan.id));
  if (leftOut.length) {
    notes.push(paragraph(fill(config.leftOutText, { clans: leftOut.map((c) => c.name).join(", ") })));
  }
  $("lineup-notes").replaceChildren(...notes);
  showProblem("");
}

async function refresh() {
  const count = $("id_player_count").value.trim();
  if (!/^\d+$/.test(count) || Number(count) < 1) {
    showProblem(config.noCount);
    return;
  }
  const query = new URLSearchParams({
    players: count,
    shortfall: checked("shortfall") || "smaller_clans",
    variant: checked("three_variant") || "generals_and_daimyo",
  });
  const mine = ++asked;
  let response;
  let body;
  try {
    response = await fetch(`${config.api}?${query}`, { headers: { Accept: "application/json" } });
    body = await response.json();
  } catch {
    if (mine === asked) showProblem(config.failed);
    return;
  }
  if (mine !== asked) return; // an answer to an older question
  if (response.ok) draw(body);
  else if (body?.code === "lineup") showProblem(fill(config.unseatableText, { problem: body.detail }));
  else showProblem(body?.detail || config.failed);
}

function later() {
  clearTimeout(timer);
  timer = setTimeout(refresh, DELAY_MS);
}

function showFields() {
  const endsBy = checked("ends_by");
  const turns = $("field-turns_total");
  const endsAt = $("field-ends_at");
  if (turns) turns.hidden = endsBy === "time";
  if (endsAt) endsAt.hidden = endsBy === "turns";
  const bushido = $("field-bushido_turns");
  if (bushido) bushido.hidden = checked("battle_game") !== "bushido";
}

$("id_player_count").addEventListener("input", later);
for (const name of ["shortfall", "three_variant"]) {
  for (const input of form.querySelectorAll(`input[name="${name}"]`)) input.addEventListener("change", refresh);
}
for (const name of ["ends_by", "battle_game"]) {
  for (const input of form.querySelectorAll(`input[name="${name}"]`)) input.addEventListener("change", showFields);
}
// The table follows the form as it is typed: the server's button is for pages without scripts.
$("lineup-preview-button").hidden = true;
showFields();
// A judge (or a slow phone) may have typed before this script ran: the table the server drew
// is then for the old count, and no "input" event will come again to redraw it.
if ($("id_player_count").value !== $("id_player_count").defaultValue) refresh();
