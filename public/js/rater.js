// Rater pages work fully with this file turned off; it adds keyboard shortcuts (1, 2, 0 for tie, per question), the lease
// warning, and measures active time: the time the page is visible and focused, written to the hidden active_ms field.
// On the comparison page it also closes the profiles and shows one conversation at a time on a narrow screen, and
// keeps the chosen answers and the typed reasons across a reload (this tab only, keyed by the page's own address).
// It also writes what it measured while the comparison was open to the hidden `signals` field (pastes and pasted
// characters of the reasons, keys pressed and typing time in them, time hidden or unfocused, and on a phone whether an
// answer came before Conversation 2 was opened, and how the first question's choice was made: key 1, 2 or 0, a pointer
// or tap, or otherwise); the server checks it against its own times (issue 43).
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

  // Keys answer the question the rater is at: the one holding the focus, else the first one not answered yet. With
  // several questions (each its own fieldset), a key answer moves the focus on to the next question.
  var groups = form ? form.querySelectorAll('fieldset.choices') : [];
  function currentGroup() {
    var g;
    for (g = 0; g < groups.length; g += 1) if (groups[g].contains(document.activeElement)) return g;
    for (g = 0; g < groups.length; g += 1) if (!groups[g].querySelector('input[type="radio"]:checked')) return g;
    return groups.length - 1;
  }
  if (form && groups.length > 0) {
    document.addEventListener('keydown', function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      var target = event.target;
      if (target && (target.tagName === 'TEXTAREA' || (target.tagName === 'INPUT' && target.type === 'text'))) return;
      // A confidence scale (issue 53) takes its own number keys: arrows move within it, digits answer no question.
      if (target && target.closest && target.closest('fieldset.confidence')) return;
      var value = event.key === '1' ? 'left' : event.key === '2' ? 'right' : event.key === '0' ? 'tie' : null;
      if (!value) return;
      var at = currentGroup();
      var radio = groups[at].querySelector('input[type="radio"][value="' + value + '"]');
      if (!radio || radio.disabled) return;
      radio.checked = true;
      if (at === 0) signals.key = event.key;
      chosen();
      event.preventDefault();
      var next = at + 1 < groups.length ? groups[at + 1] : null;
      if (next) {
        var focusTo = next.querySelector('input[type="radio"]:checked') || next.querySelector('input[type="radio"]');
        if (focusTo) {
          focusTo.focus({ preventScroll: true });
          next.scrollIntoView({ block: 'nearest' });
          return;
        }
      }
      radio.focus();
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

  var narrow = window.matchMedia ? window.matchMedia('(max-width: 55.99rem)') : null;
  var oneAtATime = false;
  var seenSecond = false;

  // The profiles are open in the page, for readers without this file; on a phone they would push the
  // conversations two screens down, so they start closed there.
  if (narrow && narrow.matches) {
    var profiles = document.querySelectorAll('details.profile');
    for (var p = 0; p < profiles.length; p += 1) profiles[p].open = false;
  }

  var conversations = document.getElementById('conversations');
  var switches = document.querySelectorAll('.answer-bar .switch');
  function show(which, move) {
    conversations.setAttribute('data-show', which);
    if (which === '2') seenSecond = true;
    for (var s = 0; s < switches.length; s += 1) {
      switches[s].setAttribute('aria-current', switches[s].getAttribute('data-show') === which ? 'true' : 'false');
    }
    if (move) {
      var target = document.getElementById('conversation-' + which);
      if (target) {
        target.scrollIntoView();
        target.focus({ preventScroll: true });
      }
    }
  }
  if (conversations && switches.length === 2) {
    conversations.classList.add('one-at-a-time');
    oneAtATime = true;
    show('1', false);
    var movers = document.querySelectorAll('a[data-show]');
    for (var w = 0; w < movers.length; w += 1) {
      movers[w].addEventListener('click', function (event) {
        if (!narrow || !narrow.matches) return;
        event.preventDefault();
        show(this.getAttribute('data-show'), true);
      });
    }
  }

  // Signals (issue 43). An answer chosen on a phone before Conversation 2 was ever shown is recorded, and the rater
  // is asked to read it first; nothing is blocked.
  var signalsField = document.getElementById('signals');
  var nudge = document.getElementById('second-nudge');
  var openedAt = Date.now();
  var signals = { v: 1, pastes: 0, pasted: 0, keys: 0, typing_ms: 0, hidden_ms: 0, before_second: null, key: null };
  // How the first question's choice was made: the shortcut key above, else a pointer or tap, else 'other'.
  var pointerAt = 0;
  var firstKeyAt = null;
  function onPhone() {
    return oneAtATime && narrow && narrow.matches;
  }
  function chosen() {
    if (signals.before_second !== null || !onPhone()) return;
    signals.before_second = !seenSecond;
    if (!seenSecond && nudge) nudge.hidden = false;
  }
  if (form && signalsField) {
    var boxes = form.querySelectorAll('textarea');
    for (var b = 0; b < boxes.length; b += 1) {
      boxes[b].addEventListener('keydown', function (event) {
        if (event.ctrlKey || event.metaKey || event.altKey) return;
        var now = Date.now();
        if (firstKeyAt === null) firstKeyAt = now;
        signals.keys += 1;
        signals.typing_ms = now - firstKeyAt;
      });
      boxes[b].addEventListener('paste', function (event) {
        var text = event.clipboardData ? event.clipboardData.getData('text') : '';
        signals.pastes += 1;
        signals.pasted += text.length;
      });
    }
    form.addEventListener('pointerdown', function () {
      pointerAt = Date.now();
    });
    form.addEventListener('change', function (event) {
      if (!event.target || event.target.type !== 'radio') return;
      if (groups.length > 0 && groups[0].contains(event.target)) signals.key = Date.now() - pointerAt < 2000 ? 'pointer' : 'other';
      chosen();
    });
    form.addEventListener('submit', function () {
      if (signals.before_second === null && onPhone() && form.querySelector('input[type="radio"]:checked')) signals.before_second = !seenSecond;
      signals.hidden_ms = Math.max(0, Math.round(Date.now() - openedAt - activeMs));
      signalsField.value = JSON.stringify(signals);
    });
  }

  // The answer survives a reload: sessionStorage under the form's address, which carries only the assignment's
  // opaque token. What the server sent back (after a refused answer) wins over what was stored.
  if (form) {
    var key = 'answer:' + form.getAttribute('action');
    var radios = form.querySelectorAll('input[type="radio"]');
    var texts = form.querySelectorAll('textarea');
    var store = null;
    try {
      store = window.sessionStorage;
    } catch {
      store = null;
    }
    var save = function () {
      if (!store) return;
      var saved = { choices: {}, reasons: {} };
      for (var c = 0; c < radios.length; c += 1) if (radios[c].checked) saved.choices[radios[c].name] = radios[c].value;
      for (var t = 0; t < texts.length; t += 1) saved.reasons[texts[t].name] = texts[t].value;
      try {
        store.setItem(key, JSON.stringify(saved));
      } catch {
        // A full or refused storage only loses the convenience.
      }
    };
    if (store) {
      var saved;
      try {
        saved = JSON.parse(store.getItem(key) || 'null');
      } catch {
        saved = null;
      }
      var untouched = !form.querySelector('input[type="radio"]:checked');
      for (var u = 0; u < texts.length; u += 1) if (texts[u].value) untouched = false;
      if (saved && saved.choices && saved.reasons && untouched) {
        for (var r = 0; r < radios.length; r += 1) if (saved.choices[radios[r].name] === radios[r].value) radios[r].checked = true;
        for (var x = 0; x < texts.length; x += 1) if (typeof saved.reasons[texts[x].name] === 'string') texts[x].value = saved.reasons[texts[x].name];
      }
    }
    form.addEventListener('change', save);
    form.addEventListener('input', save);
    // The keyboard shortcuts set a choice without a change event.
    document.addEventListener('keyup', save);
  }
})();
