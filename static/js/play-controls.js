// The message controls of the play page: swipe arrows with their counter (and a finger's
// swipe on the last reply or on the opening), Regenerate, Continue (offered with a note
// when a reply was cut short at its length limit), Copy, Edit (an inline editor) and
// Delete, of one message or of it and every later one (an inline confirmation;
// window.confirm would block the page's socket handling and cannot be styled). Each
// control only sends a frame (docs/websocket.md); the page changes when the server's event
// comes back, so another tab, the REST API and this page all show the same thing.
//
// The buttons are in every message's markup from the start (templates/roleplay/play/
// _message.html, absent for a viewer but Copy) and only hidden or disabled here, inside a
// tools row, so nothing moves when they are enabled or disabled while a turn runs.

import { branchAt, closeBookmark, openBookmark } from "./play-branches.js";
import * as T from "./play-transcript.js";

const transcript = document.getElementById("transcript");
const editorTemplate = document.getElementById("editor-template");
const confirmTemplate = document.getElementById("confirm-template");

let page = null; // {send, clientId, showError, ready}

function tool(li, name) {
  return li.querySelector(".msg-tools ." + name);
}

function show(element, visible, enabled) {
  if (!element) return;
  element.hidden = !visible;
  element.disabled = !enabled;
}

function isStored(li) {
  return Boolean(li.dataset.id) && !li.classList.contains("streaming");
}

function refreshOpening(ready) {
  const li = T.opening();
  if (!li) return;
  const count = Number(li.dataset.greetings || 1);
  const index = Number(li.dataset.greeting || 0);
  // Only before the first message: the history follows the opening it started with.
  const open = count > 1 && !transcript.querySelector("li.msg:not(.opening)");
  li.querySelector(".swipe").hidden = !open;
  li.querySelector(".swipe-count").textContent = index + 1 + "/" + count;
  show(tool(li, "swipe-prev"), open, ready && index > 0);
  show(tool(li, "swipe-next"), open, ready && index + 1 < count);
}

/** Which controls each message shows, and whether they can be used now. */
export function refresh() {
  const ready = page !== null && page.ready();
  const reply = T.lastReply();
  const stored = T.storedMessages();
  const last = stored[stored.length - 1];
  refreshOpening(ready);
  for (const li of transcript.querySelectorAll("li.msg:not(.opening)")) {
    const state = T.stateOf(li);
    const kept = isStored(li);
    const isReply = li === reply;
    const count = Math.max(state.alternatives, 1);
    const atEnd = state.selected + 1 >= count;
    const shared = li.dataset.shared === "1"; // the parent's: changed only in a new branch
    const own = isReply && !shared;
    const older = !own && count > 1; // another alternative of it makes a branch
    const swipe = li.querySelector(".swipe");
    swipe.hidden = !(state.role === "assistant" && li.dataset.id && (isReply || count > 1));
    li.querySelector(".swipe-count").textContent = state.selected + 1 + "/" + count;
    show(tool(li, "swipe-prev"), own || older, ready && state.selected > 0);
    const next = tool(li, "swipe-next");
    show(next, own || older, ready && (own || !atEnd));
    if (next) {
      const label = older
        ? "Next alternative, in a new branch"
        : atEnd
          ? "Generate a new alternative"
          : "Next alternative";
      next.setAttribute("aria-label", label);
      next.title = label;
    }
    const cut = li.querySelector(".cut-short");
    if (cut) cut.hidden = !(isReply && kept && state.finish === "length");
    show(tool(li, "msg-continue"), own, ready);
    show(tool(li, "msg-regenerate"), own, ready);
    show(tool(li, "msg-copy"), true, !li.classList.contains("streaming"));
    const editing = li.querySelector(".msg-editor");
    show(tool(li, "msg-edit"), kept && !editing && !shared, ready);
    show(tool(li, "msg-delete"), kept && !shared, ready);
    show(tool(li, "msg-delete-from"), kept && li !== last && !shared, ready);
    show(tool(li, "msg-branch"), kept, ready);
    show(tool(li, "msg-bookmark"), kept, ready);
    if (editing) {
      for (const button of editing.querySelectorAll("button")) {
        button.disabled = !ready || li.dataset.pendingEdit === "1";
      }
      editing.querySelector(".editor-regenerate").hidden = !isLastExchange(li, stored);
    }
    const confirm = li.querySelector(".msg-confirm");
    if (confirm) confirm.querySelector(".confirm-yes").disabled = !ready;
  }
}

/** Whether "Save and regenerate" applies to `li`: the last reply, or the player message it
 * answers (roleplay.turns: an edit_regenerate rewrites the last reply). */
function isLastExchange(li, stored) {
  const index = stored.indexOf(li);
  const after = stored.slice(index + 1);
  return index >= 0 && after.every((other) => other.dataset.role === "assistant") && after.length <= 1;
}

function swipe(li, step) {
  if (li.classList.contains("opening")) {
    const index = Number(li.dataset.greeting || 0) + step;
    if (index >= 0 && index < Number(li.dataset.greetings || 1)) {
      page.send({ type: "select_opening", index: index });
    }
    return;
  }
  const state = T.stateOf(li);
  const count = Math.max(state.alternatives, 1);
  const index = state.selected + step;
  if (index < 0) return;
  if (li !== T.lastReply() || li.dataset.shared === "1") {
    // An older reply keeps its place in this conversation: the other alternative starts
    // a branch just before it (docs/branches.md).
    if (index < count) branchAt(li, index);
    return;
  }
  if (index >= count) {
    // Past the last alternative: a new one, as SillyTavern's swipe right does.
    page.send({ type: "regenerate", client_message_id: page.clientId("r") });
  } else {
    page.send({ type: "select_alternative", message_id: li.dataset.id, index: index });
  }
}

const SWIPE_PX = 60; // a finger's move this far sideways (and mostly sideways) is a swipe
let touch = null;

/** A finger's swipe on a message does what its arrow would: left for the next alternative
 * (or a new one), right for the previous; only where that arrow shows and is enabled. */
function touchSwipe(event) {
  const start = touch;
  touch = null;
  const end = event.changedTouches[0];
  if (!start || !end || start.li.querySelector(".msg-editor")) return;
  const dx = end.clientX - start.x;
  const dy = end.clientY - start.y;
  if (Math.abs(dx) < SWIPE_PX || Math.abs(dx) < 2 * Math.abs(dy)) return;
  const arrow = tool(start.li, dx < 0 ? "swipe-next" : "swipe-prev");
  if (arrow && !arrow.hidden && !arrow.disabled && !arrow.closest("[hidden]")) {
    swipe(start.li, dx < 0 ? 1 : -1);
  }
}

async function copy(li, button) {
  const text = T.textOf(li);
  let copied = false;
  try {
    await navigator.clipboard.writeText(text);
    copied = true;
  } catch (error) {
    // No clipboard API (a page served over plain HTTP to another machine): the old way.
    const area = document.createElement("textarea");
    area.className = "visually-hidden";
    area.value = text;
    document.body.append(area);
    area.select();
    copied = document.execCommand("copy");
    area.remove();
  }
  button.textContent = copied ? "Copied" : "Copy failed";
  setTimeout(function () {
    button.textContent = "Copy";
  }, 1500);
}

function openEditor(li) {
  if (li.querySelector(".msg-editor")) return;
  closeConfirm(li);
  const editor = editorTemplate.content.firstElementChild.cloneNode(true);
  const area = editor.querySelector(".editor-text");
  area.value = T.textOf(li);
  li.querySelector(".text").hidden = true;
  li.querySelector(".text").after(editor);
  refresh();
  area.focus();
}

/** Close the editor of `li` (after its edit was applied, or on Cancel). */
export function closeEditor(li) {
  const editor = li.querySelector(".msg-editor");
  if (!editor) return;
  const hadFocus = editor.contains(document.activeElement);
  editor.remove();
  delete li.dataset.pendingEdit;
  li.querySelector(".text").hidden = false;
  refresh();
  if (hadFocus) tool(li, "msg-edit").focus();
}

/** After a refused frame: editors waiting for their edit can be used again. */
export function releasePendingEdits() {
  for (const li of transcript.querySelectorAll("li.msg[data-pending-edit]")) {
    delete li.dataset.pendingEdit;
  }
  refresh();
}

function saveEdit(li, regenerate) {
  if (li.dataset.pendingEdit) return;
  const content = li.querySelector(".editor-text").value;
  if (!content.trim()) {
    page.showError("A message cannot be empty; delete it instead.");
    return;
  }
  if (content === T.textOf(li) && !regenerate) {
    closeEditor(li);
    return;
  }
  const frame = { type: "edit", message_id: li.dataset.id, content: content };
  if (regenerate) {
    frame.regenerate = true;
    frame.client_message_id = page.clientId("e");
  }
  if (page.send(frame)) {
    li.dataset.pendingEdit = "1"; // closed by its message.updated, released by an error
    refresh();
  }
}

// "one": the message alone (delete_message); "from": it and every later one (delete).
function openConfirm(li, scope) {
  closeConfirm(li, false);
  const doomed = scope === "one" ? 1 : T.fromHere(li).length;
  const confirm = confirmTemplate.content.firstElementChild.cloneNode(true);
  confirm.querySelector(".confirm-text").textContent =
    doomed === 1
      ? "Delete this message?"
      : "Delete this message and the " + (doomed - 1) + " after it?";
  confirm.dataset.scope = scope;
  li.querySelector(".msg-body").append(confirm);
  refresh();
  confirm.querySelector(".confirm-no").focus();
}

function closeConfirm(li, focusTool) {
  const confirm = li.querySelector(".msg-confirm");
  if (!confirm) return;
  confirm.remove();
  if (focusTool) {
    tool(li, confirm.dataset.scope === "one" ? "msg-delete" : "msg-delete-from").focus();
  }
}

function confirmDelete(li) {
  const confirm = li.querySelector(".msg-confirm");
  const one = confirm.dataset.scope === "one";
  const frame = { type: one ? "delete_message" : "delete", message_id: li.dataset.id };
  if (page.send(frame)) closeConfirm(li, false);
}

const CLICKS = {
  "swipe-prev": (li) => swipe(li, -1),
  "swipe-next": (li) => swipe(li, 1),
  "msg-continue": () => page.send({ type: "continue", client_message_id: page.clientId("k") }),
  "msg-regenerate": () => page.send({ type: "regenerate", client_message_id: page.clientId("r") }),
  "msg-copy": copy,
  "msg-edit": openEditor,
  "msg-delete": (li) => openConfirm(li, "one"),
  "msg-delete-from": (li) => openConfirm(li, "from"),
  "editor-regenerate": (li) => saveEdit(li, true),
  "editor-cancel": closeEditor,
  "confirm-yes": confirmDelete,
  "confirm-no": (li) => closeConfirm(li, true),
  "msg-branch": (li) => branchAt(li),
  "msg-bookmark": openBookmark,
  "bookmark-cancel": closeBookmark,
};

/** Wire the controls to the page: `send(frame)` (false when not sent), `clientId(prefix)`,
 * `showError(text)` and `ready()` (connected, allowed to write, no turn running). */
export function initControls(actions) {
  page = actions;
  transcript.addEventListener("click", function (event) {
    const button = event.target.closest("button");
    const li = button && button.closest("li.msg");
    if (!li || button.disabled) return;
    const name = Object.keys(CLICKS).find((key) => button.classList.contains(key));
    if (name) CLICKS[name](li, button);
  });
  transcript.addEventListener(
    "touchstart",
    function (event) {
      const li = event.touches.length === 1 && event.target.closest("li.msg");
      touch = li ? { li: li, x: event.touches[0].clientX, y: event.touches[0].clientY } : null;
    },
    { passive: true },
  );
  transcript.addEventListener("touchend", touchSwipe, { passive: true });
  transcript.addEventListener("touchcancel", () => (touch = null), { passive: true });
  transcript.addEventListener("submit", function (event) {
    if (!event.target.classList.contains("msg-editor")) return; // a checkpoint form posts
    event.preventDefault();
    saveEdit(event.target.closest("li.msg"), false);
  });
  transcript.addEventListener("keydown", function (event) {
    const li = event.target.closest && event.target.closest("li.msg");
    if (!li) return;
    if (event.key === "Escape") {
      if (li.querySelector(".msg-confirm")) closeConfirm(li, true);
      else if (event.target.closest(".msg-editor")) closeEditor(li);
    } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      if (event.target.classList.contains("editor-text")) {
        event.preventDefault();
        saveEdit(li, false);
      }
    }
  });
  refresh();
}
