// The preset editor's behaviours (no build step, no dependencies, no inline code: the
// console's Content-Security-Policy allows scripts from 'self' only).
//
// The page works without this file: every move, addition and removal is a submit that the
// server answers with the edited page. Here the same moves happen in the page:
// 1. drag a prompt by its handle (HTML5 drag and drop) and drop it above or below another;
// 2. the ↑ and ↓ buttons move a prompt one place, keeping the focus on the button;
// 3. every move renumbers the list and is announced in a live region;
// 4. the depth and order inputs show (and are sent) only for "in the chat, at a depth";
// 5. a disabled prompt is dimmed, the title follows the name, and leaving the page with
//    unsaved edits asks first;
// 6. a move tells the preview panel (``preset:moved``), which re-assembles the messages.
// Saving stays a plain form post: the order of the prompts is the order of their inputs.
(function () {
  "use strict";

  const list = document.getElementById("preset-prompts");
  const form = document.getElementById("preset-form");
  if (!list || !form) return;
  const live = document.getElementById("preset-live");
  const unsaved = document.getElementById("preset-unsaved");
  let dirty = unsaved ? !unsaved.hidden : false;
  let dragged = null;

  function items() {
    return Array.prototype.slice.call(list.querySelectorAll(":scope > li.preset-prompt"));
  }

  function title(item) {
    const el = item.querySelector(".preset-title");
    return el ? el.textContent.trim() : "prompt";
  }

  function markDirty() {
    dirty = true;
    if (unsaved) unsaved.hidden = false;
  }

  function renumber() {
    items().forEach(function (item, index) {
      const el = item.querySelector(".preset-index");
      if (el) el.textContent = String(index + 1);
    });
  }

  function moved(item) {
    renumber();
    markDirty();
    const all = items();
    if (live) live.textContent = title(item) + " moved to position " + (all.indexOf(item) + 1) + " of " + all.length + ".";
    // The preview (htmx, in the side panel) listens for this and assembles the new order.
    document.body.dispatchEvent(new CustomEvent("preset:moved"));
  }

  function showDepth(item) {
    const select = item.querySelector("select[data-position]");
    const atDepth = select && select.value === "at_depth";
    item.querySelectorAll("[data-depth]").forEach(function (label) {
      label.hidden = !atDepth;
      label.querySelectorAll("input").forEach(function (input) { input.disabled = !atDepth || isReadOnly(item); });
    });
  }

  function isReadOnly(item) {
    const fieldset = item.querySelector("fieldset");
    return fieldset ? fieldset.disabled : true;
  }

  // 2. the up and down buttons
  list.addEventListener("click", function (event) {
    const button = event.target.closest && event.target.closest("button[data-move]");
    if (!button) return;
    event.preventDefault();
    const item = button.closest("li.preset-prompt");
    const direction = button.getAttribute("data-move");
    const other = direction === "up" ? item.previousElementSibling : item.nextElementSibling;
    if (!other) {
      if (live) live.textContent = title(item) + " is already " + (direction === "up" ? "first." : "last.");
      return;
    }
    if (direction === "up") list.insertBefore(item, other);
    else list.insertBefore(other, item);
    button.focus();
    moved(item);
  });

  // 1. drag and drop by the handle (the handle is the draggable element, so text in the
  // prompt's inputs stays selectable; the whole prompt is the drag image)
  list.addEventListener("dragstart", function (event) {
    const handle = event.target.closest && event.target.closest("[data-drag-handle]");
    if (!handle) { event.preventDefault(); return; }
    const item = handle.closest("li.preset-prompt");
    dragged = item;
    item.classList.add("is-dragged");
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", item.getAttribute("data-key"));
    if (event.dataTransfer.setDragImage) event.dataTransfer.setDragImage(item, 20, 20);
  });

  list.addEventListener("dragover", function (event) {
    if (!dragged) return;
    const item = event.target.closest && event.target.closest("li.preset-prompt");
    if (!item || item === dragged) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    const box = item.getBoundingClientRect();
    const after = event.clientY > box.top + box.height / 2;
    items().forEach(function (el) { el.classList.remove("drop-before", "drop-after"); });
    item.classList.add(after ? "drop-after" : "drop-before");
  });

  list.addEventListener("drop", function (event) {
    if (!dragged) return;
    const item = event.target.closest && event.target.closest("li.preset-prompt");
    event.preventDefault();
    if (item && item !== dragged) {
      const box = item.getBoundingClientRect();
      const after = event.clientY > box.top + box.height / 2;
      list.insertBefore(dragged, after ? item.nextElementSibling : item);
      moved(dragged);
    }
  });

  list.addEventListener("dragend", function () {
    items().forEach(function (el) { el.classList.remove("drop-before", "drop-after", "is-dragged"); });
    dragged = null;
  });

  // 4. and 5.
  list.addEventListener("change", function (event) {
    const item = event.target.closest && event.target.closest("li.preset-prompt");
    if (!item) return;
    if (event.target.matches("select[data-position]")) showDepth(item);
    if (event.target.matches("input[data-enabled]")) item.classList.toggle("is-disabled", !event.target.checked);
    markDirty();
  });

  form.addEventListener("input", function (event) {
    const item = event.target.closest && event.target.closest("li.preset-prompt");
    if (item && event.target.matches("input[data-name]")) {
      const el = item.querySelector(".preset-title");
      if (el) el.textContent = event.target.value || item.getAttribute("data-identifier");
    }
    markDirty();
  });

  form.addEventListener("submit", function () { dirty = false; });
  window.addEventListener("beforeunload", function (event) {
    if (dirty) { event.preventDefault(); event.returnValue = ""; }
  });

  items().forEach(showDepth);
})();
