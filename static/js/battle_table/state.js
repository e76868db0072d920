/**
 * state.js: what the battle table's page was given (#battle-config, #battle-initial, the
 * texts) and the table as last heard from the API, with the lookups every part draws from.
 *
 * `row` is the table as the API shows it to this viewer (R1.1). It is a live binding:
 * setRow() replaces it, and every module that imports `row` sees the new one.
 */

import { $ } from "../dom.js";
import { pageStrings } from "../players.js";

export const config = JSON.parse($("battle-config").textContent);
export const S = { ...pageStrings("page-strings"), ...pageStrings("battle-strings") };
export const root = $("battle-page");
export const base = `/tournaments/${config.tournamentId}/battles/${config.battleId}`;
export const judge = config.viewer.kind === "judge";
export const mine = config.viewer.army || null;

export let row = JSON.parse($("battle-initial").textContent);

export function setRow(fresh) {
  row = fresh;
}

export function seat(army) {
  return (row.armies || []).find((a) => a.code === army) || null;
}

export function can(kind) {
  return (row.actions || []).includes(kind);
}

export function tableState() {
  return row.table || null;
}

export function tablePlayer(army) {
  const table = tableState();
  return table ? (table.players || []).find((p) => p.army === army) || null : null;
}

export function summaryPlayer(army) {
  const summary = row.summary;
  return summary ? (summary.players || []).find((p) => p.army === army) || null : null;
}
