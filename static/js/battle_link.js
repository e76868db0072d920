/**
 * battle_link.js: "Your battle table" on a General's page (battles/_general_battle.html).
 *
 *   renderBattleLink(state)   shows the panel while state.battle names an open table of his
 *                             army (meeting, peace, battle, decided), with a link to it
 *
 * state.battle is {id, status, province} from GET /api/tournaments/{id}/state.
 */

function provinceName(id) {
  const node = document.querySelector(`path.province[data-province="${CSS.escape(id)}"]`);
  return (node && node.dataset.name) || id;
}

export function renderBattleLink(state) {
  const panel = document.getElementById("battle-link-panel");
  if (!panel) return;
  const battle = state && state.battle;
  panel.hidden = !battle;
  if (!battle) return;
  const text = panel.dataset[battle.status] || panel.dataset.battle;
  document.getElementById("battle-link-text").textContent = text.replace(
    "{province}",
    provinceName(battle.province),
  );
  document.getElementById("battle-link-rule").hidden = !["battle", "decided"].includes(battle.status);
  document.getElementById("battle-link").href = panel.dataset.url.replace(/\/0\/$/, `/${battle.id}/`);
}

let clanVersion = null;
let clanFetching = false;
let clanPending = null;

/**
 * The clan page: the open tables of the clan's armies that this Daimyo or Karo may watch
 * (battles/_clan_battles.html), fetched again when the tournament's version changes.
 */
export async function renderClanBattles(state) {
  const panel = document.getElementById("clan-battles-panel");
  if (!panel) return;
  if (clanFetching) {
    clanPending = state;
    return;
  }
  const version = state && state.tournament ? state.tournament.version : null;
  if (version !== null && version === clanVersion) return;
  clanFetching = true;
  try {
    const response = await fetch(panel.dataset.api, {
      credentials: "same-origin",
      cache: "no-store",
      headers: { Accept: "application/json" },
    });
    if (!response.ok) return; // a Daimyo whose clan has a Karo watches no battle (R1.1)
    const rows = (await response.json()).filter((row) => row.status in panel.dataset);
    clanVersion = version;
    panel.hidden = rows.length === 0;
    document.getElementById("clan-battles").replaceChildren(
      ...rows.map((row) => {
        const item = document.createElement("li");
        const link = document.createElement("a");
        link.href = panel.dataset.url.replace(/\/0\/$/, `/${row.id}/`);
        link.textContent = `${row.province_name}: ${panel.dataset[row.status]}`;
        item.append(link, ` · ${row.armies.map((army) => army.code).join(", ")}`);
        return item;
      }),
    );
  } catch (error) {
    console.warn("battles: could not fetch the clan's tables", error);
  } finally {
    clanFetching = false;
  }
  if (clanPending) {
    const next = clanPending;
    clanPending = null;
    renderClanBattles(next);
  }
}
