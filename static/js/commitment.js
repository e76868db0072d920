// R11: every page that shows the open turn shows the commitment (SHA-256) of the secret seed
// its draws will be made from, so a player can check the revealed seed afterwards.

/** Fill every [data-draw-commitment] line from the state, hidden when no turn is open. */
export function showCommitment(state) {
  const value = (state && state.tournament && state.tournament.commitment) || "";
  for (const line of document.querySelectorAll("[data-draw-commitment]")) {
    line.hidden = !value;
    const code = line.querySelector("[data-draw-commitment-value]");
    if (code && code.textContent !== value) code.textContent = value;
  }
}
