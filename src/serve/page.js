// SPDX-License-Identifier: Apache-2.0
// page.js - the live page's script (vramz serve, GET /; page.c).
// Reads /api/v1/events (hello with the history, a snapshot a tick, the
// findings when they change) and draws GPUs, charts, findings and the
// process table.  Every string from the data goes through text(): it
// sets textContent, never markup, with control and bidi characters shown
// as escapes; no handler is inline (the CSP would refuse one).
'use strict';
(function () {
  var $ = function (id) { return document.getElementById(id); };
  var st = { interval: 1000, historyMs: 300000, hist: {}, snap: null, findings: [],
    last: 0, sortKey: 'used_bytes', sortAsc: false, cards: {} };
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
  function iso(ms) { return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC'); }

  // ---- GPUs ----
  function card(g) {
    var c = st.cards[g.index];
    if (c) return c;
    c = { root: el('article', 'gpu') };
    var h = el('h3');
    c.name = el('span', 'name');
    c.badge = el('span', 'badge', 'lost');
    h.appendChild(c.name); h.appendChild(c.badge);
    c.root.appendChild(h);
    var bar = el('div', 'bar');
    c.r = el('div', 'r'); c.u = el('div', 'u');
    bar.appendChild(c.r); bar.appendChild(c.u);
    c.root.appendChild(bar);
    c.mem = el('div', 'mem');
    c.root.appendChild(c.mem);
    var f = el('div', 'figs');
    c.figs = {};
    ['util', 'temp', 'power', 'pcie'].forEach(function (k) {
      var d = el('div'); d.appendChild(el('small', '', k === 'pcie' ? 'PCIe' : k));
      c.figs[k] = el('span'); d.appendChild(c.figs[k]); f.appendChild(d);
    });
    c.root.appendChild(f);
    c.canvas = el('canvas');
    c.canvas.setAttribute('aria-label', 'memory and utilization history');
    c.root.appendChild(c.canvas);
    var lg = el('div', 'legend');
    lg.appendChild(el('span', 'lu', '\u25A0 memory used '));
    lg.appendChild(el('span', 'lt', '\u2014 utilization '));
    c.span = el('span');
    lg.appendChild(c.span);
    c.root.appendChild(lg);
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
    text(c.figs.util, num(g.util_gpu_pct, ' %'));
    text(c.figs.temp, num(g.temp_c, ' \u00b0C'));
    text(c.figs.power, g.power_mw === null || g.power_mw === undefined ? '-' :
      Math.round(g.power_mw / 1000) + (g.power_limit_mw ? '/' + Math.round(g.power_limit_mw / 1000) : '') + ' W');
    text(c.figs.pcie, g.pcie_gen ? g.pcie_gen + '.0 x' + (g.pcie_width || '?') : '-');
    chart(c, g);
  }

  function chart(c, g) {
    var h = st.hist[g.index], cv = c.canvas;
    var w = cv.clientWidth || 300, ht = cv.clientHeight || 90, dpr = window.devicePixelRatio || 1;
    if (cv.width !== Math.round(w * dpr)) { cv.width = Math.round(w * dpr); cv.height = Math.round(ht * dpr); }
    var x = cv.getContext('2d');
    x.setTransform(dpr, 0, 0, dpr, 0, 0);
    x.clearRect(0, 0, w, ht);
    x.strokeStyle = '#d9dee5'; x.lineWidth = 1;
    for (var q = 0; q <= 4; q++) { x.beginPath(); x.moveTo(0, 0.5 + q * (ht - 1) / 4); x.lineTo(w, 0.5 + q * (ht - 1) / 4); x.stroke(); }
    if (!h || !h.t.length) return;
    var t1 = h.t[h.t.length - 1], t0 = t1 - st.historyMs;
    var px = function (t) { return (t - t0) / st.historyMs * w; };
    var tot = g.mem_total_bytes || 1;
    x.fillStyle = 'rgba(47,111,214,.35)'; x.strokeStyle = '#2f6fd6';
    x.beginPath();
    var open = false, i;
    for (i = 0; i < h.t.length; i++) {
      if (h.used[i] === null) continue;
      var y = ht - ht * Math.min(1, h.used[i] / tot);
      if (!open) { x.moveTo(px(h.t[i]), ht); open = true; }
      x.lineTo(px(h.t[i]), y);
    }
    if (open) { x.lineTo(px(t1), ht); x.closePath(); x.fill(); }
    x.strokeStyle = '#e07b00'; x.lineWidth = 1.5; x.beginPath(); open = false;
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
      x.strokeStyle = f.severity === 'critical' ? '#c62828' : f.severity === 'warning' ? '#c98a00' : '#00838f';
      x.lineWidth = 2; x.beginPath(); x.moveTo(xf, 0); x.lineTo(xf, ht); x.stroke();
      x.fillStyle = x.strokeStyle; x.beginPath(); x.moveTo(xf - 5, 0); x.lineTo(xf + 5, 0); x.lineTo(xf, 7); x.fill();
    });
    // the scale: 100 % of memory and of utilization at the top, the span below
    x.fillStyle = '#5f6b7a'; x.font = '10px system-ui, sans-serif';
    x.textBaseline = 'top'; x.textAlign = 'left'; x.fillText('100%', 2, 2);
    x.textBaseline = 'bottom'; x.fillText('-' + span(st.historyMs), 2, ht - 2);
    x.textAlign = 'right'; x.fillText('now', w - 2, ht - 2);
    text(c.span, '\u00b7 last ' + span(st.historyMs));
  }

  // ---- findings ----
  function drawFindings() {
    var ul = $('findings');
    ul.textContent = '';
    if (!st.findings.length) { ul.appendChild(el('li', 'none', 'none')); return; }
    st.findings.forEach(function (f) {
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
      ul.appendChild(li);
    });
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
      outside_allocator_bytes: p.outside_allocator_bytes, torch: !!p.torch };
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
      th.classList.toggle('sorted', th.dataset.key === st.sortKey);
      th.classList.toggle('asc', th.dataset.key === st.sortKey && st.sortAsc);
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
  function push(g, t) {
    var h = st.hist[g.index] || (st.hist[g.index] = { t: [], used: [], util: [] });
    if (h.t.length && h.t[h.t.length - 1] >= t) return;
    h.t.push(t);
    h.used.push(g.lost || g.mem_used_bytes === undefined ? null : g.mem_used_bytes);
    h.util.push(g.lost || g.util_gpu_pct === undefined ? null : g.util_gpu_pct);
    while (h.t.length && h.t[0] < t - st.historyMs) { h.t.shift(); h.used.shift(); h.util.shift(); }
  }
  function onHello(ev) {
    var d = JSON.parse(ev.data);
    st.interval = d.interval_ms || 1000;
    st.historyMs = d.history_ms || 300000;
    text($('host'), d.host);
    document.title = 'vramz \u00b7 ' + clean(d.host);
    st.hist = {};
    d.gpus.forEach(function (g) {
      st.hist[g.index] = { t: d.t.slice(), used: g.used_bytes.slice(), util: g.util_pct.slice() };
    });
    seen();
  }
  function onSnapshot(ev) {
    var t0 = performance.now();
    var d = JSON.parse(ev.data);
    st.snap = d;
    d.gpus.forEach(function (g) { push(g, d.time_ms); });
    var t = $('last');
    text(t, iso(d.time_ms));
    t.dateTime = d.time;
    seen();
    d.gpus.forEach(drawGpu);
    drawProcs();
    // what a tick cost this page (bench/page.py reads it)
    document.body.dataset.renderMs = (performance.now() - t0).toFixed(2);
  }
  function onFindings(ev) {
    st.findings = JSON.parse(ev.data).findings || [];
    drawFindings();
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
  var es = new EventSource('/api/v1/events');
  es.addEventListener('hello', onHello);
  es.addEventListener('snapshot', onSnapshot);
  es.addEventListener('findings', onFindings);
  setInterval(stale, 500);
  drawFindings();
}());
