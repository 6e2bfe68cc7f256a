// Character and persona pages: behaviour the strict Content-Security-Policy keeps out of
// the templates.
//
// <div data-text-list> with a <button data-list-add>: adds an empty item (a copy of the
// last text area, emptied), so an alternate greeting can be added without saving first.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    const button = event.target.closest("[data-list-add]");
    if (!button) return;
    const list = button.closest("[data-text-list]");
    const items = list && list.querySelector("ol");
    const last = items && items.lastElementChild;
    if (!last) return;
    const copy = last.cloneNode(true);
    const area = copy.querySelector("textarea");
    area.value = "";
    area.id = list.id + "_" + items.children.length;
    items.appendChild(copy);
    area.focus();
  });
})();
