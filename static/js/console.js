// Console shell behaviour that would otherwise be inline handlers, which the
// Content-Security-Policy (script-src 'self') forbids: see docs/security.md.
//
// <form data-confirm="Question?">: ask before submitting; "Cancel" keeps the page as it is.
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    const form = event.target;
    const question = form instanceof HTMLFormElement && form.dataset.confirm;
    if (question && !window.confirm(question)) event.preventDefault();
  });
})();
