// Player chat over /ws/conversations/<id>/ (protocol: docs/websocket.md).
(function () {
  "use strict";
  const root = document.getElementById("play");
  if (!root) return;
  const conversationId = root.dataset.conversation;
  const characterName = root.dataset.character;
  const transcript = document.getElementById("transcript");
  const form = document.getElementById("composer");
  const input = document.getElementById("input");
  const cancelButton = document.getElementById("cancel");
  const errorBox = document.getElementById("play-error");
  const bubbles = new Map(); // assistant message id -> text element
  let socket = null;
  let retry = 0;

  function bubble(role, who, text, id) {
    const li = document.createElement("li");
    li.className = "msg " + role;
    if (id) li.dataset.id = id;
    const b = document.createElement("b");
    b.textContent = who;
    const div = document.createElement("div");
    div.className = "text";
    div.textContent = text;
    li.append(b, div);
    transcript.append(li);
    li.scrollIntoView({ block: "end" });
    return div;
  }

  function showError(message) {
    errorBox.textContent = message;
    errorBox.hidden = !message;
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(scheme + "://" + location.host + "/ws/conversations/" + conversationId + "/");
    socket.onopen = function () { retry = 0; root.dataset.connected = "1"; };
    socket.onclose = function () {
      root.dataset.connected = "";
      retry = Math.min(retry + 1, 5);
      setTimeout(connect, 500 * retry);
    };
    socket.onmessage = function (event) {
      const msg = JSON.parse(event.data);
      if (msg.type === "turn.started") {
        showError("");
        if (!document.querySelector('[data-id="' + msg.user_message_id + '"]') && msg.content_echo) {
          bubble("user", "You", msg.content_echo, msg.user_message_id);
        }
        bubbles.set(msg.assistant_message_id, bubble("assistant streaming", characterName, "", msg.assistant_message_id));
        cancelButton.hidden = false;
      } else if (msg.type === "delta") {
        const target = [...bubbles.values()].pop();
        if (target) target.textContent += msg.text;
      } else if (msg.type === "turn.completed") {
        const el = bubbles.get(msg.assistant_message_id);
        if (el) el.parentElement.classList.remove("streaming");
        cancelButton.hidden = true;
      } else if (msg.type === "error") {
        showError(msg.code + ": " + msg.message);
        const el = msg.assistant_message_id && bubbles.get(msg.assistant_message_id);
        if (el) el.parentElement.classList.add(msg.code === "turn_cancelled" ? "cancelled" : "failed");
        cancelButton.hidden = true;
      }
    };
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    const content = input.value.trim();
    if (!content || !socket || socket.readyState !== WebSocket.OPEN) return;
    const clientId = (crypto.randomUUID && crypto.randomUUID()) || String(Date.now()) + Math.random();
    bubble("user", "You", content);
    socket.send(JSON.stringify({ type: "user_message", client_message_id: clientId, content: content }));
    input.value = "";
  });
  cancelButton.addEventListener("click", function () {
    if (socket) socket.send(JSON.stringify({ type: "cancel" }));
  });
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); form.requestSubmit(); }
  });
  connect();
})();
