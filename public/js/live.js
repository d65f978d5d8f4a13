// The role-play page (views/live/play.ejs): the lobby's clock, the conversation's live events (server-sent events,
// resumed after the last turn seen when the stream reconnects), whose turn it is and its timer, and sending a turn.
// Each turn is sent with a key of its own, kept in this tab until the server has it, so a turn sent as the connection
// or the server went down is sent again, and stored once. Pasting into the message box is refused (as Deliberate Lab's
// "bot protection" does); keys pressed and the time spent typing each turn are sent with it, as on the rating page.
// Its text is checked by the blinding tests like every other response a participant receives.
(function () {
  'use strict';
  var main = document.querySelector('main.live');
  if (!main) return;
  var needsCode = document.getElementById('needs-code');
  if (needsCode) needsCode.hidden = true;
  var phase = main.getAttribute('data-phase');
  var character = Number(main.getAttribute('data-character')) || 0;
  var playUrl = main.getAttribute('data-play-url');
  var doneUrl = main.getAttribute('data-done-url');
  var next = Number(main.getAttribute('data-next')) || 0;
  var deadline = Date.now() + (Number(main.getAttribute('data-seconds-left')) || 0) * 1000;
  var source = null;

  function clockText(seconds) {
    var s = Math.max(0, Math.floor(seconds));
    return Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0');
  }

  var waited = document.getElementById('waited');
  if (waited) {
    var since = Date.now() - Number(waited.getAttribute('data-waited')) * 1000;
    window.setInterval(function () {
      waited.textContent = clockText((Date.now() - since) / 1000);
    }, 1000);
  }

  var chatLog = document.getElementById('chat-log');
  var seen = {};
  if (chatLog) {
    var shown = chatLog.querySelectorAll('li[data-idx]');
    for (var i = 0; i < shown.length; i += 1) seen[shown[i].getAttribute('data-idx')] = true;
  }

  function addLine(idx, speaker, className, name, said) {
    if (!chatLog || seen[idx]) return;
    seen[idx] = true;
    var li = document.createElement('li');
    li.className = 'turn speaker-' + speaker + className;
    li.setAttribute('data-idx', String(idx));
    var who = document.createElement('span');
    who.className = 'name';
    who.textContent = name;
    var what = document.createElement('span');
    what.className = 'said';
    what.textContent = said;
    li.appendChild(who);
    li.appendChild(document.createTextNode(' '));
    li.appendChild(what);
    chatLog.appendChild(li);
    li.scrollIntoView({ block: 'nearest' });
  }

  function addTurn(ev) {
    if (ev.kind === 'speak') addLine(ev.idx, ev.speaker, '', ev.name + ':', ev.text);
    else addLine(ev.idx, ev.speaker, ' narration', ev.name, ev.kind === 'leave' ? 'left the conversation.' : ev.display);
  }

  var status = document.getElementById('turn-status');
  var sendButton = document.getElementById('send-turn');
  function renderStatus() {
    if (!status || !next) return;
    var left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
    status.textContent = next === character ? 'Your turn: ' + left + ' s left.' : "Your partner's turn (" + left + ' s left).';
    status.className = 'turn-status' + (next === character ? ' yours' : '');
    if (sendButton) sendButton.disabled = next !== character;
  }
  window.setInterval(renderStatus, 500);
  renderStatus();

  var form = document.getElementById('turn-form');
  var ended = document.getElementById('ended');
  function showEnded(message) {
    if (form) form.hidden = true;
    var report = document.querySelector('details.report');
    if (report) report.hidden = true;
    if (status) status.hidden = true;
    next = 0;
    if (ended) {
      ended.hidden = false;
      var text = document.getElementById('ended-message');
      if (text && message) text.textContent = message;
    }
    if (source) source.close();
  }

  function handle(ev) {
    if (ev.type === 'go') window.location.replace(ev.to === 'done' ? doneUrl : playUrl);
    else if (ev.type === 'turn') addTurn(ev);
    else if (ev.type === 'missed') addLine(ev.idx === undefined ? 'm' + Date.now() : ev.idx, ev.speaker, ' narration missed', ev.name, 'let the turn pass.');
    else if (ev.type === 'state') {
      next = ev.next;
      deadline = Date.now() + ev.secondsLeft * 1000;
      renderStatus();
    } else if (ev.type === 'ended') showEnded(ev.message);
    else if (ev.type === 'elsewhere') {
      showEnded('This study is now open in another window or tab. Please go on there.');
    }
  }

  if ((phase === 'lobby' || phase === 'playing') && window.EventSource) {
    source = new window.EventSource(main.getAttribute('data-events'));
    source.onmessage = function (message) {
      var ev;
      try {
        ev = JSON.parse(message.data);
      } catch {
        return;
      }
      if (ev.type === 'missed') ev.idx = message.lastEventId;
      handle(ev);
    };
  }

  if (!form) return;
  var box = document.getElementById('turn-text');
  var actionField = document.getElementById('turn-action');
  var note = document.getElementById('turn-note');
  var error = document.getElementById('turn-error');
  var signals = { keys: 0, typing_ms: 0, pastes: 0 };
  var firstKeyAt = null;
  var store = null;
  try {
    store = window.sessionStorage;
  } catch {
    store = null;
  }
  var pendingKey = 'live-pending:' + form.getAttribute('action') + ':' + character;

  function say(element, text) {
    if (!element) return;
    element.hidden = !text;
    element.textContent = text || '';
  }

  box.addEventListener('keydown', function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var now = Date.now();
    if (firstKeyAt === null) firstKeyAt = now;
    signals.keys += 1;
    signals.typing_ms = now - firstKeyAt;
  });
  function refusePaste(event) {
    event.preventDefault();
    signals.pastes += 1;
    say(note, 'Pasting is turned off in this conversation: please type your turn.');
  }
  box.addEventListener('paste', refusePaste);
  box.addEventListener('drop', refusePaste);
  actionField.addEventListener('change', function () {
    say(note, actionField.value === 'leave' ? 'Leaving ends the conversation for both of you.' : '');
  });

  function newKey() {
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    var hex = '';
    for (var b = 0; b < bytes.length; b += 1) hex += (bytes[b] < 16 ? '0' : '') + bytes[b].toString(16);
    return hex;
  }

  function remember(turn) {
    if (!store) return;
    try {
      if (turn) store.setItem(pendingKey, JSON.stringify(turn));
      else store.removeItem(pendingKey);
    } catch {
      // A full or refused storage only loses the resend after a reload.
    }
  }

  function post(turn, attempt) {
    var body = new URLSearchParams();
    body.set('rt', form.querySelector('input[name="rt"]').value);
    body.set('_csrf', form.querySelector('input[name="_csrf"]').value);
    body.set('key', turn.key);
    body.set('action', turn.action);
    body.set('text', turn.text);
    body.set('signals', JSON.stringify(turn.signals));
    if (sendButton) sendButton.disabled = true;
    window
      .fetch(form.getAttribute('action'), { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: body.toString(), credentials: 'same-origin' })
      .then(function (response) {
        return response.json().then(
          function (json) {
            return { status: response.status, json: json };
          },
          function () {
            return { status: response.status, json: {} };
          },
        );
      })
      .then(function (reply) {
        if (reply.status >= 500) throw new Error('server');
        remember(null);
        if (reply.status === 200) {
          if (box.value.trim().replace(/\s+/g, ' ') === turn.text) box.value = '';
          actionField.value = 'speak';
          say(note, '');
          say(error, '');
        } else say(error, reply.json.error || 'Your turn could not be sent. Please reload the page.');
        renderStatus();
      })
      .catch(function () {
        // No answer (the connection or the server is down): the same turn again, with the same key, a little later.
        say(error, 'Sending… (the connection is slow; your turn is kept and sent again)');
        window.setTimeout(function () {
          post(turn, attempt + 1);
        }, Math.min(8000, 500 * Math.pow(2, attempt)));
      });
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    if (next !== character) {
      say(error, 'It is not your turn yet: please wait for your partner.');
      return;
    }
    var action = actionField.value;
    var text = box.value.trim().replace(/\s+/g, ' ');
    if (action !== 'leave' && !text) {
      say(error, 'Write something before you send it.');
      return;
    }
    if (action === 'leave' && !window.confirm('Leave the conversation? It ends for both of you.')) return;
    var turn = { key: newKey(), action: action, text: action === 'leave' ? '' : text, signals: signals };
    signals = { keys: 0, typing_ms: 0, pastes: 0 };
    firstKeyAt = null;
    remember(turn);
    post(turn, 0);
  });

  var reportForm = document.getElementById('report-form');
  if (reportForm) {
    reportForm.addEventListener('submit', function (event) {
      if (!window.confirm('Report your partner? The conversation ends at once.')) event.preventDefault();
    });
  }

  // A turn sent just before the page was reloaded (or the server restarted) and never answered: sent again.
  if (store) {
    var kept;
    try {
      kept = JSON.parse(store.getItem(pendingKey) || 'null');
    } catch {
      kept = null;
    }
    if (kept && kept.key) post(kept, 0);
  }
})();
