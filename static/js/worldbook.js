// Worldbook editor helpers (no build step, no dependencies).
//
// 1. Packing. A book of a few hundred entries has more inputs than Django accepts in one
//    form post (DATA_UPLOAD_MAX_NUMBER_FIELDS), so on submit the editor's fields are sent as
//    one JSON field, "packed" ([[name, value], ...] in document order), from a detached
//    form. The server unpacks it (worldbook/views/editing.py). Without JavaScript the form
//    posts its fields as usual.
// 2. Unsaved edits. Leaving the editor after changing something asks for confirmation.
// 3. Enter in a one-line input does not submit the editor.
(function () {
  "use strict";

  function pack(form, submitter) {
    const data = new FormData(form, submitter || undefined);
    const pairs = [];
    let token = "";
    for (const [name, value] of data.entries()) {
      if (typeof value !== "string") continue;
      if (name === "csrfmiddlewaretoken") { token = value; continue; }
      pairs.push([name, value]);
    }
    const out = document.createElement("form");
    out.method = "post";
    out.action = form.getAttribute("action") || window.location.pathname;
    out.style.display = "none";
    for (const [name, value] of [["csrfmiddlewaretoken", token], ["packed", JSON.stringify(pairs)]]) {
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      input.value = value;
      out.appendChild(input);
    }
    document.body.appendChild(out);
    return out;
  }

  function setup(form) {
    let dirty = false;
    form.addEventListener("input", function () { dirty = true; });
    form.addEventListener("change", function () { dirty = true; });
    window.addEventListener("beforeunload", function (event) {
      if (dirty) { event.preventDefault(); event.returnValue = ""; }
    });
    // Enter in a one-line input must neither publish nor add a row by accident.
    form.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && event.target.tagName === "INPUT") event.preventDefault();
    });
    form.addEventListener("submit", function (event) {
      if (event.defaultPrevented) return;
      event.preventDefault();
      dirty = false;
      pack(form, event.submitter).submit();
    });
  }

  function init() {
    document.querySelectorAll("form[data-wb-pack]").forEach(setup);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
