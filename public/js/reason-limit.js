// The reason boxes' limit on the comparison page (issue 49): a live count just under each box, input stopped at the
// limit with the count saying so (and how much of a paste was left out), and a reason over the limit (restored after
// a reload or Back, or sent back by the server) said to be too long and not sent until it is shortened. Without this
// file a box takes any length, and the server refuses an over-long reason beside its box and keeps the text.
// The visible count is hidden from screen readers; a polite live region says the same once typing pauses, or at once
// when the limit binds. Loaded after rater.js, so a reason it restores is counted.
(function () {
  'use strict';
  var form = document.getElementById('judgment-form');
  if (!form) return;

  function format(n) {
    return n.toLocaleString('en-GB');
  }

  function watch(box) {
    var limit = Number(box.getAttribute('data-limit'));
    var line = document.getElementById(box.id + '-limit');
    var count = document.getElementById(box.id + '-count');
    var status = document.getElementById(box.id + '-status');
    if (!(limit > 0) || !line || !count || !status) return null;
    // What the box would hold had a paste fitted; the length the browser cut it to is then known at the input.
    var wanted = null;
    var left = 0;
    var timer = null;

    function words() {
      var n = box.value.length;
      var of = format(n) + ' of ' + format(limit) + ' characters';
      if (n > limit) return of + ': ' + format(n - limit) + ' too many. Please shorten your reason.';
      if (left > 0) return of + ': the limit. The last ' + format(left) + (left === 1 ? ' character' : ' characters') + ' you pasted did not fit and were left out.';
      if (n === limit) return of + ': the limit.';
      return of + '.';
    }
    function update(now) {
      var text = words();
      count.textContent = text;
      line.classList.toggle('at-limit', box.value.length >= limit || left > 0);
      window.clearTimeout(timer);
      timer = window.setTimeout(function () {
        status.textContent = text;
      }, now ? 0 : 1200);
    }

    // The browser stops typing and pasting at maxlength; a value already longer (restored) stays, to be shortened.
    box.setAttribute('maxlength', String(limit));
    box.addEventListener('paste', function (event) {
      var pasted = event.clipboardData ? event.clipboardData.getData('text').replace(/\r\n?/g, '\n') : '';
      wanted = box.value.length - (box.selectionEnd - box.selectionStart) + pasted.length;
    });
    box.addEventListener('input', function () {
      left = wanted !== null && wanted > box.value.length ? wanted - box.value.length : 0;
      wanted = null;
      update(left > 0 || box.value.length >= limit);
    });
    update(false);
    return { box: box, over: function () { return box.value.length > limit; }, update: update };
  }

  var watched = [];
  var boxes = form.querySelectorAll('textarea[data-limit]');
  for (var i = 0; i < boxes.length; i += 1) {
    var w = watch(boxes[i]);
    if (w) watched.push(w);
  }
  if (watched.length === 0) return;

  // A reason the server refused: the page opens at its box, where the message stands.
  var refused = form.querySelector('textarea[data-limit][aria-invalid="true"]');
  if (refused) refused.focus();

  form.addEventListener('submit', function (event) {
    for (var j = 0; j < watched.length; j += 1) {
      if (watched[j].over()) {
        event.preventDefault();
        watched[j].update(true);
        watched[j].box.focus();
        return;
      }
    }
  });
})();
