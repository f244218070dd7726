// SPDX-License-Identifier: Apache-2.0
// page.js - the live page's script (vramz serve, GET /; livepage.c).
// Reads /api/v1/events (hello with the history, a snapshot a tick, the
// findings when they change) and draws GPUs, charts, findings and the
// process table; gpuview.js, run after it in the same script, draws the
// detail view of one GPU through window.vramzPage (P below).  Every string from the data goes through text(): it
// sets textContent, never markup, with control and bidi characters shown
// as escapes; no handler is inline (the CSP would refuse one).
'use strict';
(function () {
  var $ = function (id) { return document.getElementById(id); };
  var st = { interval: 1000, historyMs: 300000, hist: {}, snap: null, findings: [],
    last: 0, sortKey: 'used_bytes', sortAsc: false, cards: {}, seenIds: null, colors: null };
  var CTRL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

  // data as text: control and bidirectional characters made visible
  function clean(s) {
    if (s === null || s === undefined) return '';
    return String(s).replace(CTRL, function (c) {
      return '\\u' + ('000' + c.charCodeAt(0).toString(16)).slice(-4);
    });
  }
  function text(node, s) { node.textContent = clean(s); return node; }
  function el(tag, cls, s) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (s !== undefined) text(e, s);
    return e;
  }
  function bytes(b) {
    if (b === null || b === undefined) return '-';
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(b < 10 ? 2 : 1) : String(b)) + ' ' + u[i];
  }
  function num(v, unit) { return v === null || v === undefined ? '-' : v + unit; }
  function span(ms) {
    return ms >= 120000 ? Math.round(ms / 60000) + ' min' : Math.round(ms / 1000) + ' s';
  }
  function watts(mw) { return Math.round(mw / 1000) + ' W'; }
  // a sensor cell's bytes: three figures at most, so four fit a card
  function cbytes(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(b < 10 ? 2 : b < 100 ? 1 : 0) : String(Math.round(b))) + ' ' + u[i];
  }
  function rate(b) { return cbytes(b) + '/s'; }
  function unit(u) { return function (v) { return (Math.round(v * 10) / 10) + u; }; }

  // The range a memory chart shows: the used range with a margin, not 0 to
  // the total (issue 40).  The same rule as src/format/zoom.c's
  // zoom_range(), which top and the report use; t4040 checks the two agree.
  function niceUp(raw) {
    if (!(raw > 0)) return 1;
    var e = 1, m = [1, 2, 2.5, 5, 10];
    while (e * 10 <= raw) e *= 10;
    while (e > raw) e /= 10;
    for (var i = 0; i < m.length; i++) if (m[i] * e >= raw * (1 - 1e-9)) return m[i] * e;
    return 10 * e;
  }
  function zoomRange(min, max, total, minUnits) {
    if (!(max >= min)) return { lo: 0, hi: total > 0 ? total : 1, atTotal: total > 0 };
    var floorSpan = Math.max(total > 0 ? total * 0.01 : 0, minUnits);
    var span = max - min, pad = span / 10;
    if (span + 2 * pad < floorSpan) pad = (floorSpan - span) / 2;
    var a = min - pad, b = max + pad;
    if (a < 0) { b -= a; a = 0; }
    var step = niceUp((b - a) / 4);
    a = Math.floor(a / step + 1e-9) * step;
    b = Math.ceil(b / step - 1e-9) * step;
    if (total > 0 && b >= total * 0.9) return { lo: a < total ? a : 0, hi: total, atTotal: true };
    return { lo: a, hi: b, atTotal: false };
  }
  window.vramzZoomRange = zoomRange; // for the tests: one rule with zoom.c
  function gib(v) { var x = v / 1073741824; return (x >= 100 || x === Math.round(x) ? x.toFixed(0) : x.toFixed(1)) + ' GiB'; }

  // The sensors of a GPU, in the order GPU-Z lists them; a row only for a
  // sensor the sample has (a key absent or null: not reported).
  var SENSORS = [
    { k: 'mem_used_bytes', t: 'mem used', f: cbytes },
    { k: 'mem_reserved_bytes', t: 'mem reserved', f: cbytes },
    { k: 'util_gpu_pct', t: 'GPU load', f: unit(' %'), u: '%' },
    { k: 'util_mem_pct', t: 'mem load', f: unit(' %'), u: '%' },
    { k: 'temp_c', t: 'temp', f: unit(' \u00b0C'), u: '\u00b0C' },
    { k: 'temp_mem_c', t: 'mem temp', f: unit(' \u00b0C'), u: '\u00b0C' },
    { k: 'power_mw', t: 'power', f: watts, u: 'W', s: 0.001 },
    { k: 'clock_sm_mhz', t: 'SM clock', f: unit(' MHz'), u: 'MHz' },
    { k: 'clock_mem_mhz', t: 'mem clock', f: unit(' MHz'), u: 'MHz' },
    { k: 'fan_pct', t: 'fan', f: unit(' %'), u: '%' },
    { k: 'pcie_tx_bytes_per_s', t: 'PCIe TX', f: rate },
    { k: 'pcie_rx_bytes_per_s', t: 'PCIe RX', f: rate }];
  // min / max / avg of a sensor with a unit of its own: the number alone
  // (the unit is in its "now"), so four figures fit a card
  function bare(s, v) { return s.u ? String(Math.round(v * (s.s || 1) * 10) / 10) : s.f(v); }

  // the theme's colours, for the canvases (CSS variables)
  function colors() {
    if (st.colors) return st.colors;
    var cs = getComputedStyle(document.documentElement), c = {};
    ['used', 'util', 'line', 'mute', 'crit', 'warn', 'info', 'fg', 'fill', 'rsv',
      'p0', 'p1', 'p2', 'p3', 'p4', 'p5'].forEach(function (k) {
      c[k] = cs.getPropertyValue('--' + k).trim();
    });
    return (st.colors = c);
  }

  function iso(ms) { return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC'); }

  // what gpuview.js (the detail view of one GPU, after this script) uses;
  // it sets P.detail, which this script calls on each event
  var P = window.vramzPage = { st: st, el: el, text: text, clean: clean, colors: colors,
    zoomRange: zoomRange, niceUp: niceUp, cbytes: cbytes, span: span, iso: iso, gib: gib, detail: null };

  // ---- GPUs ----
  function card(g) {
    var c = st.cards[g.index];
    if (c) return c;
    c = { root: el('article', 'gpu') };
    var h = el('h3');
    // the name opens the GPU's detail view (gpuview.js)
    c.name = el('button', 'name open');
    c.name.type = 'button';
    c.name.dataset.gpu = g.index;
    c.name.setAttribute('aria-haspopup', 'dialog');
    c.name.title = 'all sensors of this GPU, large';
    c.badge = el('span', 'badge', 'lost');
    h.appendChild(c.name); h.appendChild(c.badge);
    c.root.appendChild(h);
    var bar = el('div', 'bar');
    c.r = el('div', 'r'); c.u = el('div', 'u');
    bar.appendChild(c.r); bar.appendChild(c.u);
    c.root.appendChild(bar);
    c.mem = el('div', 'mem');
    c.root.appendChild(c.mem);
    c.health = el('div', 'health');
    c.health.hidden = true;
    c.root.appendChild(c.health);
    var f = el('div', 'figs');
    c.figs = {};
    ['util', 'temp', 'power', 'pcie'].forEach(function (k) {
      var d = el('div'); d.appendChild(el('small', '', k === 'pcie' ? 'PCIe' : k));
      c.figs[k] = el('span'); d.appendChild(c.figs[k]); f.appendChild(d);
    });
    c.root.appendChild(f);
    c.canvas = el('canvas');
    c.canvas.setAttribute('role', 'img');
    c.canvas.setAttribute('aria-label', 'memory and utilization history');
    c.root.appendChild(c.canvas);
    var lg = el('div', 'legend');
    lg.appendChild(el('span', 'lu', '\u25A0 memory used '));
    lg.appendChild(el('span', 'lt', '\u2014 utilization '));
    c.span = el('span');
    lg.appendChild(c.span);
    c.scale = el('span', 'scale');
    lg.appendChild(c.scale);
    c.root.appendChild(lg);
    // GPU-Z's sensor tab: a row a sensor, its sparkline, now / min / max / avg
    var det = el('details', 'sensors');
    det.open = true;
    det.appendChild(el('summary', '', 'sensors'));
    var tb = el('table', 'sens');
    var hd = el('tr');
    ['sensor', 'history', 'now', 'min', 'max', 'avg'].forEach(function (t, i) {
      var th = el('th', i > 1 ? 'n ' + t : '', t);
      th.scope = 'col';
      hd.appendChild(th);
    });
    var th0 = el('thead'); th0.appendChild(hd); tb.appendChild(th0);
    c.sbody = el('tbody');
    tb.appendChild(c.sbody);
    det.appendChild(tb);
    c.root.appendChild(det);
    c.rows = {};
    $('gpus').appendChild(c.root);
    st.cards[g.index] = c;
    return c;
  }

  function drawGpu(g) {
    var c = card(g);
    text(c.name, 'GPU ' + g.index + ' \u00b7 ' + (g.name || '?'));
    c.root.classList.toggle('lost', !!g.lost);
    c.badge.hidden = !g.lost;
    var tot = g.mem_total_bytes || 0;
    var pr = tot ? 100 * (g.mem_reserved_bytes || 0) / tot : 0;
    var pu = tot ? 100 * (g.mem_used_bytes || 0) / tot : 0;
    c.r.style.width = pr + '%';
    c.u.style.left = pr + '%';
    c.u.style.width = pu + '%';
    text(c.mem, g.lost ? 'fell off the bus: no reading' :
      'used ' + bytes(g.mem_used_bytes) + ' \u00b7 rsv ' + bytes(g.mem_reserved_bytes) +
      ' \u00b7 free ' + bytes(g.mem_free_bytes) + ' / ' + bytes(g.mem_total_bytes));
    var hh = health(g);
    c.health.hidden = !hh.known || !!g.lost;
    c.health.className = 'health ' + hh.level;
    text(c.health, 'VRAM health: ' + hh.text);
    text(c.figs.util, num(g.util_gpu_pct, ' %'));
    text(c.figs.temp, num(g.temp_c, ' \u00b0C'));
    text(c.figs.power, g.power_mw === null || g.power_mw === undefined ? '-' :
      Math.round(g.power_mw / 1000) + (g.power_limit_mw ? '/' + Math.round(g.power_limit_mw / 1000) : '') + ' W');
    text(c.figs.pcie, g.pcie_gen ? g.pcie_gen + '.0 x' + (g.pcie_width || '?') : '-');
    chart(c, g);
    sensors(c, g);
  }

  // VRAM health in the words and order of `vramz status`'s HEALTH column
  // (src/cmd/cmd-status.c): the gravest first; "ok" when every reading the
  // GPU gives is clean; unknown (no line) when it gives none
  function health(g) {
    var out = [], bad = false, known = false;
    function has(k) {
      if (g[k] === null || g[k] === undefined) return false;
      known = true;
      return true;
    }
    if (has('remap_failure') && g.remap_failure) { out.push('REMAP FAILED'); bad = true; }
    if (has('ecc_uncorrected_volatile') && g.ecc_uncorrected_volatile) {
      out.push('UNCORR ECC ' + g.ecc_uncorrected_volatile); bad = true;
    }
    if (has('xid_events') && g.xid_events && g.xid_last) { out.push('Xid ' + g.xid_last); bad = true; }
    if (has('remap_pending') && g.remap_pending) out.push('remap pending');
    if (has('retired_pending') && g.retired_pending) out.push('retire pending');
    if (has('ecc_corrected_volatile') && g.ecc_corrected_volatile) out.push('ECC ' + g.ecc_corrected_volatile);
    return { known: known, text: out.length ? out.join(', ') : 'ok', level: bad ? 'bad' : out.length ? 'warn' : 'good' };
  }

  // One sensor row: created when the GPU first reports the sensor.
  function sensorRow(c, s) {
    var r = c.rows[s.k];
    if (r) return r;
    r = { tr: el('tr') };
    r.tr.dataset.sensor = s.k;
    var th = el('th', '', s.t); th.scope = 'row';
    if (s.u) th.title = s.t + ' (' + s.u + ')';
    r.tr.appendChild(th);
    var td = el('td', 'spark');
    r.cv = el('canvas');
    r.cv.setAttribute('role', 'img');
    r.cv.setAttribute('aria-label', s.t + ' history');
    td.appendChild(r.cv);
    r.tr.appendChild(td);
    ['now', 'min', 'max', 'avg'].forEach(function (k) { r[k] = el('td', 'n ' + k); r.tr.appendChild(r[k]); });
    // in SENSORS' order whatever order they first came in
    var order = SENSORS.map(function (x) { return x.k; }), at = order.indexOf(s.k), next = null;
    Array.prototype.some.call(c.sbody.children, function (tr) {
      if (order.indexOf(tr.dataset.sensor) > at) { next = tr; return true; }
      return false;
    });
    c.sbody.insertBefore(r.tr, next);
    return (c.rows[s.k] = r);
  }

  function sensors(c, g) {
    var h = st.hist[g.index];
    if (!h) return;
    SENSORS.forEach(function (s) {
      var v = h.s[s.k];
      if (!v || !v.some(function (x) { return x !== null; })) return;
      var r = sensorRow(c, s), n = 0, sum = 0, lo = Infinity, hi = -Infinity;
      v.forEach(function (x) { if (x === null) return; n++; sum += x; if (x < lo) lo = x; if (x > hi) hi = x; });
      var now = g[s.k];
      set(r, 'now', now === null || now === undefined || g.lost ? '-' : s.f(now));
      set(r, 'min', bare(s, lo)); set(r, 'max', bare(s, hi)); set(r, 'avg', bare(s, sum / n));
      // drawn again when what it shows changed: a new value, its range, or
      // the window moved a pixel (8 GPUs x 12 sparklines a tick otherwise)
      var t1 = h.t[h.t.length - 1], w = r.cv.clientWidth || 100;
      var key = [v.length, v[v.length - 1], lo, hi, w].join('|');
      if (key !== r.key || (t1 - r.drawnT1) / st.historyMs * w >= 1) {
        spark(r.cv, h.t, v, lo, hi);
        r.key = key; r.drawnT1 = t1;
      }
    });
  }
  // a cell's text, written only when it changed (no layout work otherwise)
  function set(r, k, s) {
    if (r['_' + k] === s) return;
    r['_' + k] = s;
    text(r[k], s);
  }

  function spark(cv, t, v, lo, hi) {
    var w = cv.clientWidth || 100, ht = cv.clientHeight || 18, dpr = window.devicePixelRatio || 1;
    if (cv.width !== Math.round(w * dpr)) { cv.width = Math.round(w * dpr); cv.height = Math.round(ht * dpr); }
    var x = cv.getContext('2d'), col = colors();
    x.setTransform(dpr, 0, 0, dpr, 0, 0);
    x.clearRect(0, 0, w, ht);
    if (!t.length) return;
    var t1 = t[t.length - 1], t0 = t1 - st.historyMs, span = hi - lo || 1;
    x.strokeStyle = col.used; x.lineWidth = 1.2; x.beginPath();
    var open = false;
    for (var i = 0; i < t.length; i++) {
      if (v[i] === null) { open = false; continue; }
      var px = (t[i] - t0) / st.historyMs * w, py = ht - 1.5 - (ht - 3) * (v[i] - lo) / span;
      if (hi === lo) py = ht / 2;
      if (!open) { x.moveTo(px, py); open = true; } else x.lineTo(px, py);
    }
    x.stroke();
  }

  function chart(c, g) {
    var h = st.hist[g.index], cv = c.canvas, col = colors();
    var w = cv.clientWidth || 300, ht = cv.clientHeight || 90, dpr = window.devicePixelRatio || 1;
    if (cv.width !== Math.round(w * dpr)) { cv.width = Math.round(w * dpr); cv.height = Math.round(ht * dpr); }
    var x = cv.getContext('2d');
    x.setTransform(dpr, 0, 0, dpr, 0, 0);
    x.clearRect(0, 0, w, ht);
    x.strokeStyle = col.line; x.lineWidth = 1;
    for (var q = 0; q <= 4; q++) { x.beginPath(); x.moveTo(0, 0.5 + q * (ht - 1) / 4); x.lineTo(w, 0.5 + q * (ht - 1) / 4); x.stroke(); }
    if (!h || !h.t.length) return;
    var t1 = h.t[h.t.length - 1], t0 = t1 - st.historyMs;
    var px = function (t) { return (t - t0) / st.historyMs * w; };
    var tot = g.mem_total_bytes || 0, i, min = Infinity, max = -Infinity;
    for (i = 0; i < h.t.length; i++) {
      if (h.used[i] === null) continue;
      if (h.used[i] < min) min = h.used[i];
      if (h.used[i] > max) max = h.used[i];
    }
    // the used range, or 0 .. the total when the page is asked to (z)
    var G = 1073741824, known = max >= min;
    var z = st.zoomTotal || !tot ? { lo: 0, hi: tot || (known && max) || 1, atTotal: !!tot }
      : zoomRange(min / G, max / G, tot / G, 0.25);
    var lo = st.zoomTotal || !tot ? z.lo : z.lo * G, hi = st.zoomTotal || !tot ? z.hi : (z.atTotal ? tot : z.hi * G);
    var ym = function (v) { return ht - ht * Math.max(0, Math.min(1, (v - lo) / (hi - lo))); };
    c.canvas.dataset.lo = lo; c.canvas.dataset.hi = hi;
    x.fillStyle = col.fill; x.strokeStyle = col.used;
    x.beginPath();
    var open = false;
    for (i = 0; i < h.t.length; i++) {
      if (h.used[i] === null) continue;
      if (!open) { x.moveTo(px(h.t[i]), ht); open = true; }
      x.lineTo(px(h.t[i]), ym(h.used[i]));
    }
    if (open) { x.lineTo(px(t1), ht); x.closePath(); x.fill(); }
    if (z.atTotal && tot) { // the total, a line where it is in view
      x.strokeStyle = col.crit; x.lineWidth = 1; x.setLineDash([4, 3]);
      x.beginPath(); x.moveTo(0, 0.5); x.lineTo(w, 0.5); x.stroke(); x.setLineDash([]);
    }
    x.strokeStyle = col.util; x.lineWidth = 1.5; x.beginPath(); open = false;
    for (i = 0; i < h.t.length; i++) {
      if (h.util[i] === null) { open = false; continue; }
      var yu = ht - ht * h.util[i] / 100;
      if (!open) { x.moveTo(px(h.t[i]), yu); open = true; } else x.lineTo(px(h.t[i]), yu);
    }
    x.stroke();
    // findings, where they began
    st.findings.forEach(function (f) {
      if (f.gpu !== g.index) return;
      var tf = Date.parse(f.first_seen);
      if (!(tf >= t0)) tf = t0;
      var xf = Math.round(px(tf)) + 0.5;
      x.strokeStyle = f.severity === 'critical' ? col.crit : f.severity === 'warning' ? col.warn : col.info;
      x.lineWidth = 2; x.beginPath(); x.moveTo(xf, 0); x.lineTo(xf, ht); x.stroke();
      x.fillStyle = x.strokeStyle; x.beginPath(); x.moveTo(xf - 5, 0); x.lineTo(xf + 5, 0); x.lineTo(xf, 7); x.fill();
    });
    // the scale: memory's range on the left (its foot is not 0 when zoomed),
    // utilization's 100 % on the right, the span below
    x.fillStyle = col.mute; x.font = '10px system-ui, sans-serif';
    x.textBaseline = 'top'; x.textAlign = 'left';
    if (tot || known) { // a lost GPU has no memory to scale
      x.fillText(z.atTotal && tot ? 'total ' + gib(hi) : gib(hi), 2, 2);
      x.textBaseline = 'bottom'; x.fillText(gib(lo), 2, ht - 2);
    }
    x.textBaseline = 'bottom';
    x.textAlign = 'center'; x.fillText('-' + span(st.historyMs), w / 2, ht - 2);
    x.textAlign = 'right'; x.fillText('now', w - 2, ht - 2);
    x.textBaseline = 'top'; x.fillText('100%', w - 2, 2);
    text(c.span, '\u00b7 last ' + span(st.historyMs));
    text(c.scale, (z.atTotal && !lo) || !tot ? '' : ' \u00b7 memory ' + gib(lo) + '\u2013' + gib(hi) +
      (z.atTotal ? '' : ' of ' + gib(tot)));
    c.canvas.setAttribute('aria-label', 'memory used ' + gib(lo) + ' to ' + gib(hi) +
      (z.atTotal ? ' (the total at the top)' : ' (total ' + gib(tot) + ', above)') + ' and utilization, last ' + span(st.historyMs));
  }

  // ---- findings ----
  var SEV = [['critical', 'Critical'], ['warning', 'Warnings'], ['info', 'Info']];
  function findingItem(f) {
    var li = el('li', f.severity);
    li.dataset.kind = clean(f.kind);
    var head = el('div');
    head.appendChild(el('span', 'sev', f.severity));
    head.appendChild(el('span', 'summary', f.summary));
    li.appendChild(head);
    var who = [f.kind];
    if (f.gpu !== null) who.push('GPU ' + f.gpu);
    if (f.pid !== null) who.push('pid ' + f.pid + (f.comm ? ' (' + f.comm + ')' : ''));
    who.push('since ' + iso(Date.parse(f.first_seen)));
    li.appendChild(el('div', 'legend', who.join(' \u00b7 ')));
    if (f.advice) li.appendChild(el('div', 'advice', f.advice));
    return li;
  }
  // grouped by severity, the worst first; INFO folded (seven of them
  // pushed the processes below the fold), its count in the summary
  function drawFindings() {
    var box = $('findings');
    var openInfo = box.querySelector('details.info');
    openInfo = openInfo && openInfo.open;
    box.textContent = '';
    if (!st.findings.length) { box.appendChild(el('p', 'none', 'none')); return; }
    SEV.forEach(function (s) {
      var fs = st.findings.filter(function (f) { return f.severity === s[0]; });
      if (!fs.length) return;
      var ul = el('ul');
      fs.forEach(function (f) { ul.appendChild(findingItem(f)); });
      if (s[0] === 'info') {
        var d = el('details', 'group info');
        d.open = !!openInfo;
        d.appendChild(el('summary', '', s[1] + ' (' + fs.length + ')'));
        d.appendChild(ul);
        box.appendChild(d);
      } else {
        var sec = el('div', 'group ' + s[0]);
        sec.appendChild(el('h3', '', s[1] + ' (' + fs.length + ')'));
        sec.appendChild(ul);
        box.appendChild(sec);
      }
    });
  }
  // a polite word for a screen reader on each finding new since the page
  // opened (the ones there at first are the page itself)
  function announce(fs) {
    var ids = {};
    fs.forEach(function (f) { ids[f.id] = 1; });
    if (st.seenIds) {
      var fresh = fs.filter(function (f) { return !st.seenIds[f.id]; });
      if (fresh.length) {
        text($('announce'), fresh.map(function (f) {
          return 'New ' + f.severity + ' finding: ' + f.summary;
        }).join('. '));
      }
    }
    st.seenIds = ids;
  }

  // ---- processes ----
  var COLS = [
    { k: 'pid', t: 'PID', n: 1 }, { k: 'user', t: 'User' }, { k: 'gpu', t: 'GPU', n: 1 },
    { k: 'used_bytes', t: 'VRAM', n: 1, f: bytes }, { k: 'sm_pct', t: 'SM %', n: 1 },
    { k: 'job', t: 'Job', c: 'hide-narrow' }, { k: 'command', t: 'Command', c: 'cmd' }];
  var TORCH = [
    { k: 't_alloc', t: 'Torch alloc', n: 1, f: bytes }, { k: 't_rsv', t: 'Torch rsv', n: 1, f: bytes },
    { k: 'outside_allocator_bytes', t: 'Outside', n: 1, f: bytes }, { k: 't_ooms', t: 'OOMs', n: 1 }];
  function row(p) {
    var t = p.torch || {};
    return { pid: p.pid, user: p.user, gpu: p.gpu, used_bytes: p.used_bytes, sm_pct: p.sm_pct,
      job: p.slurm_job ? 'slurm:' + p.slurm_job
        : p.pod && p.namespace ? p.namespace + '/' + p.pod + (p.container_name ? ' (' + p.container_name + ')' : '')
        : p.pod_uid ? 'pod:' + p.pod_uid : p.container,
      command: p.command || p.comm || (p.visible === false ? '(not visible from here)' : ''),
      t_alloc: t.allocated_bytes, t_rsv: t.reserved_bytes, t_ooms: t.ooms,
      outside_allocator_bytes: p.outside_allocator_bytes, parts: p.outside_parts, torch: !!p.torch };
  }
  // where the memory outside the allocator appeared, as the agent saw it
  // (issue 37): the parts it told, largest first, then "other"
  function partsText(o) {
    if (!o) return '';
    var names = { context: 'CUDA context', libraries: 'CUDA libraries', nccl: 'NCCL' };
    var ps = ['context', 'libraries', 'nccl'].filter(function (k) { return o[k] > 0; });
    ps.sort(function (a, b) { return o[b] - o[a]; });
    var out = ps.map(function (k) {
      var n = o.nccl_communicators;
      return names[k] + ' ' + bytes(o[k]) +
        (k === 'nccl' ? ' (' + n + ' communicator' + (n === 1 ? '' : 's') + ')' : '');
    });
    if (o.other > 0) out.push('other ' + bytes(o.other));
    return out.join(' \u00b7 ');
  }
  function cmp(a, b) {
    var k = st.sortKey, va = a[k], vb = b[k];
    var na = va === null || va === undefined || va === '', nb = vb === null || vb === undefined || vb === '';
    if (na || nb) return na === nb ? 0 : na ? 1 : -1; // unknown last
    var r = typeof va === 'number' ? va - vb : String(va).localeCompare(String(vb));
    return st.sortAsc ? r : -r;
  }
  function drawProcs() {
    var ps = (st.snap.processes || []).map(row);
    var cols = COLS.concat(ps.some(function (p) { return p.torch; }) ? TORCH : []);
    var hr = $('phead');
    if (hr.dataset.cols !== String(cols.length)) {
      hr.textContent = '';
      cols.forEach(function (c) {
        var th = el('th', (c.n ? 'n ' : '') + (c.c || ''), c.t);
        th.dataset.key = c.k;
        th.scope = 'col';
        th.tabIndex = 0; // sortable from the keyboard too
        var sort = function () {
          if (st.sortKey === c.k) st.sortAsc = !st.sortAsc; else { st.sortKey = c.k; st.sortAsc = !c.n; }
          drawProcs();
        };
        th.addEventListener('click', sort);
        th.addEventListener('keydown', function (e) {
          if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); }
        });
        hr.appendChild(th);
      });
      hr.dataset.cols = String(cols.length);
    }
    Array.prototype.forEach.call(hr.children, function (th) {
      var on = th.dataset.key === st.sortKey;
      th.classList.toggle('sorted', on);
      th.classList.toggle('asc', on && st.sortAsc);
      th.setAttribute('aria-sort', on ? (st.sortAsc ? 'ascending' : 'descending') : 'none');
    });
    ps.sort(cmp);
    var tb = document.createElement('tbody');
    tb.id = 'pbody';
    ps.forEach(function (p) {
      var tr = el('tr');
      cols.forEach(function (c) {
        var v = p[c.k];
        var s = v === null || v === undefined ? (c.n ? '-' : '') : c.f ? c.f(v) : v;
        var td = el('td', (c.n ? 'n ' : '') + (c.c || ''), s);
        if (c.k === 'command') td.title = clean(v);
        if (c.k === 'outside_allocator_bytes' && p.parts) td.appendChild(el('div', 'parts', partsText(p.parts)));
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    });
    $('pbody').replaceWith(tb);
    text($('nprocs'), '(' + ps.length + ')');
  }

  // ---- the stream ----
  function seen() {
    st.last = Date.now();
    document.body.classList.remove('stale');
    var s = $('state');
    s.className = 'state';
    text(s, 'live');
  }
  function newHist() {
    var h = { t: [], used: [], util: [], s: {} };
    SENSORS.forEach(function (s) { h.s[s.k] = []; });
    return h;
  }
  function push(g, t) {
    var h = st.hist[g.index] || (st.hist[g.index] = newHist());
    if (h.t.length && h.t[h.t.length - 1] >= t) return;
    h.t.push(t);
    h.used.push(g.lost || g.mem_used_bytes === undefined ? null : g.mem_used_bytes);
    h.util.push(g.lost || g.util_gpu_pct === undefined ? null : g.util_gpu_pct);
    SENSORS.forEach(function (s) {
      var v = g[s.k];
      h.s[s.k].push(g.lost || v === undefined || v === null ? null : v);
    });
    while (h.t.length && h.t[0] < t - st.historyMs) {
      h.t.shift(); h.used.shift(); h.util.shift();
      SENSORS.forEach(function (s) { h.s[s.k].shift(); });
    }
  }
  function onHello(ev) {
    var d = JSON.parse(ev.data);
    st.interval = d.interval_ms || 1000;
    st.historyMs = d.history_ms || 300000;
    text($('host'), d.host);
    document.title = 'vramz \u00b7 ' + clean(d.host);
    st.hist = {};
    d.gpus.forEach(function (g) {
      // the ring has every sensor (history.c); one it never had is absent
      var h = newHist();
      h.t = d.t.slice(); h.used = g.used_bytes.slice(); h.util = g.util_pct.slice();
      SENSORS.forEach(function (s) {
        var v = s.k === 'mem_used_bytes' ? g.used_bytes : s.k === 'util_gpu_pct' ? g.util_pct : g[s.k];
        h.s[s.k] = v ? v.slice() : h.t.map(function () { return null; });
      });
      st.hist[g.index] = h;
    });
    seen();
    if (P.detail) P.detail.hello();
  }
  function drawAll() {
    if (!st.snap) return;
    st.snap.gpus.forEach(drawGpu);
    drawProcs();
  }
  P.drawAll = drawAll;
  function onSnapshot(ev) {
    var t0 = performance.now();
    var d = JSON.parse(ev.data);
    st.snap = d;
    d.gpus.forEach(function (g) { push(g, d.time_ms); });
    var t = $('last');
    text(t, iso(d.time_ms));
    t.dateTime = d.time;
    seen();
    // under the detail view the cards and the table are not seen: drawn
    // again when it closes (P.drawAll), not each tick behind it
    if (!(P.detail && P.detail.covers())) drawAll();
    if (P.detail) P.detail.snapshot(d);
    // what a tick cost this page (bench/page.py reads it)
    document.body.dataset.renderMs = (performance.now() - t0).toFixed(2);
  }
  function onFindings(ev) {
    st.findings = JSON.parse(ev.data).findings || [];
    drawFindings();
    announce(st.findings);
    if (st.snap) st.snap.gpus.forEach(drawGpu);
    seen();
  }
  function stale() {
    if (!st.last) return;
    var age = Date.now() - st.last;
    if (age > Math.max(3 * st.interval, 2000)) {
      document.body.classList.add('stale');
      var s = $('state');
      s.className = 'state stale';
      text(s, 'stale: no sample for ' + Math.round(age / 1000) + ' s');
    }
  }
  // ---- the theme: the reader's setting, or the toggle's (kept) ----
  function theme(t) {
    if (t) document.documentElement.dataset.theme = t;
    else delete document.documentElement.dataset.theme;
    var dark = t ? t === 'dark' : window.matchMedia && matchMedia('(prefers-color-scheme: dark)').matches;
    var b = $('theme');
    text(b, dark ? 'light' : 'dark');
    b.setAttribute('aria-pressed', dark ? 'true' : 'false');
    b.title = dark ? 'light theme' : 'dark theme';
    st.colors = null;
    Object.keys(st.cards).forEach(function (i) {
      var rows = st.cards[i].rows;
      Object.keys(rows).forEach(function (k) { rows[k].key = null; });
    });
    if (st.snap) st.snap.gpus.forEach(drawGpu);
    if (P.detail) P.detail.redraw();
  }
  var saved = null;
  try { saved = localStorage.getItem('vramz-theme'); } catch (e) { saved = null; }
  theme(saved === 'dark' || saved === 'light' ? saved : null);
  $('theme').addEventListener('click', function () {
    var t = document.documentElement.dataset.theme;
    var dark = t ? t === 'dark' : window.matchMedia && matchMedia('(prefers-color-scheme: dark)').matches;
    var next = dark ? 'light' : 'dark';
    try { localStorage.setItem('vramz-theme', next); } catch (e) { /* private mode */ }
    theme(next);
  });
  if (window.matchMedia) {
    var mq = matchMedia('(prefers-color-scheme: dark)');
    var follow = function () { if (!document.documentElement.dataset.theme) theme(null); };
    if (mq.addEventListener) mq.addEventListener('change', follow);
  }
  // memory charts: the used range (zoomed) or 0 .. the total
  $('zoom').addEventListener('click', function () {
    st.zoomTotal = !st.zoomTotal;
    $('zoom').setAttribute('aria-pressed', st.zoomTotal ? 'true' : 'false');
    text($('zoom'), st.zoomTotal ? 'zoom to used' : 'show total');
    if (st.snap) st.snap.gpus.forEach(drawGpu);
    if (P.detail) P.detail.redraw();
  });

  var es = new EventSource('/api/v1/events');
  es.addEventListener('hello', onHello);
  es.addEventListener('snapshot', onSnapshot);
  es.addEventListener('findings', onFindings);
  setInterval(stale, 500);
  drawFindings();
}());
