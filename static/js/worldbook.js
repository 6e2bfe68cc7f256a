// The worldbook editor's small behaviours (no build step, no dependencies, no inline code:
// the console's Content-Security-Policy allows scripts from 'self' only).
//
// Everything that changes data is a plain form or an htmx attribute in the templates; this
// file only helps with the bulk bar:
// 1. "tick every entry on this page" and the count of ticked entries;
// 2. showing the parameter inputs of the chosen bulk action, and only those;
// 3. asking before a bulk delete or a discard, and refusing "ticked entries" with none ticked.
// The list is swapped by htmx, so listeners are delegated from the document and the bar is
// refreshed after every swap.
(function () {
  "use strict";

  function ticks(root) {
    return Array.prototype.slice.call(
      (root || document).querySelectorAll("input[type=checkbox][name=keys][form=wb-bulk]")
    );
  }

  function refresh() {
    const form = document.getElementById("wb-bulk");
    if (!form) return;
    const action = form.querySelector("select[name=action]");
    const chosen = action ? action.value : "";
    form.querySelectorAll("[data-wb-param]").forEach(function (el) {
      const wanted = el.getAttribute("data-wb-param").split(" ");
      const show = wanted.indexOf(chosen) !== -1;
      el.hidden = !show;
      el.querySelectorAll("input, select").forEach(function (input) { input.disabled = !show; });
    });
    const ticked = ticks().filter(function (box) { return box.checked; }).length;
    form.querySelectorAll("[data-wb-ticked]").forEach(function (el) { el.textContent = String(ticked); });
  }

  function scope(form) {
    const checked = form.querySelector("input[name=scope]:checked");
    return checked ? checked.value : "selection";
  }

  document.addEventListener("change", function (event) {
    const target = event.target;
    if (target.matches && target.matches("[data-wb-select-all]")) {
      ticks().forEach(function (box) { box.checked = target.checked; });
    }
    if (target.matches && target.matches("input[name=keys], #wb-bulk select[name=action]")) {
      if (target.name === "keys" && target.checked) {
        const selection = document.querySelector("#wb-bulk input[name=scope][value=selection]");
        if (selection) selection.checked = true;
      }
    }
    refresh();
  });

  document.addEventListener("submit", function (event) {
    const form = event.target;
    const question = form.getAttribute && form.getAttribute("data-wb-confirm");
    if (question && !window.confirm(question)) { event.preventDefault(); return; }
    if (!form.matches || !form.matches("[data-wb-bulk]")) return;
    const action = form.querySelector("select[name=action]").value;
    const count = scope(form) === "filter"
      ? Number(document.getElementById("wb-scope-count").textContent)
      : ticks().filter(function (box) { return box.checked; }).length;
    if (count === 0) {
      event.preventDefault();
      window.alert("Tick at least one entry, or choose all entries of the filter.");
      return;
    }
    if (action === "delete" && !window.confirm("Delete " + count + " entries and publish a new revision?")) {
      event.preventDefault();
    }
  });

  document.addEventListener("htmx:afterSwap", refresh);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", refresh);
  } else {
    refresh();
  }
})();
