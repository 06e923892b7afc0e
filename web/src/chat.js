// Chat page: sends the message, reads the NDJSON stream, shows what Arthur is doing
// (status lines), then the final answer with verified parts marked. No model draft is
// ever shown: model text appears only in the final answer. Text is only ever inserted
// with textContent, never as HTML.
(function () {
  "use strict";
  const box = document.getElementById("conversation");
  const form = document.getElementById("composer");
  const input = document.getElementById("message");
  const send = document.getElementById("send");
  let conversation = localStorage.getItem("arthur.conversation") || null;

  function bubble(kind, text) {
    const div = document.createElement("div");
    div.className = "bubble " + kind;
    if (text !== undefined) div.textContent = text;
    box.appendChild(div);
    div.scrollIntoView({ block: "end" });
    return div;
  }

  // Reports name the page where to check ("(/rappels)"): make those names links.
  const PAGES = ["/notes", "/rappels", "/preferences", "/souvenirs", "/projets", "/sessions", "/journal", "/atlas"];
  function appendWithPageLinks(parent, text) {
    const pattern = /\((\/[a-z]+)\)/g;
    let last = 0;
    let match;
    while ((match = pattern.exec(text)) !== null) {
      if (!PAGES.includes(match[1])) continue;
      parent.appendChild(document.createTextNode(text.slice(last, match.index + 1)));
      const link = document.createElement("a");
      link.href = match[1];
      link.textContent = match[1];
      parent.appendChild(link);
      last = match.index + 1 + match[1].length;
    }
    parent.appendChild(document.createTextNode(text.slice(last)));
  }

  async function ask(message) {
    bubble("user", message);
    const status = bubble("status", "…");
    send.disabled = true;
    try {
      const response = await fetch("/api/chat", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ message: message, conversation: conversation }),
      });
      if (!response.ok || !response.body) {
        let text = "Erreur " + response.status;
        try { text = (await response.json()).message || text; } catch (e) { /* not JSON */ }
        bubble("arthur", text);
        return;
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let newline;
        while ((newline = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, newline).trim();
          buffer = buffer.slice(newline + 1);
          if (!line) continue;
          const event = JSON.parse(line);
          if (event.type === "status") {
            status.textContent = event.text + "…";
          } else if (event.type === "final") {
            conversation = event.conversation;
            localStorage.setItem("arthur.conversation", conversation);
            const answer = bubble("arthur");
            answer.dataset.final = "true";
            for (const part of event.parts) {
              const span = document.createElement("span");
              span.className = "part " + part.source;
              if (part.source === "code" && event.incident) span.classList.add("incident");
              appendWithPageLinks(span, part.text);
              answer.appendChild(span);
            }
          } else if (event.type === "error") {
            bubble("arthur", event.message);
          }
        }
      }
    } catch (e) {
      bubble("arthur", "La connexion à Arthur a été perdue. Vérifie le Journal avant de répéter une demande.");
    } finally {
      status.remove();
      send.disabled = false;
      input.focus();
    }
  }

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    const message = input.value.trim();
    if (!message) return;
    input.value = "";
    ask(message);
  });
  input.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
  });
})();
