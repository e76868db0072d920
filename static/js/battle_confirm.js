// The table page's "are you sure?" (R8): a <dialog> in the page, not window.confirm, so the
// question looks like the site, reads in the page's language and works in every browser.

/** Ask ``text`` in the page's confirm dialog; resolves true when the player says yes. */
export function ask(text) {
  const dialog = document.getElementById("confirm-dialog");
  if (!dialog || typeof dialog.showModal !== "function") return Promise.resolve(false);
  document.getElementById("confirm-text").textContent = text;
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
    dialog.showModal();
    document.getElementById("confirm-no").focus();
  });
}
