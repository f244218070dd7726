// SPDX-License-Identifier: Apache-2.0
// gpuview.js - the live page's detail view of one GPU (issue 40; vramz
// serve, GET /): a large chart of every sensor the page has, the values
// under the pointer (or the keyboard's cursor) with their time, a time
// range from 5 minutes to the exporter's --history, and the memory of
// each process stacked.  It runs after page.js in the same <script> (one
// hash in the CSP) and reaches the page only through window.vramzPage:
// the stream's data (st.hist, the ring of history.c and each tick since),
// the helpers that write text safely, and the theme's colours.  Process
// memory is not in the ring: it is kept here from each snapshot since the
// page opened, trimmed to --history like the rest.
'use strict';
(function () {
  var P = window.vramzPage;
  if (!P) return;
  var st = P.st, el = P.el, text = P.text;
  var $ = function (id) { return document.getElementById(id); };
  var D = { gpu: null, rangeMs: 300000, cursor: null, opener: null, pushed: false,
    procs: {}, names: {}, charts: null };
  var NBANDS = 6; // processes drawn as their own band; the rest are "other"

  function pct(v) { return Math.round(v) + ' %'; }
  function degc(v) { return Math.round(v) + ' \u00b0C'; }
  function mhz(v) { return Math.round(v) + ' MHz'; }
  function watts(v) { return (Math.round(v / 100) / 10) + ' W'; }
  function rate(v) { return P.cbytes(v) + '/s'; }
  // The charts, in GPU-Z's order: each a set of series from the ring
  // (SENSORS' keys in page.js), drawn on one scale.  'mem' is stacked
  // (reserved under used, as the report draws it) and zoomed by the rule
  // of zoom.c; 'procs' is the stack of processes from 0.
  var CHARTS = [
    { id: 'mem', t: 'memory used and reserved', f: P.cbytes, mem: 1,
      s: [{ k: 'mem_reserved_bytes', t: 'reserved', c: 'rsv' }, { k: 'mem_used_bytes', t: 'used', c: 'used' }] },
    { id: 'procs', t: 'memory by process', f: P.cbytes, procs: 1, s: [] },
    { id: 'util', t: 'utilization', f: pct, lo: 0, hi: 100,
      s: [{ k: 'util_gpu_pct', t: 'GPU', c: 'used' }, { k: 'util_mem_pct', t: 'memory', c: 'util' }] },
    { id: 'temp', t: 'temperature', f: degc, u: 5,
      s: [{ k: 'temp_c', t: 'GPU', c: 'used' }, { k: 'temp_mem_c', t: 'memory', c: 'util' }] },
    { id: 'power', t: 'power', f: watts, u: 20000, limit: 1, s: [{ k: 'power_mw', t: 'draw', c: 'used' }] },
    { id: 'clock', t: 'clocks', f: mhz, u: 100,
      s: [{ k: 'clock_sm_mhz', t: 'SM', c: 'used' }, { k: 'clock_mem_mhz', t: 'memory', c: 'util' }] },
    { id: 'fan', t: 'fan', f: pct, lo: 0, hi: 100, s: [{ k: 'fan_pct', t: 'fan', c: 'used' }] },
    { id: 'pcie', t: 'PCIe throughput', f: rate, u: 1024,
      s: [{ k: 'pcie_tx_bytes_per_s', t: 'TX', c: 'used' }, { k: 'pcie_rx_bytes_per_s', t: 'RX', c: 'util' }] }];

  // ---- each process's memory, per GPU, from the snapshots ----
  // Kept as change points: a process's figure is stored again only when it
  // moved (or the process went), so 200 steady processes over an hour cost
  // a point each, and only a leaking one a point a tick.  r.t are the
  // ticks seen (the times the stack is drawn at), r.lost whether the GPU
  // was lost at each.
  function record(d) {
    var by = {};
    (d.processes || []).forEach(function (p) {
      if (p.used_bytes === null || p.used_bytes === undefined) return;
      var m = by[p.gpu] || (by[p.gpu] = {});
      m[p.pid] = (m[p.pid] || 0) + p.used_bytes;
      D.names[p.pid] = p.pid + ' ' + (p.comm || (p.command || '').split(' ')[0] || '?');
    });
    var cut = d.time_ms - st.historyMs;
    d.gpus.forEach(function (g) {
      var r = D.procs[g.index] || (D.procs[g.index] = { t: [], lost: [], p: {} });
      if (r.t.length && r.t[r.t.length - 1] >= d.time_ms) return;
      var now = g.lost ? {} : by[g.index] || {};
      r.t.push(d.time_ms); r.lost.push(!!g.lost);
      Object.keys(now).forEach(function (pid) { r.p[pid] = r.p[pid] || { t: [], v: [] }; });
      Object.keys(r.p).forEach(function (pid) {
        var c = r.p[pid], v = now[pid] === undefined ? null : now[pid];
        if (!c.v.length || c.v[c.v.length - 1] !== v) { c.t.push(d.time_ms); c.v.push(v); }
        // the point in force at the window's start stays; older ones go
        while (c.t.length > 1 && c.t[1] <= cut) { c.t.shift(); c.v.shift(); }
        if (c.t.length === 1 && c.v[0] === null && c.t[0] <= cut) delete r.p[pid];
      });
      while (r.t.length && r.t[0] < cut) { r.t.shift(); r.lost.shift(); }
    });
  }
  // a process's figure at each of the ticks ts (its change points walked once)
  function series(c, ts) {
    var out = [], j = 0;
    for (var i = 0; i < ts.length; i++) {
      while (j + 1 < c.t.length && c.t[j + 1] <= ts[i]) j++;
      out.push(c.t[j] <= ts[i] ? c.v[j] : null);
    }
    return out;
  }
  // the stack's bands over [t0, now]: the NBANDS highest peaks, then "other"
  function bands(gpu, t0) {
    var r = D.procs[gpu] || { t: [], lost: [], p: {} }, peak = {}, vals = {};
    Object.keys(r.p).forEach(function (pid) {
      var c = r.p[pid], v = series(c, r.t), pk = 0;
      for (var i = 0; i < v.length; i++) if (r.t[i] >= t0 && v[i] > pk) pk = v[i];
      if (pk > 0) { peak[pid] = pk; vals[pid] = v; }
    });
    var pids = Object.keys(peak).sort(function (a, b) { return peak[b] - peak[a] || a - b; });
    var s = pids.slice(0, NBANDS).map(function (pid, k) {
      return { k: pid, t: D.names[pid] || pid, c: 'p' + k, v: vals[pid] };
    });
    if (pids.length > NBANDS) {
      var o = r.t.map(function () { return 0; });
      pids.slice(NBANDS).forEach(function (pid) { vals[pid].forEach(function (x, i) { o[i] += x || 0; }); });
      s.push({ k: 'other', t: 'other (' + (pids.length - NBANDS) + ')', c: 'mute', v: o });
    }
    // absent is 0 in a stack; a lost GPU's tick is a gap
    s.forEach(function (b) { b.v = b.v.map(function (x, i) { return r.lost[i] ? null : x || 0; }); });
    return { t: r.t, s: s };
  }

  // ---- the view ----
  function build() {
    if (D.charts) return;
    var box = $('dcharts');
    D.charts = CHARTS.map(function (c) {
      var fig = el('figure', 'dchart');
      fig.dataset.chart = c.id;
      var cap = el('figcaption');
      cap.appendChild(el('span', 'dt', c.t));
      var ro = el('output', 'readout');
      ro.id = 'ro-' + c.id;
      cap.appendChild(ro);
      fig.appendChild(cap);
      var cv = el('canvas');
      cv.tabIndex = 0;
      cv.setAttribute('role', 'img');
      cv.setAttribute('aria-describedby', ro.id);
      fig.appendChild(cv);
      var lg = el('div', 'legend');
      fig.appendChild(lg);
      box.appendChild(fig);
      cv.addEventListener('pointermove', function (e) { pointer(cv, e); });
      cv.addEventListener('pointerleave', function () { D.cursor = null; draw(); });
      cv.addEventListener('keydown', function (e) { key(e); });
      return { c: c, fig: fig, cv: cv, ro: ro, lg: lg };
    });
  }
  function ranges() {
    var out = [];
    [300000, 600000, 900000, 1800000, 3600000].forEach(function (r) { if (r < st.historyMs) out.push(r); });
    out.push(st.historyMs);
    return out;
  }
  function fillRange() {
    var sel = $('drange'), rs = ranges();
    if (sel.dataset.hist === String(st.historyMs)) return;
    sel.textContent = '';
    rs.forEach(function (r) {
      var o = el('option', '', 'last ' + P.span(r) + (r === st.historyMs ? ' (all kept)' : ''));
      o.value = String(r);
      sel.appendChild(o);
    });
    if (rs.indexOf(D.rangeMs) < 0) D.rangeMs = rs[0];
    sel.value = String(D.rangeMs);
    sel.dataset.hist = String(st.historyMs);
  }
  function open(gpu, opener, fromHistory) {
    if (!st.hist[gpu]) return;
    build();
    fillRange();
    D.gpu = gpu; D.cursor = null;
    D.opener = opener || D.opener;
    $('detail').hidden = false;
    document.querySelector('main').inert = true;
    document.querySelector('header').inert = true;
    document.body.classList.add('detail-open');
    if (!fromHistory) {
      try { history.pushState({ gpu: gpu }, '', '#gpu-' + gpu); D.pushed = true; } catch (e) { D.pushed = false; }
    }
    draw();
    $('dclose').focus();
  }
  function close(fromHistory) {
    if (D.gpu === null) return;
    if (!fromHistory && D.pushed) { history.back(); return; } // popstate closes
    if (!fromHistory && /^#gpu-/.test(location.hash)) history.replaceState(null, '', location.pathname);
    D.gpu = null; D.pushed = false;
    $('detail').hidden = true;
    document.querySelector('main').inert = false;
    document.querySelector('header').inert = false;
    document.body.classList.remove('detail-open');
    P.drawAll(); // the page behind was not drawn while covered
    if (D.opener && D.opener.isConnected) D.opener.focus();
  }

  // the data of one chart over the range: times and series
  function data(ch, t0) {
    if (ch.c.procs) return bands(D.gpu, t0);
    var h = st.hist[D.gpu];
    return { t: h.t, s: ch.c.s.map(function (s) { return { k: s.k, t: s.t, c: s.c, v: h.s[s.k] || [] }; }) };
  }
  function extent(d, t0, stack) {
    var lo = Infinity, hi = -Infinity;
    for (var i = 0; i < d.t.length; i++) {
      if (d.t[i] < t0) continue;
      var sum = 0;
      for (var k = 0; k < d.s.length; k++) {
        var v = d.s[k].v[i];
        if (v === null || v === undefined) continue;
        if (stack) sum += v;
        else { if (v < lo) lo = v; if (v > hi) hi = v; }
      }
      if (stack) { if (sum < lo) lo = sum; if (sum > hi) hi = sum; }
    }
    return [lo, hi];
  }
  // the scale: the memory by zoom.c's rule, percentages 0..100, the rest
  // the range the data moved in (zoomRange without a total), a stack from 0
  function scale(ch, d, t0, g) {
    var c = ch.c, e = extent(d, t0, c.mem || c.procs), G = 1073741824;
    if (c.lo !== undefined) return { lo: c.lo, hi: c.hi };
    if (c.mem) {
      var tot = g && g.mem_total_bytes || 0;
      if (st.zoomTotal && tot) return { lo: 0, hi: tot, total: tot };
      var z = P.zoomRange(e[0] / G, e[1] / G, tot / G, 0.25);
      return { lo: z.lo * G, hi: z.atTotal && tot ? tot : z.hi * G, total: z.atTotal && tot ? tot : 0, of: tot };
    }
    if (c.procs) return { lo: 0, hi: e[1] > 0 ? P.niceUp(e[1] / G / 4) * 4 * G : 1 }; // GiB steps
    if (c.limit && g && g.power_limit_mw) e[1] = Math.max(e[1], g.power_limit_mw);
    var r = P.zoomRange(e[0], e[1], 0, c.u || 1);
    return { lo: r.lo, hi: r.hi };
  }
  // the index of the tick nearest t, or -1
  function nearest(ts, t) {
    var a = 0, b = ts.length - 1;
    if (b < 0) return -1;
    while (a < b) { var m = (a + b) >> 1; if (ts[m] < t) a = m + 1; else b = m; }
    if (a > 0 && t - ts[a - 1] < ts[a] - t) a--;
    return a;
  }
  // the area between lo[] and hi[] from index `from`, broken where hi is null
  function area(x, t, lo, hi, from, px, py) {
    var seg = [];
    var flush = function () {
      if (!seg.length) return;
      x.beginPath();
      x.moveTo(px(t[seg[0]]), py(lo[seg[0]]));
      seg.forEach(function (j) { x.lineTo(px(t[j]), py(hi[j])); });
      for (var m = seg.length - 1; m >= 0; m--) x.lineTo(px(t[seg[m]]), py(lo[seg[m]]));
      x.closePath(); x.fill();
      seg = [];
    };
    for (var i = from; i < t.length; i++) { if (hi[i] === null) flush(); else seg.push(i); }
    flush();
  }
  function plot(ch, d, sc, t0, t1, g) {
    var cv = ch.cv, col = P.colors(), w = cv.clientWidth || 400, ht = cv.clientHeight || 150;
    var dpr = window.devicePixelRatio || 1, stack = ch.c.mem || ch.c.procs, i, k;
    if (cv.width !== Math.round(w * dpr) || cv.height !== Math.round(ht * dpr)) {
      cv.width = Math.round(w * dpr); cv.height = Math.round(ht * dpr);
    }
    var x = cv.getContext('2d');
    x.setTransform(dpr, 0, 0, dpr, 0, 0);
    x.clearRect(0, 0, w, ht);
    x.strokeStyle = col.line; x.lineWidth = 1;
    for (var q = 0; q <= 4; q++) { x.beginPath(); x.moveTo(0, 0.5 + q * (ht - 1) / 4); x.lineTo(w, 0.5 + q * (ht - 1) / 4); x.stroke(); }
    var px = function (t) { return (t - t0) / (t1 - t0) * w; };
    var py = function (v) { return ht - ht * Math.max(0, Math.min(1, (v - sc.lo) / (sc.hi - sc.lo || 1))); };
    var from = nearest(d.t, t0);
    if (from > 0 && d.t[from] > t0) from--;
    var base = d.t.map(function () { return 0; });
    for (k = 0; k < d.s.length; k++) {
      var s = d.s[k], pen = false;
      x.strokeStyle = col[s.c] || col.used; x.fillStyle = x.strokeStyle; x.lineWidth = 1.5;
      x.beginPath();
      if (stack) { // an area from the band below to this one's top
        var top = d.t.map(function (t, j) { var v = s.v[j]; return v === null || v === undefined ? null : base[j] + v; });
        x.globalAlpha = 0.55;
        area(x, d.t, base, top, Math.max(0, from), px, py);
        x.globalAlpha = 1;
        top.forEach(function (v, j) { if (v !== null) base[j] = v; });
        continue;
      }
      for (i = Math.max(0, from); i < d.t.length; i++) {
        if (s.v[i] === null || s.v[i] === undefined) { pen = false; continue; }
        if (!pen) { x.moveTo(px(d.t[i]), py(s.v[i])); pen = true; } else x.lineTo(px(d.t[i]), py(s.v[i]));
      }
      x.stroke();
    }
    var lim = ch.c.limit && g && g.power_limit_mw ? g.power_limit_mw : sc.total;
    if (lim) { // the power limit, or the memory total where it is in view
      x.strokeStyle = col.crit; x.setLineDash([4, 3]); x.lineWidth = 1;
      x.beginPath(); x.moveTo(0, Math.round(py(lim)) + 0.5); x.lineTo(w, Math.round(py(lim)) + 0.5); x.stroke();
      x.setLineDash([]);
    }
    // the scale and the span
    x.fillStyle = col.mute; x.font = '11px system-ui, sans-serif';
    x.textAlign = 'left'; x.textBaseline = 'top';
    x.fillText(ch.c.f(sc.hi), 3, 3);
    x.textBaseline = 'bottom'; x.fillText(ch.c.f(sc.lo), 3, ht - 3);
    x.textAlign = 'center'; x.fillText('-' + P.span(t1 - t0), w / 2, ht - 3);
    x.textAlign = 'right'; x.fillText('now', w - 3, ht - 3);
    // the cursor: a line at its tick, a dot on each series
    var ci = D.cursor === null ? -1 : nearest(d.t, D.cursor);
    if (ci >= 0 && d.t[ci] >= t0) {
      var cx = Math.round(px(d.t[ci])) + 0.5, acc = 0;
      x.strokeStyle = col.fg; x.lineWidth = 1;
      x.beginPath(); x.moveTo(cx, 0); x.lineTo(cx, ht); x.stroke();
      d.s.forEach(function (s) {
        var v = s.v[ci];
        if (v === null || v === undefined) return;
        acc = stack ? acc + v : v;
        x.fillStyle = col[s.c] || col.used;
        x.beginPath(); x.arc(cx, py(acc), 3.5, 0, 7); x.fill();
      });
    }
    cv.dataset.lo = sc.lo; cv.dataset.hi = sc.hi;
    cv.dataset.t0 = t0; cv.dataset.t1 = t1;
    return ci;
  }
  // what the readout says: the time and each series' value at the cursor,
  // or the newest tick's when there is none
  function readout(ch, d, ci) {
    var i = ci >= 0 ? ci : d.t.length - 1, parts = [];
    if (i < 0) { text(ch.ro, 'no data yet'); return; }
    d.s.forEach(function (s) {
      var v = s.v[i];
      parts.push(s.t + ' ' + (v === null || v === undefined ? '-' : ch.c.f(v)));
    });
    var when = ci >= 0 ? P.iso(d.t[i]).slice(11, 19) : 'now';
    var s = when + ' \u00b7 ' + (parts.length ? parts.join(' \u00b7 ') : 'no process');
    if (ch.ro.textContent !== s) text(ch.ro, s);
    ch.fig.dataset.t = d.t[i];
  }
  function legend(ch, d) {
    var key = d.s.map(function (s) { return s.c + ':' + s.t; }).join('|');
    if (ch.lg.dataset.key === key) return;
    ch.lg.dataset.key = key;
    ch.lg.textContent = '';
    d.s.forEach(function (s) {
      var sp = el('span', 'sw ' + s.c, '\u25A0 ');
      ch.lg.appendChild(sp);
      ch.lg.appendChild(el('span', '', s.t + '  '));
    });
  }
  function draw() {
    if (D.gpu === null || !D.charts) return;
    var h = st.hist[D.gpu], g = null;
    if (!h) return;
    (st.snap && st.snap.gpus || []).forEach(function (x) { if (x.index === D.gpu) g = x; });
    text($('dtitle'), 'GPU ' + D.gpu + ' \u00b7 ' + (g && g.name || '?'));
    var t1 = h.t.length ? h.t[h.t.length - 1] : Date.now(), t0 = t1 - D.rangeMs;
    if (D.cursor !== null && D.cursor < t0) D.cursor = null;
    D.charts.forEach(function (ch) {
      var d = data(ch, t0), sc = scale(ch, d, t0, g);
      var has = d.s.some(function (s) { return s.v.some(function (v) { return v !== null && v !== undefined; }); });
      ch.fig.classList.toggle('none', !has && !ch.c.procs);
      legend(ch, d);
      var ci = plot(ch, d, sc, t0, t1, g);
      if (!has && !ch.c.procs) text(ch.ro, 'not reported by this GPU');
      else readout(ch, d, ci);
      ch.cv.setAttribute('aria-label', ch.c.t + ' over the last ' + P.span(D.rangeMs) + ', from ' +
        ch.c.f(sc.lo) + ' to ' + ch.c.f(sc.hi) + (sc.of && !sc.total ? ' (total ' + P.gib(sc.of) + ')' : '') +
        '; arrow keys move the cursor');
    });
    $('detail').dataset.gpu = D.gpu;
    $('detail').dataset.rangeMs = D.rangeMs;
  }
  function pointer(cv, e) {
    var r = cv.getBoundingClientRect(), t0 = +cv.dataset.t0, t1 = +cv.dataset.t1;
    if (!(r.width > 0) || !(t1 > t0)) return;
    D.cursor = t0 + (e.clientX - r.left) / r.width * (t1 - t0);
    draw();
  }
  // the keyboard's cursor: a tick at a time (Shift: ten), Home / End
  function key(e) {
    var h = st.hist[D.gpu];
    if (!h || !h.t.length) return;
    var t1 = h.t[h.t.length - 1], first = nearest(h.t, t1 - D.rangeMs), i;
    if (h.t[first] < t1 - D.rangeMs) first++;
    i = D.cursor === null ? h.t.length - 1 : nearest(h.t, D.cursor);
    var step = e.shiftKey ? 10 : 1;
    if (e.key === 'ArrowLeft') i -= step;
    else if (e.key === 'ArrowRight') i += step;
    else if (e.key === 'Home') i = first;
    else if (e.key === 'End') i = h.t.length - 1;
    else return;
    e.preventDefault();
    D.cursor = h.t[Math.max(first, Math.min(h.t.length - 1, i))];
    draw();
  }

  $('drange').addEventListener('change', function () {
    D.rangeMs = +$('drange').value || st.historyMs;
    D.cursor = null;
    draw();
  });
  $('dclose').addEventListener('click', function () { close(false); });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape' && D.gpu !== null) { e.preventDefault(); close(false); }
  });
  window.addEventListener('popstate', function (e) {
    var g = e.state && e.state.gpu;
    if (g !== undefined && g !== null && st.hist[g]) open(g, null, true);
    else close(true);
  });
  // a card's name opens it (a button: click, Enter, Space)
  document.getElementById('gpus').addEventListener('click', function (e) {
    var b = e.target.closest && e.target.closest('button.open');
    if (b) open(+b.dataset.gpu, b, false);
  });

  P.detail = {
    snapshot: function (d) { record(d); if (D.gpu !== null) { fillRange(); draw(); } },
    hello: function () {
      if (D.gpu === null && /^#gpu-\d+$/.test(location.hash)) { // a link to the view
        var g = +location.hash.slice(5);
        if (st.hist[g]) { history.replaceState({ gpu: g }, '', location.hash); open(g, null, true); D.pushed = false; }
      }
      if (D.gpu !== null) { fillRange(); draw(); }
    },
    redraw: draw,
    covers: function () { return D.gpu !== null; }
  };
}());
