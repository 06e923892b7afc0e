// The timers page, live: every second it asks /api/minuteurs and redraws the list with
// textContent only (names are the user's words, never markup). A ringing timer or alarm
// gets a « C'est bon » button that acknowledges it, one that rang unanswered a « Vu » one.
(function () {
  "use strict";
  const list = document.getElementById("timers-list");
  const section = document.getElementById("timers");

  function duration(secs) {
    const h = Math.floor(secs / 3600), m = Math.floor((secs % 3600) / 60), s = secs % 60;
    const parts = [];
    if (h > 0) parts.push(h + " h");
    if (m > 0) parts.push((h > 0 && m < 10 ? "0" : "") + m + " min");
    if (s > 0 || parts.length === 0) parts.push(s + " s");
    return parts.join(" ");
  }

  function row(t) {
    const li = document.createElement("li");
    li.id = "minuteur-" + t.id;
    li.className = t.etat;
    const name = document.createElement("span");
    name.className = "text";
    name.textContent = t.libelle;
    const state = document.createElement("span");
    state.className = "tag state";
    state.textContent = t.etat_libelle;
    li.append(name, state);
    if (t.etat === "sonne" || t.sans_reponse) {
      // Ringing, or rung with no answer: it stays until acknowledged.
      const b = document.createElement("button");
      b.type = "button";
      b.className = "ack";
      b.textContent = t.sans_reponse ? "Vu" : "C'est bon";
      b.addEventListener("click", function () {
        fetch("/api/minuteurs/" + t.id + "/acquitter", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: "{}",
        }).then(refresh);
      });
      li.append(b);
    } else if (t.restant_secondes > 0) {
      // A passed deadline shows no time left and no « sonne à ».
      const left = document.createElement("span");
      left.className = "remaining";
      left.textContent = duration(t.restant_secondes) + (t.sonne_a ? " (sonne à " + t.sonne_a + ")" : "");
      li.append(left);
    }
    return li;
  }

  function refresh() {
    return fetch("/api/minuteurs", { headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        list.replaceChildren.apply(list, data.actifs.map(row));
        const empty = document.getElementById("timers-empty");
        if (data.actifs.length === 0 && !empty) {
          const p = document.createElement("p");
          p.className = "empty";
          p.id = "timers-empty";
          p.textContent = "Aucun minuteur en cours.";
          section.prepend(p);
        } else if (data.actifs.length > 0 && empty) {
          empty.remove();
        }
      })
      .catch(function () {});
  }

  refresh();
  setInterval(refresh, 1000);
})();
