// The play page's transcript: one <li class="msg"> per message, rendered by the server
// (templates/roleplay/play/_message.html) or cloned here from the same markup. A stored
// message keeps what its controls need in data attributes: data-id, data-role, data-status,
// data-alternatives (stored alternatives; 0 means the text is its only version),
// data-selected (which one shows) and data-edited. Everything that changes a message goes
// through applyState, whether the change came from an event or from re-reading the page.

const transcript = document.getElementById("transcript");
const messageTemplate = document.getElementById("message-template");
const root = document.getElementById("play");
const names = { assistant: root.dataset.character, user: root.dataset.player };

export const MAX_ALTERNATIVES = 100; // memory.alternatives.MAX_ALTERNATIVES

export function byId(id) {
  return id ? transcript.querySelector('li.msg[data-id="' + CSS.escape(id) + '"]') : null;
}

/** Stored messages in order (the opening line and unsent bubbles have no id). */
export function storedMessages() {
  return [...transcript.querySelectorAll("li.msg[data-id]")];
}

export function textOf(li) {
  return li.querySelector(".text").textContent;
}

export function setText(li, text) {
  li.querySelector(".text").textContent = text;
}

export function appendText(li, text) {
  li.querySelector(".text").append(text);
}

/** A message's state as the server rendered it (or as applyState last set it). */
export function stateOf(li) {
  return {
    role: li.dataset.role,
    content: textOf(li),
    status: li.dataset.status || "complete",
    alternatives: Number(li.dataset.alternatives || 0),
    selected: Number(li.dataset.selected || 0),
    edited: li.dataset.edited === "1",
  };
}

/** Show a message's stored state: text, status, alternatives, selection, edited mark. */
export function applyState(li, state) {
  if (state.role) {
    li.dataset.role = state.role;
    li.classList.remove("user", "assistant");
    li.classList.add(state.role);
    li.querySelector(".who").textContent = names[state.role] || state.role;
  }
  if (state.content !== undefined && textOf(li) !== state.content) setText(li, state.content);
  if (state.status) {
    li.classList.remove("complete", "failed", "cancelled", "streaming");
    li.classList.add(state.status);
    li.dataset.status = state.status;
    const label = li.querySelector(".status");
    label.textContent = state.status;
    label.hidden = state.status === "complete";
  }
  if (state.alternatives !== undefined) li.dataset.alternatives = String(state.alternatives);
  if (state.selected !== undefined) li.dataset.selected = String(state.selected);
  if (state.edited !== undefined) {
    if (state.edited) li.dataset.edited = "1";
    else delete li.dataset.edited;
    li.querySelector(".edited-mark").hidden = !state.edited;
  }
}

/** A new message at the end of the transcript, from the server's message markup. */
export function addMessage(role, text, id) {
  const li = messageTemplate.content.firstElementChild.cloneNode(true);
  applyState(li, { role: role, content: text, status: "complete" });
  if (id) li.dataset.id = id;
  transcript.append(li);
  li.scrollIntoView({ block: "end" });
  return li;
}

/** The reply that swipes and Continue work on: the last message, if it is a reply. */
export function lastReply() {
  const all = storedMessages();
  const last = all[all.length - 1];
  return last && last.dataset.role === "assistant" ? last : null;
}

/** What a plain `delete` removes (roleplay.services.messages.delete_last_exchange): the
 * last player message and everything after it, else the last message alone. */
export function lastExchange() {
  const all = storedMessages();
  let start = all.length - 1;
  for (let i = all.length - 1; i >= 0; i -= 1) {
    if (all[i].dataset.role === "user") { start = i; break; }
  }
  return start < 0 ? [] : all.slice(start);
}

/** The messages from `li` to the end: what "delete from here" removes. */
export function fromHere(li) {
  const all = storedMessages();
  return all.slice(all.indexOf(li));
}

export function removeIds(ids) {
  for (const id of ids) {
    const li = byId(id);
    if (li) li.remove();
  }
}

/** Bring the transcript to the server's (a freshly rendered #transcript): known messages
 * are updated in place (focus survives; those for which `keep(li)` is true are left as
 * they are, such as one being edited), new ones imported, gone ones removed. Bubbles the
 * server cannot know yet stay at the end: a reply still streaming and a sent message not
 * yet confirmed. */
export function reconcile(fresh, keep) {
  const wanted = [];
  const opening = transcript.querySelector("li.opening");
  if (opening) wanted.push(opening);
  for (const item of fresh.querySelectorAll("li.msg[data-id]")) {
    const mine = byId(item.dataset.id);
    if (mine && keep(mine)) {
      wanted.push(mine);
    } else if (mine) {
      applyState(mine, stateOf(item));
      wanted.push(mine);
    } else {
      wanted.push(document.importNode(item, true));
    }
  }
  const known = new Set(wanted);
  for (const li of transcript.querySelectorAll("li.msg")) {
    const unknownYet = !li.dataset.id || li.classList.contains("streaming");
    if (!known.has(li) && unknownYet) wanted.push(li);
  }
  const staying = new Set(wanted);
  for (const li of transcript.querySelectorAll("li.msg")) {
    if (!staying.has(li)) li.remove();
  }
  wanted.forEach(function (li, i) {
    if (transcript.children[i] !== li) transcript.insertBefore(li, transcript.children[i] || null);
  });
}
