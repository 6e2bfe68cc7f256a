// Player chat over /ws/conversations/<id>/ (protocol: docs/websocket.md): the socket, what
// each server event does to the transcript, and the composer. The transcript's DOM is
// play-transcript.js (Markdown: play-markdown.js); the message controls are
// play-controls.js; where the transcript is scrolled, play-scroll.js.

import * as T from "./play-transcript.js";
import { closeEditor, initControls, refresh, releasePendingEdits } from "./play-controls.js";
import { initScroll, toLatest } from "./play-scroll.js";
import { initSuggestions } from "./play-suggestions.js";
import * as Pictures from "./play-pictures.js";
import * as Group from "./play-group.js";

const root = document.getElementById("play");
const conversationId = root.dataset.conversation;
const canWrite = root.dataset.canWrite === "1";
const form = document.getElementById("composer");
const input = document.getElementById("input");
const sendButton = document.getElementById("send");
const cancelButton = document.getElementById("cancel");
const errorBox = document.getElementById("play-error");
const statusBox = document.getElementById("play-status");
const titleBox = document.getElementById("conversation-title");

// Kinds whose reply is a new alternative of a stored message: it streams into that bubble.
const REWRITES = new Set(["regenerate", "edit_regenerate"]);
const turns = new Map(); // turn id -> {li, kind, rewriting, before}
const unsent = new Map(); // client_message_id of a sent player message -> its bubble
let activeTurn = null; // the turn running in the conversation, as far as this page knows
let socket = null;
let retry = 0;
let everOpen = false;
const suggestions = initSuggestions({ send: send, ready: ready, sendMessage: sendMessage });

function clientId(prefix) {
  const random = (crypto.randomUUID && crypto.randomUUID()) || String(Date.now()) + Math.random();
  return prefix + "-" + random;
}

function showError(message) {
  errorBox.textContent = message;
  errorBox.hidden = !message;
  if (message) showStatus("");
}

/** A plan's limit in words: which, what was used, and when it resets (local time). */
function quotaWords(msg) {
  const what = {
    messages_per_day: "messages today",
    tokens_per_day: "tokens today",
    tokens_per_month: "tokens this month",
  }[msg.quota] || "of your plan";
  const when = msg.retry_at ? new Date(msg.retry_at) : null;
  const at = when && !isNaN(when) ? " You can go on " + when.toLocaleString() + "." : "";
  return "Limit reached: you have used " + msg.used + " of " + msg.limit + " " + what + "." + at;
}

/** A normal outcome worth a word (a reply stopped), not an error. */
function showStatus(message) {
  statusBox.textContent = message;
  statusBox.hidden = !message;
}

function connected() {
  return socket !== null && socket.readyState === WebSocket.OPEN;
}

function ready() {
  return canWrite && connected() && activeTurn === null;
}

function send(frame) {
  if (!connected()) {
    showError("Not connected to the conversation; reconnecting…");
    return false;
  }
  showError("");
  showStatus("");
  socket.send(JSON.stringify(frame));
  return true;
}

function update() {
  sendButton.disabled = !ready();
  // Stop keeps its slot when idle (hidden from view), so Send never moves.
  const stoppable = activeTurn !== null && canWrite;
  cancelButton.classList.toggle("idle", !stoppable);
  cancelButton.disabled = !stoppable;
  root.dataset.busy = activeTurn === null ? "" : "1";
  refresh();
  suggestions.update();
}

function setActive(turnId) {
  activeTurn = turnId;
  update();
}

// --- Re-reading the transcript -------------------------------------------------------
// Events carry what changed, not always all of it (another tab's player message, how many
// alternatives a failed regenerate left): then the page reads its transcript again.

let syncing = null;
let syncAgain = false;
let changes = 0; // events that changed the transcript, to tell a stale read from a fresh one
const STALE_READS = 5;

function keepWhileSyncing(li) {
  return li.classList.contains("streaming") || Boolean(li.querySelector(".msg-editor"));
}

async function readTranscript() {
  const response = await fetch(location.pathname + "?part=transcript", {
    credentials: "same-origin",
    headers: { Accept: "text/html" },
  });
  const html = response.ok ? await response.text() : "";
  const fresh = new DOMParser().parseFromString(html, "text/html").getElementById("transcript");
  if (!fresh) throw new Error("the transcript could not be read (signed out?)");
  return fresh;
}

/** Resolves with the server's running turn ({runningTurn, runningKind, runningReply}). */
function resync() {
  if (syncing) {
    syncAgain = true;
    return syncing;
  }
  syncing = (async function () {
    let running = {};
    let reads = 0;
    do {
      syncAgain = false;
      try {
        const before = changes;
        const fresh = await readTranscript();
        reads += 1;
        if (changes !== before && reads < STALE_READS) {
          // An event came while it was read: what it did may be missing from this copy.
          syncAgain = true;
          continue;
        }
        T.reconcile(fresh, keepWhileSyncing);
        running = { ...fresh.dataset };
      } catch (error) {
        showError(String(error.message || error));
      }
    } while (syncAgain);
    return running;
  })().finally(function () {
    syncing = null;
    update();
  });
  return syncing;
}

/** A turn the page did not see start (it was running when the page loaded or while the
 * socket was down): follow it, so its deltas and its end land in the right bubble. */
function adopt(running) {
  if (!running.runningTurn || turns.has(running.runningTurn)) return;
  const li = T.byId(running.runningReply);
  turns.set(running.runningTurn, {
    li: li,
    reply: running.runningReply,
    kind: running.runningKind,
    rewriting: Boolean(li),
    before: li ? T.textOf(li) : "",
  });
  if (li && REWRITES.has(running.runningKind)) T.setText(li, ""); // its deltas from here on
  if (li) li.classList.add("streaming");
  setActive(running.runningTurn);
}

// --- Server events -------------------------------------------------------------------

function turnStarted(msg) {
  const mine = unsent.get(msg.client_message_id);
  if (mine) {
    unsent.delete(msg.client_message_id);
    if (msg.user_message_id && T.byId(msg.user_message_id)) mine.remove();
    else if (msg.user_message_id) mine.dataset.id = msg.user_message_id;
  }
  if (msg.duplicate) {
    if (msg.status !== "running") resync();
    return;
  }
  let li = T.byId(msg.assistant_message_id);
  const rewriting = Boolean(li);
  if (!li) li = T.addMessage("assistant", "", msg.assistant_message_id);
  Group.showSpeaker(li, msg.speaker); // a group's reply: who speaks it
  const before = T.textOf(li);
  closeEditor(li);
  if (rewriting && REWRITES.has(msg.kind)) T.setText(li, "");
  T.applyState(li, { finish: "" });
  li.classList.add("streaming");
  turns.set(msg.turn_id, { li, kind: msg.kind, rewriting, before });
  if (msg.user_message_id && !T.byId(msg.user_message_id)) resync(); // another tab's message
  setActive(msg.turn_id);
}

function bubbleOf(turn) {
  if (!turn.li) turn.li = T.byId(turn.reply) || T.addMessage("assistant", "", turn.reply);
  turn.li.classList.add("streaming");
  return turn.li;
}

function delta(msg) {
  const turn = turns.get(msg.turn_id);
  if (turn) T.appendText(bubbleOf(turn), msg.text);
}

function turnCompleted(msg) {
  const turn = turns.get(msg.turn_id);
  turns.delete(msg.turn_id);
  if (turn) {
    const li = bubbleOf(turn);
    const state = {
      content: msg.content,
      display: msg.display,
      status: "complete",
      finish: msg.finish_reason || "",
    };
    // The turn's reasoning; a continue's goes after the reply's own (memory.alternatives).
    const before = turn.kind === "continue" ? T.reasoningOf(li) : "";
    const reasoning = msg.reasoning || "";
    state.reasoning = before && reasoning ? before + "\n\n" + reasoning : before || reasoning;
    if (turn.rewriting && REWRITES.has(turn.kind)) {
      // The old text became an alternative and the new one is shown (memory.alternatives).
      const total = Math.min(Math.max(T.stateOf(li).alternatives, 1) + 1, T.MAX_ALTERNATIVES);
      state.alternatives = total;
      state.selected = total - 1;
    }
    T.applyState(li, state);
  } else {
    resync();
  }
  if (msg.title) showTitle(msg.title);
  if (activeTurn === msg.turn_id || activeTurn === null) setActive(null);
}

function showTitle(title) {
  titleBox.textContent = title;
  document.title = root.dataset.character + " · " + title;
}

function turnFailed(msg) {
  const turn = turns.get(msg.turn_id);
  turns.delete(msg.turn_id);
  if (turn && turn.li) {
    if (turn.rewriting && REWRITES.has(turn.kind)) {
      // A failed alternative is kept beside the others; the shown text does not change.
      T.setText(turn.li, turn.before);
      turn.li.classList.remove("streaming");
    } else if (turn.rewriting) {
      turn.li.classList.remove("streaming"); // a continue keeps what it added
    } else {
      T.applyState(turn.li, { status: msg.code === "turn_cancelled" ? "cancelled" : "failed" });
    }
  }
  if (activeTurn === msg.turn_id || activeTurn === null) setActive(null);
  resync(); // what was stored of it, and how many alternatives there are now
}

function frameRefused(msg) {
  const mine = msg.client_message_id && unsent.get(msg.client_message_id);
  if (mine) {
    // Not stored (docs/websocket.md): give the text back to send again.
    unsent.delete(msg.client_message_id);
    if (!input.value) input.value = T.textOf(mine);
    mine.remove();
  }
  releasePendingEdits();
  if (msg.code === "turn_in_progress" && activeTurn === null) resync().then(adopt);
  if (msg.code === "message_not_found" || msg.code === "alternative_not_found") resync();
}

function messageUpdated(msg) {
  const li = T.byId(msg.message_id);
  if (!li) return;
  // Another alternative shown: whether it was cut short is not known here.
  if (msg.selected_alternative !== T.stateOf(li).selected) T.applyState(li, { finish: "" });
  T.applyState(li, {
    role: msg.role,
    content: msg.content,
    status: msg.status,
    alternatives: msg.alternatives,
    selected: msg.selected_alternative,
    edited: msg.edited,
    reasoning: msg.reasoning,
  });
  // This page's own edit is done; an editor open while someone else changed the message
  // stays open, so the text typed in it is not lost.
  if (li.dataset.pendingEdit) closeEditor(li);
}

const EVENTS = {
  "turn.started": turnStarted,
  delta: delta,
  "turn.completed": turnCompleted,
  "message.updated": messageUpdated,
  "messages.deleted": (msg) => T.removeIds(msg.message_ids),
  // The tenant's moderation hid a committed reply: it leaves the page (and the history).
  "message.hidden": function (msg) {
    T.removeIds([msg.message_id]);
    showStatus("A reply was hidden by this community's moderation.");
    resync();
  },
  // The moderation let the player's message through with a warning: said before the reply.
  "moderation.warning": (msg) => showStatus(msg.message),
  // Any door changed the history (a rollback, trim or edit through the API, say): read it.
  "history.changed": () => resync(),
  "conversation.updated": function (msg) {
    if (msg.title) showTitle(msg.title);
    if (msg.greeting_index !== undefined) T.setOpening(msg);
  },
  "auto_reply.options": (msg) => suggestions.show(msg),
  "group.updated": Group.updated,
  "image.scheduled": Pictures.scheduled,
  "image.ready": Pictures.ready,
  "image.blocked": Pictures.failed,
  "image.failed": Pictures.failed,
  error: function (msg) {
    // Stop is a normal outcome: the reply keeps what it had, and Continue goes on from it.
    if (msg.code === "turn_cancelled") showStatus("Stopped.");
    else if (msg.code === "quota_exceeded") showError(quotaWords(msg));
    else if (msg.code === "rate_limited") showError("Slow down: try again in " + msg.retry_after + " s.");
    else showError(msg.code + ": " + msg.message);
    if (msg.turn_id) turnFailed(msg);
    else if (msg.assistant_message_id) suggestions.failed(msg);
    else frameRefused(msg);
  },
};

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(scheme + "://" + location.host + "/ws/conversations/" + conversationId + "/");
  socket.onopen = function () {
    retry = 0;
    root.dataset.connected = "1";
    update();
    if (everOpen) reconnected();
    everOpen = true;
  };
  socket.onclose = function (event) {
    root.dataset.connected = "";
    update();
    // Closed for good: the account was suspended (4423), or the conversation is not (or no
    // longer) this session's (4404). Retrying would only be refused again.
    if (event.code === 4423 || event.code === 4404) {
      root.dataset.closed = String(event.code);
      showError(event.code === 4423
        ? "This chat is closed: your account is suspended."
        : "This chat is closed: it is gone, or you are signed out.");
      return;
    }
    retry = Math.min(retry + 1, 5);
    setTimeout(connect, 500 * retry);
  };
  socket.onmessage = function (event) {
    const msg = JSON.parse(event.data);
    const handle = EVENTS[msg.type];
    if (msg.type !== "delta") changes += 1;
    if (handle) handle(msg);
    if (msg.type !== "delta") update();
  };
}

/** Events sent while the socket was down are lost: read the transcript again, and forget a
 * turn that ended meanwhile. */
async function reconnected() {
  const running = await resync();
  if (activeTurn !== null && running.runningTurn !== activeTurn) {
    for (const turn of turns.values()) if (turn.li) turn.li.classList.remove("streaming");
    turns.clear();
    setActive(null);
    await resync();
  }
  adopt(running);
}

/** Send ``content`` as the player's message; true when it went out. */
function sendMessage(content) {
  const trigger = Group.triggerOf(content); // "/trigger Name": force-talk, no message
  if (trigger) {
    const frame = { type: "group.trigger", client_message_id: clientId("t") };
    if (trigger.name) frame.character = trigger.name;
    return send(frame);
  }
  const id = clientId("c");
  if (!send({ type: "user_message", client_message_id: id, content: content })) return false;
  unsent.set(id, T.addMessage("user", content));
  toLatest();
  suggestions.clear();
  return true;
}

form.addEventListener("submit", function (event) {
  event.preventDefault();
  const content = input.value.trim();
  if (!content || !ready()) return;
  if (sendMessage(content)) input.value = "";
});
cancelButton.addEventListener("click", function () {
  send({ type: "cancel" });
});
input.addEventListener("keydown", function (event) {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    form.requestSubmit();
  }
});

T.renderAll();
initScroll();
initControls({ send: send, clientId: clientId, showError: showError, ready: ready });
Group.initGroup({ send: send, ready: ready, clientId: clientId });
adopt({ ...document.getElementById("transcript").dataset });
update();
connect();
