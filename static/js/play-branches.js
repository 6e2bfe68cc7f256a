// The play page's branch controls (docs/branches.md): "Branch from here" posts the message
// to the branch door and the browser follows to the new branch's page; another alternative
// of an older reply (or of one shared with the parent) branches the same way, with the
// alternative; "Checkpoint" opens an inline form that names the message. These are plain
// form posts, not socket frames: each ends on another page (or this one read again).

const branchTemplate = document.getElementById("branch-template");
const bookmarkTemplate = document.getElementById("bookmark-template");

/** Post a branch at `li`'s message; with `alternative`, that alternative of it instead. */
export function branchAt(li, alternative) {
  if (!branchTemplate) return;
  const form = branchTemplate.content.firstElementChild.cloneNode(true);
  form.elements.message_id.value = li.dataset.id;
  form.elements.alternative.value = alternative === undefined ? "" : String(alternative);
  document.body.append(form);
  form.submit();
}

/** The inline form that names `li`'s message. */
export function openBookmark(li) {
  if (!bookmarkTemplate || li.querySelector(".msg-bookmark-form")) return;
  const form = bookmarkTemplate.content.firstElementChild.cloneNode(true);
  form.elements.message_id.value = li.dataset.id;
  li.querySelector(".msg-body").append(form);
  form.elements.name.focus();
}

export function closeBookmark(li) {
  const form = li.querySelector(".msg-bookmark-form");
  if (form) form.remove();
}
