// The writing page (views/write/write.ejs): turns added, removed and renumbered; the whole draft saved as the writer
// types (a second after they stop, and when the page is hidden), with a counter the server uses to drop older saves;
// a copy kept in this tab until the server has it, so a save lost to the network comes back on reload. The page names
// itself and sends the stored version it started from: when another tab or window changed the draft since, the server
// refuses the save (409) and the page asks its writer which version to keep, saving nothing until they choose.
// Pasting into a turn is refused (as on the role-play page); keys pressed and the time spent typing each turn are kept
// with it.
(function () {
  'use strict';
  var main = document.querySelector('main.write');
  if (!main) return;
  var needsCode = document.getElementById('needs-code');
  if (needsCode) needsCode.hidden = true;
  var list = document.getElementById('turns');
  var template = document.getElementById('turn-template');
  var addButton = document.getElementById('add-turn');
  var countStatus = document.getElementById('count-status');
  var saveStatus = document.getElementById('save-status');
  var pasteNote = document.getElementById('paste-note');
  var form = document.getElementById('submit-form');
  var draftField = document.getElementById('draft-field');
  var draftUrl = main.getAttribute('data-draft-url');
  var version = Number(main.getAttribute('data-version')) || 0;
  // The stored version this page knows (what it was given, then what it saved), and the page that saved it last.
  var base = version;
  var storedTab = main.getAttribute('data-tab') || '';
  var tab = newTabName();
  var conflict = document.getElementById('save-conflict');
  // While the writer has not chosen after a refused save: the version stored by the other page, else null.
  var otherVersion = null;
  var min = Number(main.getAttribute('data-min')) || 1;
  var max = Number(main.getAttribute('data-max')) || 100;
  var csrf = document.querySelector('input[name="_csrf"]');
  var rt = document.querySelector('input[name="rt"]');
  var store = null;
  try {
    store = window.sessionStorage;
  } catch {
    store = null;
  }
  var storeKey = 'write-draft:' + draftUrl + ':' + (rt ? rt.value.slice(0, 40) : '');
  var saveTimer = null;
  // Per turn: when this page first saw a key in it, and the typing time it had before (from the saved draft).
  var typingStart = new WeakMap();

  function newTabName() {
    var bytes = new Uint8Array(12);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map
      .call(bytes, function (b) {
        return ('0' + b.toString(16)).slice(-2);
      })
      .join('');
  }

  function turns() {
    return Array.prototype.slice.call(list.querySelectorAll('li.write-turn'));
  }

  function read(li) {
    return {
      speaker: Number(li.querySelector('.turn-speaker').value) === 2 ? 2 : 1,
      action: li.querySelector('.turn-action').value,
      text: li.querySelector('.turn-text').value,
      keys: Number(li.getAttribute('data-keys')) || 0,
      typing_ms: Number(li.getAttribute('data-typing')) || 0,
      pastes: Number(li.getAttribute('data-pastes')) || 0,
    };
  }

  function refresh() {
    var all = turns();
    all.forEach(function (li, i) {
      li.querySelector('.turn-number').textContent = String(i + 1);
      li.className = 'write-turn speaker-' + li.querySelector('.turn-speaker').value;
    });
    var spoken = all.filter(function (li) {
      return li.querySelector('.turn-action').value !== 'leave';
    }).length;
    countStatus.textContent = spoken + ' turn' + (spoken === 1 ? '' : 's') + ' written; at least ' + min + ', at most ' + max + '.';
    addButton.disabled = all.length >= max;
  }

  function addTurn(values) {
    var li = template.content.firstElementChild.cloneNode(true);
    var last = turns().slice(-1)[0];
    var speaker = values ? values.speaker : last ? (Number(last.querySelector('.turn-speaker').value) === 1 ? 2 : 1) : 1;
    li.querySelector('.turn-speaker').value = String(speaker);
    if (values) {
      li.querySelector('.turn-action').value = values.action;
      li.querySelector('.turn-text').value = values.text;
      li.setAttribute('data-keys', String(values.keys));
      li.setAttribute('data-typing', String(values.typing_ms));
      li.setAttribute('data-pastes', String(values.pastes));
    }
    list.appendChild(li);
    refresh();
    return li;
  }

  function keep(draft) {
    if (store) store.setItem(storeKey, JSON.stringify(draft));
    return draft;
  }

  function draftNow() {
    return { version: version, tab: tab, base: base, turns: turns().map(read) };
  }

  function snapshot() {
    version += 1;
    return keep(draftNow());
  }

  function showConflict(stored) {
    otherVersion = stored;
    saveStatus.textContent = '';
    conflict.hidden = false;
  }

  function settle(keepThis) {
    if (!keepThis) {
      if (store) store.removeItem(storeKey);
      window.location.reload();
      return;
    }
    // This page's turns replace the other version: saved as based on it.
    base = otherVersion;
    version = Math.max(version, otherVersion);
    otherVersion = null;
    conflict.hidden = true;
    save();
  }
  document.getElementById('keep-this').addEventListener('click', function () {
    settle(true);
  });
  document.getElementById('show-other').addEventListener('click', function () {
    settle(false);
  });

  function body(draft) {
    var params = new URLSearchParams();
    if (csrf) params.set('_csrf', csrf.value);
    if (rt) params.set('rt', rt.value);
    params.set('draft', JSON.stringify(draft));
    return params;
  }

  function save() {
    clearTimeout(saveTimer);
    saveTimer = null;
    if (otherVersion !== null) {
      keep(draftNow());
      return Promise.resolve();
    }
    var draft = snapshot();
    saveStatus.textContent = 'Saving…';
    return fetch(draftUrl, { method: 'POST', body: body(draft), credentials: 'same-origin' })
      .then(function (response) {
        return response.json().then(function (answer) {
          if (response.status === 409 && answer && answer.conflict) {
            showConflict(Number(answer.version) || 0);
            return;
          }
          if (!response.ok) throw new Error(answer && answer.error ? answer.error : 'The draft could not be saved.');
          base = Math.max(base, Number(answer.version) || 0);
          if (store && draft.version >= version) store.removeItem(storeKey);
          if (otherVersion === null) saveStatus.textContent = 'Saved.';
        });
      })
      .catch(function (error) {
        saveStatus.textContent = (error && error.message ? error.message : 'The draft could not be saved.') + ' It is kept in this tab and saved again as you write.';
      });
  }

  function saveSoon() {
    clearTimeout(saveTimer);
    saveTimer = setTimeout(save, 1000);
  }

  list.addEventListener('keydown', function (event) {
    if (!event.target.classList.contains('turn-text') || event.ctrlKey || event.metaKey || event.altKey) return;
    var li = event.target.closest('li.write-turn');
    var now = Date.now();
    if (!typingStart.has(li)) typingStart.set(li, { at: now, before: Number(li.getAttribute('data-typing')) || 0 });
    var start = typingStart.get(li);
    li.setAttribute('data-keys', String((Number(li.getAttribute('data-keys')) || 0) + 1));
    li.setAttribute('data-typing', String(start.before + (now - start.at)));
  });
  function refusePaste(event) {
    if (!event.target.classList || !event.target.classList.contains('turn-text')) return;
    event.preventDefault();
    var li = event.target.closest('li.write-turn');
    li.setAttribute('data-pastes', String((Number(li.getAttribute('data-pastes')) || 0) + 1));
    pasteNote.hidden = false;
    saveSoon();
  }
  list.addEventListener('paste', refusePaste);
  list.addEventListener('drop', refusePaste);
  list.addEventListener('input', saveSoon);
  list.addEventListener('change', function () {
    refresh();
    saveSoon();
  });
  list.addEventListener('click', function (event) {
    if (!event.target.classList.contains('turn-remove')) return;
    event.target.closest('li.write-turn').remove();
    refresh();
    saveSoon();
  });
  addButton.addEventListener('click', function () {
    addTurn(null).querySelector('.turn-text').focus();
    saveSoon();
  });
  document.addEventListener('visibilitychange', function () {
    if (document.visibilityState === 'hidden' && saveTimer !== null && otherVersion === null && navigator.sendBeacon) {
      clearTimeout(saveTimer);
      saveTimer = null;
      navigator.sendBeacon(draftUrl, body(snapshot()));
    }
  });
  form.addEventListener('submit', function () {
    clearTimeout(saveTimer);
    draftField.value = JSON.stringify(snapshot());
  });

  // A copy this tab kept of a save the server never confirmed comes back. It is saved again when nothing else changed
  // the draft since the copy's page last knew it (the stored version is the one it started from, or its page saved
  // it); otherwise the writer is asked which version to keep. A copy the page already shows is dropped.
  var kept;
  try {
    kept = store ? JSON.parse(store.getItem(storeKey) || 'null') : null;
  } catch {
    kept = null;
  }
  var shown = JSON.stringify(turns().map(read));
  if (kept && Array.isArray(kept.turns) && JSON.stringify(kept.turns) !== shown) {
    turns().forEach(function (li) {
      li.remove();
    });
    kept.turns.forEach(addTurn);
    var safe = kept.base === undefined ? kept.version > version : kept.base === version || (kept.tab && kept.tab === storedTab);
    if (safe) save();
    else showConflict(version);
  } else if (kept && store) store.removeItem(storeKey);
  if (turns().length === 0) addTurn(null);
  refresh();
})();
