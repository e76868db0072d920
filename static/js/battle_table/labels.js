/**
 * labels.js: the battle table's words for codes, armies and numbers, from the page's texts.
 */

import { fmt } from "../players.js";
import { S, config, mine, seat } from "./state.js";

/** The page's text for a code: S["<prefix>-<value>"] (underscores as hyphens), else the code. */
export function named(prefix, value) {
  if (value === null || value === undefined) return "";
  return S[`${prefix}-${String(value).replace(/_/g, "-")}`] || String(value);
}

export function clanName(clan) {
  return config.clans[clan] || clan || "";
}

/** "crab-1 (Crab, Name)" as far as it is known. */
export function armyLabel(army) {
  const found = seat(army);
  const clan = found ? found.clan : (army || "").replace(/-\d+$/, "");
  const parts = [clanName(clan)];
  if (found && found.general) parts.push(found.general);
  return `${army} (${parts.join(", ")})`;
}

/** "scorpion-2 · Bayushi Kachiko": a choice in a drop-down, short enough for a phone (the
 * code already names the clan). */
export function armyChoice(army) {
  const found = seat(army);
  return found && found.general ? `${army} · ${found.general}` : army;
}

export function armyShort(army) {
  if (army === mine) return fmt(S["army-you"], { army });
  return army;
}

export function list(items) {
  return items.join(", ");
}

export function signed(n) {
  if (n > 0) return `+${n}`;
  if (n < 0) return `−${Math.abs(n)}`;
  return "0";
}
