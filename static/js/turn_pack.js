// The turn pack (referees/templates/referees/turn_pack.html): its Print button, and printing
// at once when the console's "Print the turn pack" opened it (?print=1): one click.
const button = document.getElementById("print-pack");
if (button) button.addEventListener("click", () => window.print());
if (new URLSearchParams(location.search).has("print")) {
  window.addEventListener("load", () => window.print(), { once: true });
}
