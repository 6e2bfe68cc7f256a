// Console shell behaviour that would otherwise be inline handlers, which the
// Content-Security-Policy (script-src 'self') forbids: see docs/security.md.
//
// <form data-confirm="Question?">: ask before submitting; "Cancel" keeps the page as it is.
// The menu button (narrow screens, templates/base.html): opens and closes the site menu;
// Escape or a click elsewhere closes it.
// <select data-search> (roleplay/pickers.py) with more than a handful of choices: a search
// box in front of it hides the options that do not match every word typed (the chosen one
// stays); Enter picks the first match.
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    const form = event.target;
    const question = form instanceof HTMLFormElement && form.dataset.confirm;
    if (question && !window.confirm(question)) event.preventDefault();
  });

  function menu(open) {
    const bar = document.getElementById("topbar");
    const toggle = bar && bar.querySelector(".menu-toggle");
    if (!toggle) return;
    bar.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  }

  document.addEventListener("click", function (event) {
    const bar = document.getElementById("topbar");
    if (!bar) return;
    if (event.target.closest(".menu-toggle")) menu(!bar.classList.contains("open"));
    else if (!bar.contains(event.target)) menu(false);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") menu(false);
  });

  function filter(select, box, count) {
    const words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    let total = 0;
    for (const option of select.options) {
      if (!option.value) continue; // "Me", "Tenant default": always offered
      total += 1;
      const text = option.text.toLowerCase();
      const match = words.every((word) => text.includes(word));
      option.hidden = !match && !option.selected;
      if (match) shown += 1;
    }
    count.textContent = words.length ? shown + " of " + total : "";
  }

  const SEARCH_FROM = 7; // choices; a shorter list is read at a glance

  function searchable(select) {
    if (select.dataset.searchReady || select.options.length < SEARCH_FROM) return;
    select.dataset.searchReady = "1";
    const box = document.createElement("input");
    box.type = "search";
    box.className = "picker-search";
    box.placeholder = "Search…";
    box.setAttribute("aria-label", "Search the choices of " + (select.name || "this list"));
    box.disabled = select.disabled;
    const count = document.createElement("small");
    count.className = "picker-count muted";
    box.addEventListener("input", () => filter(select, box, count));
    box.addEventListener("keydown", function (event) {
      if (event.key !== "Enter") return;
      event.preventDefault(); // not the form's submit
      const first = [...select.options].find((option) => option.value && !option.hidden);
      if (first && !first.selected) {
        select.value = first.value;
        select.dispatchEvent(new Event("change", { bubbles: true }));
      }
    });
    select.before(box, count);
  }

  function enhance(root) {
    for (const select of root.querySelectorAll("select[data-search]")) searchable(select);
  }

  enhance(document);
  document.addEventListener("htmx:load", (event) => enhance(event.target));
})();
