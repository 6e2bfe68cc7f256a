// The play page's transcript: one <li class="msg"> per message, rendered by the server
// (templates/roleplay/play/_message.html) or cloned here from the same markup. A stored
// message keeps what its controls need in data attributes: data-id, data-role, data-status,
// data-alternatives (stored alternatives; 0 means the text is its only version),
// data-selected (which one shows), data-edited and data-finish ("length": cut short). A
// reply's reasoning (its model's scratchpad) is the text of its closed details.reasoning,
// hidden when empty, shown as plain text.
// Everything that changes a message goes through applyState, whether the change came from
// an event or from re-reading the page.
//
// A message's .text arrives as its stored source; it is shown as Markdown (play-markdown.js)
// and the source is kept here, for the editor, Copy and comparisons.

import { render } from "./play-markdown.js";

const transcript = document.getElementById("transcript");
const root = document.getElementById("play");
const names = { assistant: root.dataset.character, user: root.dataset.player };
const STATUS_LABELS = { cancelled: "stopped" };
const sources = new WeakMap(); // li -> the message's source text

export const MAX_ALTERNATIVES = 100; // memory.alternatives.MAX_ALTERNATIVES

export function byId(id) {
  return id ? transcript.querySelector('li.msg[data-id="' + CSS.escape(id) + '"]') : null;
}

/** Stored messages in order (the opening line and unsent bubbles have no id). */
export function storedMessages() {
  return [...transcript.querySelectorAll("li.msg[data-id]")];
}

/** The message's source text (what was stored; not the rendered Markdown). */
export function textOf(li) {
  return sources.has(li) ? sources.get(li) : li.querySelector(".text").textContent;
}

export function setText(li, text) {
  sources.set(li, text);
  delete li.dataset.display; // a new text: the display-only scripts' version is out of date
  li.querySelector(".text").replaceChildren(render(text));
}

export function appendText(li, text) {
  setText(li, textOf(li) + text);
}

const clock = { hour: "2-digit", minute: "2-digit" };
const dated = { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" };

/** Show a message's time in the reader's zone: the time today, else with the date. */
function showTime(time, when) {
  const today = when.toDateString() === new Date().toDateString();
  time.dateTime = when.toISOString();
  time.textContent = when.toLocaleString([], today ? { ...clock } : dated);
  time.title = when.toLocaleString();
}

/** Show a message the server rendered (still its plain source): Markdown, local time. */
function renderMessage(li) {
  if (!sources.has(li)) {
    // data-display: the display-only regex scripts' version (shown; the source is kept)
    const shown = li.dataset.display;
    const source = textOf(li);
    sources.set(li, source);
    li.querySelector(".text").replaceChildren(render(shown === undefined ? source : shown));
  }
  const time = li.querySelector("time.when[datetime]");
  if (time && time.dateTime) showTime(time, new Date(time.dateTime));
}

/** Render every message the server rendered with the page. */
export function renderAll() {
  for (const li of transcript.querySelectorAll("li.msg")) renderMessage(li);
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
    finish: li.dataset.finish || "",
    reasoning: reasoningOf(li),
  };
}

/** A reply's reasoning as shown (empty when it has none). */
export function reasoningOf(li) {
  const box = li.querySelector("details.reasoning");
  return box ? box.querySelector(".reasoning-text").textContent : "";
}

function setReasoning(li, reasoning) {
  const box = li.querySelector("details.reasoning");
  if (!box || reasoningOf(li) === reasoning) return;
  box.querySelector(".reasoning-text").textContent = reasoning; // text: never markup
  box.hidden = !reasoning;
  if (!reasoning) box.open = false;
}

/** Show a message's stored state: text, status, alternatives, selection, edited mark, and
 * whether it was cut short. */
export function applyState(li, state) {
  if (state.role) {
    li.dataset.role = state.role;
    li.classList.remove("user", "assistant");
    li.classList.add(state.role);
    li.querySelector(".who").textContent = names[state.role] || state.role;
  }
  if (state.content !== undefined && textOf(li) !== state.content) setText(li, state.content);
  if (state.display) {
    // the display-only regex scripts' version of the text (shown; the source is kept)
    li.dataset.display = state.display;
    li.querySelector(".text").replaceChildren(render(state.display));
  }
  if (state.status) {
    li.classList.remove("complete", "failed", "cancelled", "streaming");
    li.classList.add(state.status);
    li.dataset.status = state.status;
    const label = li.querySelector(".status");
    label.textContent = STATUS_LABELS[state.status] || state.status;
    label.hidden = state.status === "complete";
  }
  if (state.reasoning !== undefined) setReasoning(li, state.reasoning);
  if (state.alternatives !== undefined) li.dataset.alternatives = String(state.alternatives);
  if (state.selected !== undefined) li.dataset.selected = String(state.selected);
  if (state.edited !== undefined) {
    if (state.edited) li.dataset.edited = "1";
    else delete li.dataset.edited;
    li.querySelector(".edited-mark").hidden = !state.edited;
  }
  if (state.finish !== undefined) {
    if (state.finish === "length") li.dataset.finish = "length";
    else delete li.dataset.finish;
  }
}

/** A new message at the end of the transcript, from the server's message markup. */
export function addMessage(role, text, id) {
  const template = document.getElementById("message-template-" + role);
  const li = template.content.firstElementChild.cloneNode(true);
  applyState(li, { role: role, content: text, status: "complete" });
  showTime(li.querySelector("time.when"), new Date());
  if (id) li.dataset.id = id;
  transcript.append(li);
  return li;
}

/** The opening line (the card's greeting), if the conversation has one. */
export function opening() {
  return transcript.querySelector("li.opening");
}

/** Show another opening (a `conversation.updated` event after `select_opening`). */
export function setOpening(state) {
  const li = opening();
  if (!li || state.greeting_index === null || state.greeting_index === undefined) return;
  li.dataset.greeting = String(state.greeting_index);
  li.dataset.greetings = String(state.greetings);
  setText(li, state.opening);
}

/** The reply that swipes and Continue work on: the last message, if it is a reply. */
export function lastReply() {
  const all = storedMessages();
  const last = all[all.length - 1];
  return last && last.dataset.role === "assistant" ? last : null;
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
  const first = opening();
  if (first) wanted.push(first);
  for (const item of fresh.querySelectorAll("li.msg[data-id]")) {
    const mine = byId(item.dataset.id);
    if (mine && keep(mine)) {
      wanted.push(mine);
    } else if (mine) {
      applyState(mine, stateOf(item));
      keepPictures(mine, item);
      wanted.push(mine);
    } else {
      const imported = document.importNode(item, true);
      renderMessage(imported);
      wanted.push(imported);
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

/** The pictures of a re-read message (`fresh`) in the shown one (`li`), when they differ. */
function keepPictures(li, fresh) {
  const mine = li.querySelector(".msg-pictures");
  const theirs = fresh.querySelector(".msg-pictures");
  if (!mine || !theirs || mine.innerHTML === theirs.innerHTML) return;
  mine.replaceWith(document.importNode(theirs, true));
}
