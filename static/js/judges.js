// The judges page: "Copy" buttons for a sign-in link or an API key shown once.
// Without a secure context (a venue served over plain http) the clipboard API is missing:
// the text is then selected, for the judge to copy himself.

for (const button of document.querySelectorAll("button[data-copy]")) {
  button.addEventListener("click", async () => {
    const field = document.getElementById(button.dataset.copy);
    if (!field) return;
    field.focus();
    field.select();
    if (!navigator.clipboard) return;
    try {
      await navigator.clipboard.writeText(field.value);
      const label = button.textContent;
      button.textContent = button.dataset.copied || label;
      setTimeout(() => { button.textContent = label; }, 2000);
    } catch (error) {
      console.warn("judges: could not copy", error);
    }
  });
}
