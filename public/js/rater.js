// Rater pages work fully with this file turned off; it adds keyboard shortcuts (1, 2, 0 for tie), the lease
// warning, and measures active time: the time the page is visible and focused, written to the hidden active_ms field.
// Its text is checked by the blinding test like every other response a rater receives.
(function () {
  'use strict';
  var form = document.getElementById('judgment-form');
  var field = document.getElementById('active-ms');
  var activeMs = 0;
  var since = null;

  function isActive() {
    return document.visibilityState === 'visible' && document.hasFocus();
  }
  function update() {
    var now = Date.now();
    if (since !== null) activeMs += now - since;
    since = isActive() ? now : null;
    if (field) field.value = String(Math.round(activeMs));
  }

  if (form && field) {
    since = isActive() ? Date.now() : null;
    document.addEventListener('visibilitychange', update);
    window.addEventListener('focus', update);
    window.addEventListener('blur', update);
    form.addEventListener('submit', update);
  }

  if (form) {
    document.addEventListener('keydown', function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      var target = event.target;
      if (target && (target.tagName === 'TEXTAREA' || (target.tagName === 'INPUT' && target.type === 'text'))) return;
      var id = event.key === '1' ? 'choice-left' : event.key === '2' ? 'choice-right' : event.key === '0' ? 'choice-tie' : null;
      if (!id) return;
      var radio = document.getElementById(id);
      if (!radio || radio.disabled) return;
      radio.checked = true;
      radio.focus();
      event.preventDefault();
    });
  }

  var warning = document.getElementById('lease-warning');
  if (warning) {
    var expiresIn = Number(warning.getAttribute('data-expires-in'));
    var shownAt = Date.now();
    var check = function () {
      var left = expiresIn - (Date.now() - shownAt) / 1000;
      if (left <= 120) {
        warning.hidden = false;
        warning.textContent = left > 0
          ? 'Please submit your answer soon: this comparison is held for you only a little longer.'
          : 'Your time for this comparison has passed. You can still submit your answer.';
      }
    };
    if (expiresIn > 0) window.setInterval(check, 15000);
  }
})();
