// The memory review queue's keyboard (a file: the Content-Security-Policy allows no inline
// script). Every action is a plain form that works without this; here j/k move focus
// between candidates and a/r press the focused candidate's Accept/Reject button. After an
// action the server sends the page back to #candidate-<next>, which gets the focus.
(function () {
  "use strict";
  const queue = document.getElementById("memory-queue");
  if (!queue) return;

  function candidates() {
    return Array.from(queue.querySelectorAll(".candidate"));
  }

  function focusCandidate(candidate) {
    if (!candidate) return;
    candidate.focus({ preventScroll: true });
    candidate.scrollIntoView({ block: "nearest" });
  }

  function current() {
    const active = document.activeElement;
    return active && active.closest ? active.closest(".candidate") : null;
  }

  function typing(target) {
    if (!(target instanceof Element)) return false;
    return target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName);
  }

  function press(candidate, selector) {
    const button = candidate && candidate.querySelector(selector);
    if (button && !button.disabled) button.click();
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (typing(event.target)) return;
    const all = candidates();
    if (!all.length) return;
    const here = current();
    const index = here ? all.indexOf(here) : -1;
    if (event.key === "j") {
      focusCandidate(all[Math.min(index + 1, all.length - 1)]);
    } else if (event.key === "k") {
      focusCandidate(all[Math.max(index - 1, 0)]);
    } else if (event.key === "a" && here) {
      press(here, "button.accept");
    } else if (event.key === "r" && here) {
      press(here, "button.reject");
    } else {
      return;
    }
    event.preventDefault();
  });

  // Where to start: the candidate named by the URL's #candidate-<id> (the next one after an
  // action), the one a refused action was about, else the first when a target was named.
  const wanted = window.location.hash.startsWith("#candidate-")
    ? window.location.hash.slice(1)
    : queue.dataset.focus
      ? "candidate-" + queue.dataset.focus
      : "";
  if (wanted) {
    focusCandidate(document.getElementById(wanted) || candidates()[0]);
  }
})();
