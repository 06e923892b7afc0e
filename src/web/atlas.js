// The "brouillon de réponse" buttons of /atlas: ask for a draft, show it as text (never HTML).
"use strict";
document.querySelectorAll("button[data-draft]").forEach((button) => {
  button.addEventListener("click", async () => {
    const id = button.dataset.draft;
    const out = document.getElementById("draft-" + id);
    button.disabled = true;
    out.textContent = "Rédaction du brouillon…";
    try {
      const response = await fetch("/api/atlas/" + encodeURIComponent(id) + "/draft", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: "{}",
      });
      const data = await response.json();
      out.textContent = response.ok
        ? "Brouillon (" + data.provider + " / " + data.model + ") — Atlas ne l'enverra pas :\n\n" + data.draft
        : data.error;
    } catch (e) {
      out.textContent = "Le brouillon n'a pas pu être demandé.";
    } finally {
      button.disabled = false;
    }
  });
});
