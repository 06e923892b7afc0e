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

// The decisions of /atlas (approve or refuse a held launch; retry a parked message): the
// server's French sentence is shown as text; the buttons of that row are then disabled.
document.querySelectorAll("button[data-decide]").forEach((button) => {
  button.addEventListener("click", async () => {
    const id = button.dataset.id;
    const out = document.getElementById("decision-" + id);
    const row = document.querySelectorAll('button[data-decide][data-id="' + id + '"]');
    row.forEach((b) => (b.disabled = true));
    out.textContent = "…";
    try {
      const response = await fetch(
        "/api/atlas/" + encodeURIComponent(id) + "/" + encodeURIComponent(button.dataset.decide),
        { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" },
      );
      const data = await response.json();
      out.textContent = response.ok ? data.message : data.error;
      if (!response.ok) row.forEach((b) => (b.disabled = false));
    } catch (e) {
      out.textContent = "La demande n'a pas pu être envoyée ; rien n'a changé.";
      row.forEach((b) => (b.disabled = false));
    }
  });
});
