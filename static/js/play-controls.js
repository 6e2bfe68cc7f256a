// The message controls of the play page: swipe arrows with their counter, Continue, Edit
// (an inline editor) and Delete (an inline confirmation; window.confirm would block the
// page's socket handling and cannot be styled). Each control only sends a frame
// (docs/websocket.md); the page changes when the server's event comes back, so another
// tab, the REST API and this page all show the same thing.
//
// The buttons are in every message's markup from the start (templates/roleplay/play/
// _message.html, absent for a viewer) and only hidden or disabled here, inside a tools row
// of fixed height, so nothing moves when they appear or go.

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

/** Which controls each message shows, and whether they can be used now. */
export function refresh() {
  const ready = page !== null && page.ready();
  const reply = T.lastReply();
  const exchange = new Set(T.lastExchange());
  for (const li of transcript.querySelectorAll("li.msg:not(.opening)")) {
    const state = T.stateOf(li);
    const stored = isStored(li);
    const isReply = li === reply;
    const count = Math.max(state.alternatives, 1);
    const atEnd = state.selected + 1 >= count;
    const swipe = li.querySelector(".swipe");
    swipe.hidden = !(state.role === "assistant" && li.dataset.id && (isReply || count > 1));
    li.querySelector(".swipe-count").textContent = state.selected + 1 + "/" + count;
    show(tool(li, "swipe-prev"), isReply, ready && state.selected > 0);
    const next = tool(li, "swipe-next");
    show(next, isReply, ready);
    if (next) {
      const label = atEnd ? "Generate a new alternative" : "Next alternative";
      next.setAttribute("aria-label", label);
      next.title = label;
    }
    show(tool(li, "msg-continue"), isReply, ready);
    const editing = li.querySelector(".msg-editor");
    show(tool(li, "msg-edit"), stored && !editing, ready);
    const remove = tool(li, "msg-delete");
    show(remove, stored, ready);
    if (remove) remove.textContent = exchange.has(li) ? "Delete" : "Delete from here";
    if (editing) {
      for (const button of editing.querySelectorAll("button")) {
        button.disabled = !ready || li.dataset.pendingEdit === "1";
      }
      editing.querySelector(".editor-regenerate").hidden = !exchange.has(li);
    }
    const confirm = li.querySelector(".msg-confirm");
    if (confirm) confirm.querySelector(".confirm-yes").disabled = !ready;
  }
}

function swipe(li, step) {
  const state = T.stateOf(li);
  const count = Math.max(state.alternatives, 1);
  const index = state.selected + step;
  if (index < 0) return;
  if (index >= count) {
    // Past the last alternative: a new one, as SillyTavern's swipe right does.
    page.send({ type: "regenerate", client_message_id: page.clientId("r") });
  } else {
    page.send({ type: "select_alternative", message_id: li.dataset.id, index: index });
  }
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

function openConfirm(li) {
  if (li.querySelector(".msg-confirm")) return;
  const exchange = T.lastExchange();
  const lastExchange = exchange.includes(li);
  const doomed = lastExchange ? exchange.length : T.fromHere(li).length;
  const confirm = confirmTemplate.content.firstElementChild.cloneNode(true);
  confirm.querySelector(".confirm-text").textContent = lastExchange
    ? "Delete the last exchange (" + doomed + (doomed === 1 ? " message" : " messages") + ")?"
    : doomed === 1
      ? "Delete this message?"
      : "Delete this message and the " + (doomed - 1) + " after it?";
  if (lastExchange) confirm.dataset.scope = "exchange";
  li.append(confirm);
  refresh();
  confirm.querySelector(".confirm-no").focus();
}

function closeConfirm(li, focusTool) {
  const confirm = li.querySelector(".msg-confirm");
  if (!confirm) return;
  confirm.remove();
  if (focusTool) tool(li, "msg-delete").focus();
}

function confirmDelete(li) {
  const confirm = li.querySelector(".msg-confirm");
  const frame = { type: "delete" };
  if (confirm.dataset.scope !== "exchange") frame.message_id = li.dataset.id;
  if (page.send(frame)) closeConfirm(li, false);
}

const CLICKS = {
  "swipe-prev": (li) => swipe(li, -1),
  "swipe-next": (li) => swipe(li, 1),
  "msg-continue": () => page.send({ type: "continue", client_message_id: page.clientId("k") }),
  "msg-edit": openEditor,
  "msg-delete": openConfirm,
  "editor-regenerate": (li) => saveEdit(li, true),
  "editor-cancel": closeEditor,
  "confirm-yes": confirmDelete,
  "confirm-no": (li) => closeConfirm(li, true),
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
    if (name) CLICKS[name](li);
  });
  transcript.addEventListener("submit", function (event) {
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
