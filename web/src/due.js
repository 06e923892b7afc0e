// The banner of what is due, on every page: every five seconds it asks /api/annonces and
// shows the reminders due that were neither heard nor acknowledged, and the timers ringing,
// with textContent only (the texts are the user's words, never markup). « Vu » records that
// the reminder was seen; « C'est bon » stops a timer.
(function () {
  "use strict";
  const banner = document.getElementById("annonces");
  if (!banner) return;

  function post(url) {
    return fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
  }

  function item(text, label, url) {
    const li = document.createElement("li");
    const span = document.createElement("span");
    span.className = "text";
    span.textContent = text;
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    b.addEventListener("click", function () { post(url).then(refresh); });
    li.append(span, b);
    return li;
  }

  function refresh() {
    return fetch("/api/annonces", { headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data) return;
        const items = [];
        data.rappels.forEach(function (r) {
          items.push(item("Rappel : " + r.texte + " (prévu le " + r.prevu + ")", "Vu", "/api/rappels/" + r.id + "/vu"));
        });
        data.minuteurs.forEach(function (m) {
          items.push(item(m.libelle + " sonne", "C'est bon", "/api/minuteurs/" + m.id + "/acquitter"));
        });
        const list = document.createElement("ul");
        list.append.apply(list, items);
        banner.replaceChildren(list);
        banner.hidden = items.length === 0;
      })
      .catch(function () {});
  }

  refresh();
  setInterval(refresh, 5000);
})();
