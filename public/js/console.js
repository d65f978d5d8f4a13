// Console live updates: every element with data-poll="URL" is refreshed from that JSON endpoint every few seconds,
// filling its [data-field="path"] descendants and <progress data-progress-value/max> bars. No manual reload.
// Also: copy buttons (data-copy="input id").
(function () {
  'use strict';
  var INTERVAL_MS = 3000;

  function valueAt(data, path) {
    // "a.b+c.d" sums several numeric paths (e.g. dialogues done + failed).
    if (path.indexOf('+') >= 0) {
      return path.split('+').reduce(function (sum, p) { return sum + Number(valueAt(data, p) || 0); }, 0);
    }
    return path.split('.').reduce(function (obj, key) { return obj === null || obj === undefined ? undefined : obj[key]; }, data);
  }

  function format(value, kind) {
    if (value === null || value === undefined) return '—';
    if (kind === 'percent') return (100 * value).toFixed(1) + '%';
    if (kind === 'seconds') return value + ' s';
    if (kind === 'cost') return Number(value).toFixed(4);
    if (kind === 'ci') return Array.isArray(value) ? '[' + (100 * value[0]).toFixed(1) + ', ' + (100 * value[1]).toFixed(1) + ']' : '—';
    return String(value);
  }

  function apply(root, data) {
    root.querySelectorAll('[data-field]').forEach(function (el) {
      var text = format(valueAt(data, el.getAttribute('data-field')), el.getAttribute('data-format'));
      if (el.textContent !== text) el.textContent = text;
    });
    root.querySelectorAll('progress[data-progress-value]').forEach(function (bar) {
      var max = Number(valueAt(data, bar.getAttribute('data-progress-max')) || 0);
      bar.max = Math.max(1, max);
      bar.value = Number(valueAt(data, bar.getAttribute('data-progress-value')) || 0);
    });
    root.querySelectorAll('[data-ci-bar]').forEach(function (bar) {
      var c = valueAt(data, bar.getAttribute('data-ci-bar')) || {};
      var rate = c.win_rate_a, ci = c.ci95;
      var point = bar.querySelector('.ci-point'), band = bar.querySelector('.ci-band');
      var pct = function (x) { return (100 * x).toFixed(1) + '%'; };
      if (point) { point.hidden = rate === null || rate === undefined; if (!point.hidden) point.style.left = pct(rate); }
      if (band) { band.hidden = !Array.isArray(ci); if (!band.hidden) { band.style.left = pct(ci[0]); band.style.width = pct(ci[1] - ci[0]); } }
      bar.setAttribute('aria-label', rate === null || rate === undefined ? 'no decisive judgments yet'
        : 'win rate of a ' + pct(rate) + (Array.isArray(ci) ? ', 95% interval ' + pct(ci[0]) + ' to ' + pct(ci[1]) : ''));
    });
    root.setAttribute('data-updated', new Date().toISOString());
  }

  function poll(root) {
    var url = root.getAttribute('data-poll');
    var timer = null;
    function tick() {
      fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
        .then(function (res) { return res.ok ? res.json() : null; })
        .then(function (data) { if (data) apply(root, data); })
        .catch(function () { /* keep the last figures; try again next tick */ })
        .then(function () { timer = setTimeout(tick, INTERVAL_MS); });
    }
    timer = setTimeout(tick, INTERVAL_MS);
    document.addEventListener('visibilitychange', function () {
      if (document.visibilityState === 'visible' && timer === null) tick();
    });
  }

  document.querySelectorAll('[data-poll]').forEach(poll);

  document.querySelectorAll('[data-copy]').forEach(function (button) {
    button.addEventListener('click', function () {
      var input = document.getElementById(button.getAttribute('data-copy'));
      if (!input) return;
      input.select();
      if (navigator.clipboard) navigator.clipboard.writeText(input.value).catch(function () {});
      button.textContent = 'Copied';
    });
  });
})();
