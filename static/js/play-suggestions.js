// Auto-reply suggestions (docs/websocket.md: the `auto_reply` frame, answered by
// `auto_reply.options`): a button asks for three things the player might say after the
// latest reply; clicking one sends it as the player's own message.

import * as T from "./play-transcript.js";

const LABEL = "Suggest replies";

export function initSuggestions(page) {
  const row = document.getElementById("suggestions");
  if (!row) return { show() {}, failed() {}, clear() {}, update() {} };
  const button = row.querySelector("#suggest");
  const options = row.querySelector(".options");
  let pending = null; // the reply whose suggestions were asked for

  function latestReply() {
    const li = T.lastReply();
    return li && li.dataset.id && !li.classList.contains("streaming") ? li.dataset.id : null;
  }

  function clear() {
    options.replaceChildren();
  }

  function settle() {
    pending = null;
    button.textContent = LABEL;
    update();
  }

  function update() {
    button.disabled = pending !== null || !page.ready() || latestReply() === null;
  }

  button.addEventListener("click", function () {
    const id = latestReply();
    if (!id || !page.ready()) return;
    clear();
    const language = document.documentElement.lang || navigator.language || "en";
    if (page.send({ type: "auto_reply", assistant_message_id: id, language: language })) {
      pending = id;
      button.textContent = "Thinking…";
      update();
    }
  });

  function show(msg) {
    if (msg.assistant_message_id !== pending) return;
    settle();
    for (const text of msg.options) {
      const option = document.createElement("button");
      option.type = "button";
      option.className = "option";
      option.textContent = text;
      option.addEventListener("click", function () {
        if (!page.ready()) return;
        clear();
        page.sendMessage(text);
      });
      options.append(option);
    }
  }

  function failed(msg) {
    if (msg.assistant_message_id && msg.assistant_message_id === pending) settle();
  }

  return { show, failed, clear, update };
}
