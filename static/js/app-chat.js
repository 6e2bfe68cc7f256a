// The player app's chat page: when the player leaves it (or hides the tab), what they saw
// is read, so "My chats" shows only replies that came after as new.
(function () {
  const root = document.getElementById("play");
  const form = document.getElementById("read-form");
  if (!root || !form || !root.dataset.readUrl) return;
  function markRead() {
    navigator.sendBeacon(root.dataset.readUrl, new FormData(form));
  }
  window.addEventListener("pagehide", markRead);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") markRead();
  });
})();
