// The history of played turns: the keys ← and → step to the previous and next turn, and the
// map shows the board after the turn with its orders drawn as arrows (map.js).
//
// The page itself is drawn by the server (tables, names, times); this only adds the keys
// and the map overlay, so it reads the same without JavaScript.

const config = JSON.parse(document.getElementById("history-config").textContent);

document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
  const target = event.target;
  if (target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
  const link = event.key === "ArrowLeft" ? document.getElementById("previous-turn")
    : event.key === "ArrowRight" ? document.getElementById("next-turn") : null;
  if (link) {
    event.preventDefault();
    window.location.assign(link.href);
  }
});

const svg = document.querySelector("#history-map svg");
if (svg && config.state) {
  import("./map.js")
    .then(({ renderOverlay }) => drawTurn(renderOverlay, svg, config.state))
    .catch((error) => console.warn("history: no map overlay", error));
}

/**
 * The board after the turn, with the turn's orders as arrows from where each army stood
 * before it. map.js starts an arrow at the army's province, so the arrows are drawn from a
 * "before" board first and kept while the board after the turn is drawn.
 */
function drawTurn(renderOverlay, map, after) {
  const options = { clanColours: config.clanColours, strings: config.strings };
  const before = {
    ...after,
    armies: after.orders.filter((o) => o.from).map((o) => ({ id: o.army, clan: o.clan, province: o.from })),
    meetings: [],
  };
  renderOverlay(map, before, options);
  const arrows = [...(map.querySelector(".map-orders")?.childNodes || [])].map((node) => node.cloneNode(true));
  renderOverlay(map, after, { ...options, showOrders: false });
  map.querySelector(".map-orders")?.append(...arrows);
}
