// Console shell behaviour that would otherwise be inline handlers, which the
// Content-Security-Policy (script-src 'self') forbids: see docs/security.md.
//
// <form data-confirm="Question?">: ask before submitting; "Cancel" keeps the page as it is.
// The menu button (narrow screens, templates/base.html): opens and closes the site menu;
// Escape or a click elsewhere closes it.
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
})();
