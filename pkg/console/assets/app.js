// The operator console: hash-routed pages over the crawler's JSON API
// (api/openapi.yaml). No framework and no build step: the DOM is built with h()
// and text nodes only (no innerHTML), so nothing the crawl found can run here.
// Every number shown carries data-path, a JSON Pointer to its place in the API
// answer the page read (data-api), so a test can compare what is shown with
// the API.
'use strict';

(function () {
  const TOKEN_KEY = 'crawler.token';
  const POLL_MS = 2000;
  // The control routes (pkg/api/control.go), in one place.
  const CONTROL = {
    state: '/api/v1/control',
    crawlPause: '/api/v1/control/pause',
    crawlResume: '/api/v1/control/resume',
    host: (host) => '/api/v1/hosts/' + encodeURIComponent(host),
    hostPause: (host) => '/api/v1/hosts/' + encodeURIComponent(host) + '/pause',
    hostResume: (host) => '/api/v1/hosts/' + encodeURIComponent(host) + '/resume',
    hostQueue: (host) => '/api/v1/hosts/' + encodeURIComponent(host) + '/queue',
    exclusions: '/api/v1/exclusions',
    exclusion: (id) => '/api/v1/exclusions/' + encodeURIComponent(id),
    audit: '/api/v1/audit',
  };

  const main = document.getElementById('main');
  let access = { tokens: false, public: false }; // from config.json
  const loginSection = document.getElementById('login');
  const statusLine = document.getElementById('status');
  let pollTimer = null;
  let renderSeq = 0; // a page left while its request was out must not draw

  // ---- API -------------------------------------------------------------

  class AuthError extends Error {}

  async function api(path, opts) {
    opts = opts || {};
    const headers = {};
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = 'Bearer ' + token;
    let body;
    if (opts.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    const resp = await fetch(path, { method: opts.method || 'GET', headers, body, cache: 'no-store' });
    if (resp.status === 401) {
      if (token) sessionStorage.removeItem(TOKEN_KEY);
      showLogin(token ? 'The token was refused; log in again.' : '');
      throw new AuthError('unauthorized');
    }
    if (opts.raw) {
      if (!resp.ok) throw new Error('HTTP ' + resp.status);
      return resp;
    }
    const type = resp.headers.get('Content-Type') || '';
    const data = type.includes('json') ? await resp.json() : await resp.text();
    if (!resp.ok) {
      const err = new Error((data && data.error) || ('HTTP ' + resp.status));
      err.status = resp.status;
      throw err;
    }
    return data;
  }

  // ---- DOM helpers -------------------------------------------------------

  function h(tag, attrs) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
      else if (k === 'class') el.className = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (let i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }

  function append(el, c) {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) c.forEach((x) => append(el, x));
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }

  const SVG = 'http://www.w3.org/2000/svg';
  function s(tag, attrs) {
    const el = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
    for (let i = 2; i < arguments.length; i++) {
      const c = arguments[i];
      if (c instanceof Node) el.appendChild(c);
      else if (c !== undefined && c !== null) el.appendChild(document.createTextNode(String(c)));
    }
    return el;
  }

  // A key in seconds is labelled without its unit, which its value carries
  // ("Window 10.00 s", not "Window seconds 10").
  const SECONDS = /_seconds$/;

  function label(key) {
    const t = String(key).replace(SECONDS, '').replace(/_/g, ' ');
    return t.charAt(0).toUpperCase() + t.slice(1);
  }

  function isObj(v) { return v !== null && typeof v === 'object' && !Array.isArray(v); }

  function get(obj, path) {
    let v = obj;
    for (const k of path.split('.')) {
      if (!isObj(v) || !(k in v)) return undefined;
      v = v[k];
    }
    return v;
  }

  // fmtNum shows integers whole (with separators) and others to 2 decimals:
  // the tests compare the text with the API within that rounding.
  function fmtNum(v) {
    if (Number.isInteger(v)) return v.toLocaleString('en-US');
    return v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }

  // fmtSeconds is the one way a duration is written: under two minutes as the
  // seconds themselves are (fmtNum), so that "6.90 s" never stands above "6.9 s".
  function fmtSeconds(sec) {
    if (!(sec >= 0)) return '—';
    if (sec < 0.1) return Math.round(sec * 1000) + ' ms';
    if (sec < 120) return fmtNum(Math.round(sec * 100) / 100) + ' s';
    if (sec < 7200) return Math.round(sec / 60) + ' min';
    if (sec < 172800) return (Math.round(sec / 360) / 10) + ' h';
    return (Math.round(sec / 8640) / 10) + ' d';
  }

  function fmtBytes(b) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return (i === 0 ? Math.round(b) : b.toFixed(1)) + ' ' + units[i];
  }

  // num is a number from the API at path: shown formatted, marked for tests.
  // A number the page derived has no path (null).
  function num(v, path) {
    return h('span', { class: 'num', 'data-path': path }, fmtNum(v));
  }

  // keyed renders the value of key k, with its unit when the key names one.
  function keyed(k, v, path) {
    if (typeof v === 'number' && SECONDS.test(k)) return [num(v, path), ' s'];
    return value(v, path);
  }

  // Paths are JSON Pointers (RFC 6901): keys may hold dots (topic names).
  // sub is the path of key k under path ('' is the answer's root); below a
  // derived value (null) everything is derived.
  function sub(path, k) {
    if (path === null || path === undefined) return null;
    return path + '/' + String(k).replace(/~/g, '~0').replace(/\//g, '~1');
  }

  // P is the path of the keys from the root.
  function P(...keys) { return keys.reduce(sub, ''); }

  const TIME_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/;

  // value renders any JSON value: numbers marked with their path, times in the
  // browser's zone, objects as key/value lists and arrays of objects as tables.
  function value(v, path) {
    if (v === null || v === undefined) return h('span', { class: 'muted' }, '—');
    if (typeof v === 'number') return num(v, path);
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (typeof v === 'string') {
      if (TIME_RE.test(v) && !v.startsWith('0001-')) {
        const d = new Date(v);
        // Today's times without the date: a column of them stays narrow.
        const today = d.toDateString() === new Date().toDateString();
        if (!isNaN(d)) return h('time', { datetime: v, title: v }, today ? d.toLocaleTimeString() : d.toLocaleString());
      }
      return v;
    }
    if (Array.isArray(v)) {
      if (v.length === 0) return h('span', { class: 'muted' }, 'none');
      if (v.every(isObj)) return table(v, path);
      return h('ul', { class: 'links' }, v.map((x, i) => h('li', null, value(x, sub(path, i)))));
    }
    return kv(v, path);
  }

  // reasonText holds what the reasons the stats count mean
  // (urls.reason_descriptions): a list of counts by reason shows each as
  // its reason's title.
  const reasonText = {};
  const REASON_LIST = /\/(failed_by_reason|by_reason)$/;

  // A nested object or table goes below the list under its own heading, at
  // the card's width: in the list's value column a table's columns were
  // squeezed to a letter each, and a nested list's values pushed out of view.
  function kv(obj, path, skip) {
    const dl = h('dl', { class: 'kv' });
    const below = [];
    const reasons = typeof path === 'string' && REASON_LIST.test(path);
    for (const [k, v] of Object.entries(obj)) {
      if (skip && skip.includes(k)) continue;
      const p = sub(path, k);
      if ((isObj(v) && Object.keys(v).length) || (Array.isArray(v) && v.length && v.every(isObj))) {
        below.push(h('h3', null, label(k)), value(v, p));
        continue;
      }
      dl.appendChild(h('dt', reasons && reasonText[k] ? { title: reasonText[k] } : null, label(k)));
      dl.appendChild(h('dd', { class: typeof v === 'number' ? 'num' : null }, keyed(k, v, p)));
    }
    return below.length ? h('div', null, dl.childElementCount ? dl : null, below) : dl;
  }

  // table renders rows of objects; cell(key, value, row, index) may render a
  // column itself (links), else value() does.
  function table(rows, path, cell) {
    const cols = [];
    for (const r of rows) for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k);
    // A column aligns as numbers when any row has one: unknown ones (null) too.
    const nums = new Set(cols.filter((c) => rows.some((r) => typeof r[c] === 'number')));
    const numeric = (c) => (nums.has(c) ? 'num' : null);
    return h('table', null,
      h('thead', null, h('tr', null, cols.map((c) => h('th', { class: numeric(c) }, label(c))))),
      h('tbody', null, rows.map((r, i) => h('tr', null, cols.map((c) => {
        const custom = cell && cell(c, r[c], r, i);
        return h('td', { class: numeric(c) },
          custom !== undefined ? custom : keyed(c, r[c], sub(sub(path, i), c)));
      })))));
  }

  function card(title, content, wide) {
    return h('section', { class: wide ? 'card wide' : 'card' }, h('h2', null, title), content);
  }

  function errorBox(err) {
    return h('p', { class: 'error', role: 'alert' }, String(err && err.message ? err.message : err));
  }

  // unbroken writes a value of a few words (a media type) so that a narrow
  // column wraps it between its words only: "charset=utf-8" broke after
  // its hyphen.
  function unbroken(v) {
    return String(v).split(' ').flatMap((w, i) => (i ? [' ', h('span', { class: 'word' }, w)] : [h('span', { class: 'word' }, w)]));
  }

  function hostLink(host) { return h('a', { class: 'host', href: '#/hosts/' + encodeURIComponent(host) }, host); }
  function urlLink(u) { return h('a', { href: '#/urls/' + encodeURIComponent(u) }, u); }

  // ---- charts --------------------------------------------------------------

  // lineChart draws points [{t: ms, v: number}] as an SVG line with its axis.
  // fmtV writes the scale's values (numbers by default).
  function lineChart(points, unit, fmtV) {
    const scale = fmtV || ((v) => fmtNum(Math.round(v * 10) / 10));
    const W = 900, H = 200, L = 48, B = 22, T = 8, R = 8;
    const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'throughput chart' });
    if (points.length === 0) {
      svg.appendChild(s('text', { x: L, y: H / 2 }, 'no samples yet'));
      return svg;
    }
    const t0 = points[0].t, t1 = Math.max(points[points.length - 1].t, t0 + 1);
    const vmax = Math.max(1, ...points.map((p) => p.v)) * 1.1;
    const x = (t) => L + (W - L - R) * (t - t0) / (t1 - t0);
    const y = (v) => T + (H - T - B) * (1 - v / vmax);
    svg.appendChild(s('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }));
    svg.appendChild(s('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }));
    for (const f of [0, 0.5, 1]) {
      const v = vmax / 1.1 * f;
      svg.appendChild(s('text', { x: 2, y: y(v) + 3 }, scale(v)));
    }
    svg.appendChild(s('text', { x: L, y: H - 6 }, new Date(t0).toLocaleTimeString()));
    svg.appendChild(s('text', { x: W - R - 60, y: H - 6 }, new Date(t1).toLocaleTimeString()));
    svg.appendChild(s('text', { x: L + 6, y: T + 10 }, unit));
    const d = points.map((p, i) => (i ? 'L' : 'M') + x(p.t).toFixed(1) + ' ' + y(p.v).toFixed(1)).join(' ');
    svg.appendChild(s('path', { class: 'area', d: d + ` L${x(t1).toFixed(1)} ${H - B} L${L} ${H - B} Z` }));
    svg.appendChild(s('path', { class: 'line', d }));
    return svg;
  }

  // barChart draws [label, value, path] triples as horizontal bars, drawn at
  // their own size (not scaled to the card) so the labels stay legible.
  function barChart(bars) {
    const W = 300, row = 20, L = 60;
    const H = bars.length * row + 4;
    const svg = s('svg', { class: 'bars', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'bar chart' });
    const vmax = Math.max(1, ...bars.map((b) => b[1]));
    bars.forEach(([name, v, path], i) => {
      const yy = i * row + 2;
      svg.appendChild(s('text', { x: 0, y: yy + 13 }, name));
      svg.appendChild(s('rect', { class: 'bar', x: L, y: yy + 3, height: row - 7, width: Math.max(0, (W - L - 70) * v / vmax) }));
      const t = s('text', { x: W - 64, y: yy + 13 }, fmtNum(v));
      if (path) t.setAttribute('data-path', path);
      svg.appendChild(t);
    });
    return svg;
  }

  // history reads the API's throughput history in whichever shape it comes:
  // [{at|time|t, pages_per_second|value|...}] or plain numbers one a minute.
  function historyPoints(hist, endMs) {
    if (!Array.isArray(hist)) return [];
    return hist.map((e, i) => {
      if (typeof e === 'number') return { t: endMs - (hist.length - 1 - i) * 60000, v: e };
      if (!isObj(e)) return null;
      const tv = e.at || e.time || e.t || e.start || e.minute;
      const t = typeof tv === 'string' ? Date.parse(tv) : (typeof tv === 'number' ? tv * 1000 : NaN);
      let v = e.pages_per_second;
      if (typeof v !== 'number') v = Object.entries(e).filter(([, x]) => typeof x === 'number').map(([, x]) => x)[0];
      return isNaN(t) || typeof v !== 'number' ? null : { t, v };
    }).filter(Boolean);
  }

  // ---- login -----------------------------------------------------------------

  function showLogin(msg) {
    stopPolling();
    main.hidden = true;
    loginSection.hidden = false;
    document.getElementById('login-error').textContent = msg || '';
    document.getElementById('logout').hidden = true;
    document.getElementById('login-open').hidden = true;
    document.getElementById('token').focus();
  }

  document.getElementById('login-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const input = document.getElementById('token');
    sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    input.value = '';
    // A wrong token comes back through api()'s 401 to this form.
    api('/api/v1/stats').then(() => {
      loginSection.hidden = true;
      main.hidden = false;
      document.getElementById('logout').hidden = false;
      route();
    }, (err) => {
      if (!(err instanceof AuthError)) document.getElementById('login-error').textContent = err.message;
    });
  });

  // With -console-public the pages open without a token; this button asks
  // for one before a control action does.
  document.getElementById('login-open').addEventListener('click', () => showLogin(''));

  document.getElementById('logout').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin('Logged out.');
  });

  // ---- router ----------------------------------------------------------------

  function stopPolling() {
    if (pollTimer) clearTimeout(pollTimer);
    pollTimer = null;
  }

  function route() {
    stopPolling();
    const seq = ++renderSeq;
    const hash = location.hash.replace(/^#\/?/, '');
    const [page, ...rest] = hash.split('/');
    const arg = rest.length ? decodeURIComponent(rest.join('/')) : '';
    for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('current', a.dataset.page === (page || 'overview'));
    const hasToken = Boolean(sessionStorage.getItem(TOKEN_KEY));
    document.getElementById('logout').hidden = !hasToken;
    document.getElementById('login-open').hidden = hasToken || !access.tokens;
    const pages = { overview, hosts: arg ? hostPage : hostsPage, urls: arg ? urlPage : urlsPage, search: searchPage, report: reportPage, log: logPage, control };
    const fn = pages[page] || overview;
    const view = h('div', { 'data-page': page || 'overview' });
    main.replaceChildren(view);
    Promise.resolve(fn(view, arg, seq)).catch((err) => {
      if (err instanceof AuthError || seq !== renderSeq) return;
      view.replaceChildren(errorBox(err));
    });
  }

  // poll runs fn now and every POLL_MS while its page is shown.
  function poll(seq, fn) {
    const tick = async () => {
      if (seq !== renderSeq) return;
      try {
        await fn();
        statusLine.textContent = 'updated ' + new Date().toLocaleTimeString();
      } catch (err) {
        if (err instanceof AuthError) return;
        statusLine.textContent = 'update failed: ' + err.message;
      }
      if (seq === renderSeq) pollTimer = setTimeout(tick, POLL_MS);
    };
    return tick();
  }

  // ---- overview ----------------------------------------------------------------

  const samples = []; // this tab's own pages/s readings, while the API has no history

  async function overview(view, _arg, seq) {
    view.appendChild(h('h1', null, 'Overview'));
    const body = h('div', { 'data-api': '/api/v1/stats' });
    view.appendChild(body);
    await poll(seq, async () => {
      const st = await api('/api/v1/stats');
      if (seq !== renderSeq) return;
      body.replaceChildren(...overviewCards(st));
      body.setAttribute('data-loaded', new Date().toISOString());
    });
  }

  function overviewCards(st) {
    const cards = [];
    if (isObj(st.urls) && isObj(st.urls.reason_descriptions)) Object.assign(reasonText, st.urls.reason_descriptions);
    const now = Date.now();
    const thr = st.throughput || {};
    const live = st.live || {};
    const current = typeof thr.current === 'number' ? thr.current : live.pages_per_second;
    if (typeof current === 'number') {
      samples.push({ t: now, v: current });
      while (samples.length && samples[0].t < now - 3600e3) samples.shift();
    }
    let points = historyPoints(thr.history, now);
    if (points.length < 2) points = samples.slice();
    const head = h('p', { class: 'muted wide-line' },
      // "store": no process crawls; the embedded crawler serves a finished crawl.
      st.mode ? [st.mode === 'cluster' ? 'Cluster' : st.mode === 'embedded' ? 'Embedded crawler'
        : st.mode === 'store' ? h('strong', { id: 'read-only' }, 'A finished crawl, served read-only: nothing is fetched') : st.mode, ' · '] : '',
      typeof st.uptime_seconds === 'number' ? [h('span', { title: st.uptime_seconds + ' s' }, 'up ', fmtSeconds(st.uptime_seconds)), ' · '] : '',
      st.at ? ['as of ', value(st.at)] : '');
    cards.push(h('div', { class: 'card wide plain' }, head));
    cards.push(card('Pages per second, last hour', h('div', { class: 'chart' }, lineChart(points, 'pages/s')), true));

    const eta = st.estimated_finish || st.eta || thr.estimated_finish;
    const etaSec = st.estimated_finish_seconds ?? (isObj(eta) ? eta.seconds : undefined);
    cards.push(card('Estimated time to finish', h('div', null,
      h('div', { class: 'big', title: typeof etaSec === 'number' ? etaSec + ' s' : null },
        typeof etaSec === 'number' ? fmtSeconds(etaSec) : (typeof eta === 'string' ? value(eta) : '—')),
      isObj(eta) ? kv(eta, P('estimated_finish'), ['seconds']) : null,
      (etaSec === undefined && !eta) ? h('p', { class: 'muted' }, 'Shown when the crawl is bounded.') : null)));

    if (isObj(st.throughput)) cards.push(card('Throughput', kv(thr, P('throughput'), ['history'])));

    const queue = st.queue || {};
    const levels = queue.by_level || queue.levels || live.queued_by_level;
    const levelsPath = queue.by_level ? P('queue', 'by_level') : queue.levels ? P('queue', 'levels') : P('live', 'queued_by_level');
    if (levels) {
      const bars = Array.isArray(levels)
        ? levels.map((v, i) => ['level ' + i, typeof v === 'number' ? v : 0, typeof v === 'number' ? sub(levelsPath, i) : null])
        : Object.entries(levels).map(([k, v]) => ['level ' + k, v, sub(levelsPath, k)]);
      cards.push(card('Queue by level', [h('div', { class: 'chart' }, barChart(bars)),
        h('p', { class: 'muted' }, 'Level 0 is fetched first.')]));
    }
    if (isObj(st.queue)) cards.push(card('Queue', kv(st.queue, P('queue'), ['by_level', 'levels'])));

    for (const [key, title] of [['urls', 'URLs'], ['errors', 'Errors by category'], ['hosts', 'Hosts'],
      ['storage', 'Storage'], ['workers', 'Workers and lag'], ['store', 'Store'], ['recrawl', 'Recrawl schedule'],
      ['cluster', 'Cluster'], ['live', 'This process']]) {
      const v = st[key];
      if (v === undefined || v === null) continue;
      const content = key === 'live' ? kv(v, P(key), ['queued_by_level']) : key === 'workers' ? workers(v)
        : key === 'errors' ? errorRates(v, st.urls)
        // The reasons' descriptions are the titles of their counts, not a card of text.
        : key === 'urls' && isObj(v) ? kv(v, P(key), ['reason_descriptions']) : value(v, P(key));
      cards.push(card(title, content, key === 'workers' || key === 'errors'));
    }
    for (const [key, v] of Object.entries(st)) {
      if (['throughput', 'queue', 'urls', 'errors', 'hosts', 'storage', 'workers', 'store', 'recrawl', 'cluster', 'live',
        'estimated_finish', 'estimated_finish_seconds', 'eta', 'mode', 'at', 'uptime_seconds'].includes(key)) continue;
      cards.push(card(label(key), value(v, P(key))));
    }
    return [h('div', { class: 'grid' }, cards)];
  }

  // errorRates shows each category's count and its share of the fetches.
  function errorRates(e, urls) {
    if (!isObj(e)) return value(e, P('errors'));
    const fetched = isObj(urls) && typeof urls.fetched === 'number' ? urls.fetched : 0;
    return h('table', null, h('thead', null, h('tr', null, h('th', null, 'Category'), h('th', { class: 'num' }, 'Count'),
      h('th', { class: 'num' }, 'Share of fetches'))),
    h('tbody', null, Object.entries(e).map(([k, n]) => h('tr', null, h('td', null, label(k).replace('Http ', 'HTTP ')),
      h('td', { class: 'num' }, value(n, P('errors', k))),
      h('td', { class: 'num' }, typeof n === 'number' && fetched > 0 ? (100 * n / fetched).toFixed(2) + ' %' : '—')))));
  }

  // workers shows each tier's group, its lag and its members' share of the
  // partitions (counts, not the lists: a fetcher may own hundreds).
  function workers(w) {
    if (!isObj(w) || !Array.isArray(w.groups)) return value(w, P('workers'));
    const out = [];
    if (w.error) out.push(h('p', { class: 'error' }, w.error));
    if (w.groups.length === 0) out.push(h('p', { class: 'muted' }, 'no consumer group'));
    w.groups.forEach((g, i) => {
      const p = P('workers', 'groups', i);
      out.push(h('h3', null, g.name, g.state ? ' (' + g.state + ')' : ''));
      out.push(h('p', null, num(g.members, sub(p, 'members')), ' members, lag ',
        typeof g.lag === 'number' ? num(g.lag, sub(p, 'lag')) : '—', ' records',
        isObj(g.lag_by_topic) ? [' (', Object.entries(g.lag_by_topic).map(([t, n], j) => [j ? ', ' : '', t, ' ', num(n, sub(sub(p, 'lag_by_topic'), t))]), ')'] : ''));
      if (Array.isArray(g.member_list) && g.member_list.length) {
        out.push(table(g.member_list.map((m) => ({
          client: m.client_id || m.id, host: m.host,
          // Unlisted is unknown, not none: a member the broker has not described.
          partitions: Object.keys(m.partitions || {}).length ? Object.values(m.partitions).reduce((a, l) => a + l.length, 0) : null,
          lag: Object.values(m.lag || {}).reduce((a, n) => a + n, 0),
        })), null));
      }
    });
    return out;
  }

  // ---- hosts -------------------------------------------------------------------

  const HOST_SORTS = [['busiest', 'Busiest'], ['slowest', 'Slowest'], ['failing', 'Most failing'], ['excluded', 'Most excluded']];

  function rowsOf(data) {
    if (Array.isArray(data)) return data;
    if (isObj(data)) for (const v of Object.values(data)) if (Array.isArray(v)) return v;
    return [];
  }

  async function hostsPage(view) {
    view.appendChild(h('h1', null, 'Hosts'));
    view.appendChild(searchForm('Host, e.g. example.com', (q) => { location.hash = '#/hosts/' + encodeURIComponent(q.toLowerCase()); }));
    const grid = h('div', { class: 'grid lists' });
    view.appendChild(grid);
    await Promise.all(HOST_SORTS.map(async ([sort, title]) => {
      const path = '/api/v1/hosts?sort=' + sort + '&limit=10';
      const box = h('div', { 'data-api': path });
      grid.appendChild(card(title, box, false));
      try {
        const data = await api(path);
        const key = Array.isArray(data) ? '' : (Object.keys(data).find((k) => Array.isArray(data[k])) || '');
        const rows = rowsOf(data);
        box.replaceChildren(rows.length === 0 ? h('p', { class: 'muted' }, 'no hosts')
          : table(rows, key ? P(key) : '', (c, v) => (c === 'host' ? hostLink(v) : undefined)));
      } catch (err) {
        if (err instanceof AuthError) throw err;
        box.replaceChildren(errorBox(err));
      }
    }));
  }

  function searchForm(placeholder, go, initial) {
    const input = h('input', { type: 'search', name: 'q', placeholder, 'aria-label': placeholder, value: initial || '' });
    return h('form', { class: 'search', on: { submit: (ev) => { ev.preventDefault(); const q = input.value.trim(); if (q) go(q); } } },
      input, h('button', { type: 'submit' }, 'Look up'));
  }

  async function hostPage(view, host, seq) {
    const path = '/api/v1/hosts/' + encodeURIComponent(host);
    view.appendChild(h('h1', null, 'Host ', host));
    view.appendChild(h('p', null, h('a', { href: '#/control/' + encodeURIComponent(host) }, 'Steer this host'), ' · ',
      h('a', { href: '#/hosts' }, 'all hosts')));
    const body = h('div', { 'data-api': path });
    view.appendChild(body);
    await poll(seq, async () => {
      let data;
      try {
        data = await api(path);
      } catch (err) {
        if (err.status === 404) { body.replaceChildren(h('p', null, 'The crawler does not know ', host, '.')); return; }
        throw err;
      }
      if (seq !== renderSeq) return;
      body.replaceChildren(h('div', { class: 'grid' }, hostCards(data)));
      body.setAttribute('data-loaded', new Date().toISOString());
    });
  }

  function hostCards(d) {
    const cards = [];
    const order = [['robots', 'robots.txt'], ['politeness', 'Delay'], ['delay', 'Delay'], ['budget', 'Budget'],
      ['patterns', 'URL patterns'], ['rewrites', 'Rewrites learned (duplicate-producing parameters and paths)'], ['queue', 'Queue by level'], ['throughput', 'Throughput'],
      ['recent_fetches', 'Recent fetches'], ['fetches', 'Recent fetches'], ['live', 'Live frontier state'], ['stored', 'Stored state']];
    const done = new Set(['host']);
    for (const [key, title] of order) {
      if (!(key in d) || done.has(key)) continue;
      done.add(key);
      let content;
      const v = d[key];
      if (key === 'queue' && isObj(v) && Array.isArray(v.by_level)) {
        content = [h('p', null, num(v.queued, P(key, 'queued')), ' URLs queued'), levelTable(v.by_level, P(key, 'by_level'))];
      } else if (key === 'throughput' && isObj(v) && Array.isArray(v.history)) {
        content = [h('div', { class: 'chart' }, lineChart(historyPoints(v.history, Date.now()), 'pages/s')), kv(v, P(key), ['history'])];
      } else if ((key === 'recent_fetches' || key === 'fetches') && Array.isArray(v) && v.every(isObj)) {
        content = table(v.map(withDuration), P(key), (c, x) => {
          if (c === 'url' && typeof x === 'string') return urlLink(x);
          if (c === 'duration') return fetchDuration(x);
          return undefined;
        });
      } else {
        content = value(v, P(key));
      }
      // Tables of many columns get the page's width.
      const wide = ['recent_fetches', 'fetches', 'throughput', 'patterns', 'rewrites'].includes(key) ||
        (key === 'robots' && isObj(v) && Array.isArray(v.rules) && v.rules.length > 0);
      cards.push(card(title, content, wide));
    }
    const rest = Object.fromEntries(Object.entries(d).filter(([k]) => !done.has(k)));
    if (Object.keys(rest).length) cards.unshift(card('State', kv(rest, '')));
    return cards;
  }

  // levelTable shows queued URLs per priority level, each row named.
  function levelTable(levels, path) {
    return h('table', null, h('thead', null, h('tr', null, h('th', null, 'Level'), h('th', { class: 'num' }, 'Queued'))),
      h('tbody', null, levels.map((n, i) => h('tr', null,
        h('td', null, 'level ' + i, i === 0 ? ' (fetched first)' : ''), h('td', { class: 'num' }, num(n, sub(path, i)))))));
  }

  // withDuration renames a row's duration_seconds to duration, keeping its
  // place among the columns: the table heads it "Duration", as each cell
  // (fetchDuration) writes its own unit.
  function withDuration(row) {
    if (!('duration_seconds' in row)) return row;
    return Object.fromEntries(Object.entries(row).map(([k, v]) => [k === 'duration_seconds' ? 'duration' : k, v]));
  }

  // fetchDuration shows a fetch's time as "123 ms" or "1.2 s", unknown as a
  // dash. The text is derived, so it carries no data-path: the exact seconds
  // are its title.
  function fetchDuration(sec) {
    if (typeof sec !== 'number') return h('span', { class: 'muted' }, '—');
    return h('span', { title: sec + ' s' }, fmtSeconds(sec));
  }

  // ---- URLs --------------------------------------------------------------------

  function urlsPage(view) {
    view.appendChild(h('h1', null, 'URLs'));
    view.appendChild(searchForm('URL, e.g. https://example.com/page', (q) => { location.hash = '#/urls/' + encodeURIComponent(q); }));
    view.appendChild(h('p', { class: 'muted' }, 'The URL is normalized as the crawler normalizes links, then looked up.'));
  }

  async function urlPage(view, u) {
    view.appendChild(h('h1', null, 'URL'));
    view.appendChild(searchForm('URL', (q) => { location.hash = '#/urls/' + encodeURIComponent(q); }, u));
    const path = '/api/v1/urls?url=' + encodeURIComponent(u);
    const body = h('div', { 'data-api': path });
    view.appendChild(body);
    let d;
    try {
      d = await api(path);
    } catch (err) {
      if (err.status === 404 || err.status === 400) { body.replaceChildren(h('p', { class: 'error' }, err.message)); return; }
      throw err;
    }
    const cards = [];
    const done = new Set();
    const take = (key) => { done.add(key); return d[key]; };
    const head = {};
    // A URL not fetched yet has no status and no links: "Status 0" and "0
    // links on the page" would read as an answer and an empty page.
    const fetched = Boolean(d.fetched_at) || (Array.isArray(d.captures) && d.captures.length > 0);
    for (const k of ['normalized', 'url', 'host', 'state', 'reason', 'reason_description', 'depth', 'priority', 'crawl_id', 'discovered_at', 'fetched_at', 'attempts', 'status', 'location']) {
      if (!(k in d)) continue;
      if (!fetched && (k === 'status' || k === 'fetched_at' || k === 'attempts')) { done.add(k); continue; }
      head[k] = take(k);
    }
    if (!fetched) head.fetched = 'not yet';
    if (typeof head.host === 'string') head.host = hostLink(head.host);
    if (typeof head.location === 'string') head.location = urlLink(head.location);
    const headDl = h('dl', { class: 'kv' });
    for (const [k, v] of Object.entries(head)) {
      headDl.appendChild(h('dt', null, label(k)));
      headDl.appendChild(h('dd', null, v instanceof Node ? v : value(v, P(k))));
    }
    cards.push(card('State', headDl, true));
    if ('robots' in d) cards.push(card('robots.txt decision', value(take('robots'), P('robots'))));
    if ('captures' in d) {
      const caps = take('captures');
      cards.push(card('Captures', Array.isArray(caps) && caps.length && caps.every(isObj)
        ? captureTable(caps) : value(caps, P('captures')), true));
    }
    const links = take('links');
    if (isObj(links) && (Array.isArray(links.out) || Array.isArray(links.in))) {
      // A redirect's one out-link is where it went, not a link on a page.
      const outWhat = typeof d.location === 'string' ? ' link: the redirect\'s target' : ' links on the page';
      cards.push(card('Out-links', fetched ? [h('p', null, num(links.out_count, P('links', 'out_count')), outWhat), linkList(links.out)]
        : h('p', { class: 'muted' }, 'Not fetched yet: its links are not known.')));
      cards.push(card('In-links', [h('p', null, num(links.in_count, P('links', 'in_count')), ' pages link here, from ',
        num(links.inlink_hosts, P('links', 'inlink_hosts')), ' hosts'), linkList(links.in)]));
    } else if (links !== undefined) {
      cards.push(card('Links', value(links, P('links'))));
    }
    for (const [k, v] of Object.entries(d)) if (!done.has(k)) cards.push(card(label(k), value(v, P(k))));
    body.replaceChildren(h('div', { class: 'grid' }, cards));
    body.setAttribute('data-loaded', new Date().toISOString());
  }

  function linkList(v) {
    if (!Array.isArray(v) || v.length === 0) return h('p', { class: 'muted' }, 'none');
    return h('ul', { class: 'links' }, v.map((x, i) => {
      const u = typeof x === 'string' ? x : (x && (x.url || x.normalized));
      if (!u) return h('li', { class: 'muted' }, 'not admitted (hash ', (x && x.hash) || i, ')');
      return h('li', null, urlLink(u), x && x.state ? [' ', h('span', { class: 'tag ' + x.state }, x.state)] : '');
    }));
  }

  const CAPTURE_COLS = ['id', 'fetched_at', 'duration_seconds', 'status', 'location', 'content_type', 'length', 'payload_digest', 'change', 'changed',
    'revisit_of', 'near_duplicate_of', 'title', 'document_reason', 'warc'];

  // captureTable shows a capture per row, its WARC record a download; a
  // document's reason carries its description as a title.
  function captureTable(caps) {
    const rows = caps.map((c) => withDuration(Object.fromEntries(CAPTURE_COLS.filter((k) => k in c).map((k) => [k, c[k]]))));
    return table(rows, P('captures'), (c, v, r, i) => {
      if (c === 'warc') return isObj(v) && v.href ? warcButton(v.href, v.length) : value(v, null);
      if (c === 'document_reason' && typeof v === 'string') {
        return h('span', { class: 'doc-reason', title: caps[i].document_reason_description || null }, v);
      }
      if (c === 'duration') return fetchDuration(v);
      if (c === 'location' && typeof v === 'string') return urlLink(v);
      if (c === 'content_type' && typeof v === 'string') return unbroken(v);
      if ((c === 'revisit_of' || c === 'near_duplicate_of') && isObj(v)) return v.url ? urlLink(v.url) : 'capture ' + v.id;
      return undefined;
    });
  }

  // The WARC record needs the token, so it is fetched here and handed to the
  // browser as a download rather than linked.
  function warcButton(href, length) {
    const id = href.split('/').slice(-2)[0];
    return h('button', {
      type: 'button', class: 'secondary', 'data-warc': id, on: {
        click: async (ev) => {
          const btn = ev.currentTarget;
          btn.disabled = true;
          try {
            const resp = await api(href, { raw: true });
            const blob = await resp.blob();
            const a = h('a', { href: URL.createObjectURL(blob), download: 'capture-' + id + '.warc.gz' });
            document.body.appendChild(a);
            a.click();
            a.remove();
            setTimeout(() => URL.revokeObjectURL(a.href), 10000);
            btn.textContent = 'WARC record (' + fmtBytes(blob.size) + ')';
          } catch (err) {
            if (!(err instanceof AuthError)) btn.after(errorBox(err));
          } finally {
            btn.disabled = false;
          }
        },
      },
    }, 'WARC record' + (length ? ' (' + fmtBytes(length) + ')' : ''));
  }

  // ---- search ------------------------------------------------------------------

  // searchPage shows the full-text search (GET /api/v1/search); the route's
  // argument is the query string after "?", so a search can be linked.
  async function searchPage(view, arg) {
    view.appendChild(h('h1', null, 'Search'));
    const params = new URLSearchParams(arg.replace(/^\?/, ''));
    const q = h('input', { type: 'search', name: 'q', placeholder: 'Words, e.g. event loop', 'aria-label': 'Words', value: params.get('q') || '' });
    const host = h('input', { type: 'text', name: 'host', placeholder: 'any host', 'aria-label': 'Host', value: params.get('host') || '' });
    view.appendChild(h('form', { class: 'search', on: { submit: (ev) => {
      ev.preventDefault();
      const p = new URLSearchParams();
      if (q.value.trim()) p.set('q', q.value.trim());
      if (host.value.trim()) p.set('host', host.value.trim());
      location.hash = '#/search/' + encodeURIComponent('?' + p.toString());
    } } }, q, host, h('button', { type: 'submit' }, 'Search')));
    if (!params.get('q')) {
      view.appendChild(h('p', { class: 'muted' }, 'Finds the crawled pages that hold every word, best first, in their title, headings, description and text.'));
      return;
    }
    const path = '/api/v1/search?' + params.toString();
    const body = h('div', { 'data-api': path });
    view.appendChild(body);
    const list = h('ol', { class: 'hits' });
    body.appendChild(list);
    const more = async (cursor) => {
      let d;
      try {
        d = await api(path + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
      } catch (err) {
        if (err.status === 400 || err.status === 501) { body.replaceChildren(h('p', { class: 'error' }, err.message)); return; }
        throw err;
      }
      d.results.forEach((r) => list.appendChild(hitItem(r)));
      if (!list.children.length) body.appendChild(h('p', { class: 'muted' }, 'No page holds every word.'));
      if (d.next_cursor) {
        const btn = h('button', { type: 'button', class: 'secondary', 'data-more': '', on: { click: () => { btn.remove(); more(d.next_cursor); } } }, 'More results');
        body.appendChild(btn);
      }
      body.setAttribute('data-loaded', new Date().toISOString());
    };
    await more('');
  }

  function hitItem(r) {
    return h('li', { class: 'hit', 'data-url': r.url },
      h('a', { class: 'title', href: '#/urls/' + encodeURIComponent(r.url) }, r.title || r.url),
      h('div', { class: 'muted' }, h('a', { href: r.url, rel: 'noreferrer noopener', target: '_blank' }, r.url)),
      h('p', { class: 'snippet' }, snippetNodes(r.snippet)),
      h('div', { class: 'muted' }, 'fetched ', r.fetched_at ? new Date(r.fetched_at).toLocaleString() : 'unknown', ' · ', r.status, ' · ',
        hostLink(r.host), r.duplicates ? ' · ' + r.duplicates + ' duplicate' + (r.duplicates > 1 ? 's' : '') : '', ' ',
        warcButton(r.warc_href)));
  }

  // snippetNodes turns the API's snippet (escaped text with <mark> around the
  // matched words) into nodes, never into markup: the page's text stays text.
  function snippetNodes(s) {
    const unescape = (t) => t.replace(/&(lt|gt|amp|#39|#34);/g, (_, e) => ({ lt: '<', gt: '>', amp: '&', '#39': "'", '#34': '"' })[e]);
    return String(s || '').split(/(<mark>.*?<\/mark>)/).filter((p) => p).map((p) => {
      const m = /^<mark>(.*)<\/mark>$/.exec(p);
      return m ? h('mark', null, unescape(m[1])) : unescape(p);
    });
  }

  // ---- crawl log -------------------------------------------------------------

  const LOG_FILTERS = [['host', 'Host', 'any host'], ['status', 'Status', '404 or 4xx'], ['type', 'Type', 'text/html']];

  // logPage is the crawl log: the newest captures, narrowed by the filters in
  // its address (#/log/host=example.com&status=4xx), refreshed every 2 s.
  async function logPage(view, arg, seq) {
    view.appendChild(h('h1', null, 'Crawl log'));
    const given = new URLSearchParams(arg || '');
    const inputs = LOG_FILTERS.map(([k, , hint]) => h('input', { name: k, id: 'log-' + k, placeholder: hint, value: given.get(k) || '' }));
    view.appendChild(h('form', {
      class: 'inline', id: 'log-form', on: {
        submit: (ev) => {
          ev.preventDefault();
          const q = new URLSearchParams();
          inputs.forEach((el) => { if (el.value.trim()) q.set(el.name, el.value.trim()); });
          location.hash = '#/log/' + q.toString();
        },
      },
    }, LOG_FILTERS.map(([, title], i) => h('label', null, title, inputs[i])), h('button', { type: 'submit', id: 'log-filter' }, 'Filter')));
    view.appendChild(h('p', { class: 'muted' }, 'The newest 100 captures that match, newest first. A fetch that got no answer (DNS, connection, timeout) has no capture: the overview counts those.'));
    const q = new URLSearchParams();
    for (const [k] of LOG_FILTERS) if (given.get(k)) q.set(k, given.get(k));
    q.set('limit', '100');
    const path = '/api/v1/captures?' + q.toString();
    const body = h('div', { 'data-api': path, id: 'crawl-log' });
    view.appendChild(body);
    await poll(seq, async () => {
      let d;
      try {
        d = await api(path);
      } catch (err) {
        if (err.status === 400) { body.replaceChildren(errorBox(err)); return; }
        throw err;
      }
      if (seq !== renderSeq) return;
      const rows = (d.captures || []).map(withDuration);
      body.replaceChildren(rows.length === 0 ? h('p', { class: 'muted' }, 'No capture matches.')
        : table(rows, P('captures'), (c, v) => ((c === 'url' || c === 'location') && typeof v === 'string' ? urlLink(v)
          : c === 'content_type' && typeof v === 'string' ? unbroken(v) : c === 'duration' ? fetchDuration(v) : undefined)));
      body.setAttribute('data-loaded', new Date().toISOString());
    });
  }

  // ---- report ------------------------------------------------------------------

  // reportPage shows the crawl summed up (GET /api/v1/report), the report.html
  // every stop writes. It reads every capture, so it is read once, not polled.
  async function reportPage(view, _arg, seq) {
    view.appendChild(h('h1', null, 'Report'));
    const path = '/api/v1/report';
    const body = h('div', { 'data-api': path });
    const load = async () => {
      const r = await api(path);
      if (seq !== renderSeq) return;
      body.replaceChildren(h('div', { class: 'grid' }, reportCards(r)));
      body.setAttribute('data-loaded', new Date().toISOString());
    };
    view.appendChild(h('p', { class: 'muted' }, 'The crawl summed up from its store, as the report.html every stop writes into the data folder has it. ',
      h('button', { type: 'button', class: 'secondary', id: 'report-refresh', on: { click: () => load().catch((err) => body.replaceChildren(errorBox(err))) } }, 'Read again')));
    view.appendChild(body);
    await load();
  }

  function reportCards(r) {
    const tl = isObj(r.timeline) ? r.timeline : {};
    const width = tl.bucket_seconds || 1;
    const over = (f) => (tl.points || []).map((p) => ({ t: Date.parse(p.time), v: f(p) }));
    const cards = [
      card('Pages per second over time', h('div', { class: 'chart' }, lineChart(over((p) => p.pages / width), 'pages/s')), true),
      card('Bytes per second over time', h('div', { class: 'chart' }, lineChart(over((p) => p.bytes_per_second), 'per second', fmtBytes)), true),
      card('Errors over time', [h('div', { class: 'chart' }, lineChart(over((p) => p.errors / width), '4xx and 5xx answers/s')),
        h('p', { class: 'muted' }, 'In buckets of ', num(width, P('timeline', 'bucket_seconds')), ' s.')], true),
      card('HTTP status', breakdown(r.statuses, P('statuses'), 'Status')),
      card('Content types', breakdown(r.content_types, P('content_types'), 'Type')),
      card('Traps held, and why', Array.isArray(r.held) && r.held.length ? table(r.held, P('held'))
        : h('p', { class: 'muted' }, 'No URL was held as a trap.')),
    ];
    const seeds = r.seeds === null ? h('p', { class: 'muted' }, 'This store cannot list its seeds.')
      : (r.seeds || []).length === 0 ? h('p', { class: 'muted' }, 'No seed.')
        : table(r.seeds, P('seeds'), (c, v) => {
          if (c === 'url' || c === 'redirect_to') return v ? urlLink(v) : '';
          if (c === 'status' && !v) return h('span', { class: 'muted' }, 'not fetched');
          return undefined;
        });
    cards.push(card('Seeds', seeds, true));
    cards.push(card('Busiest hosts', (r.busiest_hosts || []).length
      ? table(r.busiest_hosts, P('busiest_hosts'), (c, v) => (c === 'host' ? hostLink(v) : undefined)) : h('p', { class: 'muted' }, 'No host.'), true));
    return cards;
  }

  // breakdown shows counts by key, largest first.
  function breakdown(m, path, head) {
    const rows = Object.entries(isObj(m) ? m : {}).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    if (rows.length === 0) return h('p', { class: 'muted' }, 'none');
    return h('table', null, h('thead', null, h('tr', null, h('th', null, head), h('th', { class: 'num' }, 'Captures'))),
      h('tbody', null, rows.map(([k, n]) => h('tr', null, h('td', null, k), h('td', { class: 'num' }, num(n, sub(path, k)))))));
  }

  // ---- control -----------------------------------------------------------------

  // action runs one control call from a form and shows its answer beside it;
  // then() refreshes what the action changed (the state, the audit log).
  function action(out, fn, then) {
    return async (ev) => {
      if (ev) ev.preventDefault();
      out.replaceChildren(h('span', { class: 'muted' }, 'sending…'));
      try {
        const res = await fn();
        out.replaceChildren(res instanceof Node ? res : h('span', { class: 'ok', 'data-result': 'ok' }, 'done'),
          isObj(res) ? value(res.control || res, null) : null);
      } catch (err) {
        if (err instanceof AuthError) return;
        out.replaceChildren(h('span', { class: 'error', 'data-result': 'error', role: 'alert' }, err.message));
      }
      if (then) await then();
    };
  }

  async function control(view, hostArg) {
    view.appendChild(h('h1', null, 'Control'));
    const grid = h('div', { class: 'grid' });
    view.appendChild(grid);

    const stateBox = h('div', { id: 'control-state', 'data-api': CONTROL.state });
    const auditBox = h('div', { id: 'audit', 'data-api': CONTROL.audit + '?limit=50' });
    const exclList = h('div', { id: 'exclusion-list', 'data-api': CONTROL.exclusions });
    const refresh = () => Promise.all([loadState(stateBox), loadAudit(auditBox), loadExclusions(exclList, refresh)]);

    // Seeds: the same gates and answers as POST /api/v1/frontier/urls.
    const seedOut = h('div', { class: 'result', id: 'seed-result' });
    const seedText = h('textarea', { name: 'urls', id: 'seed-urls', placeholder: 'one URL per line', 'aria-label': 'Seed URLs' });
    const crawlID = h('input', { name: 'crawl_id', id: 'seed-crawl-id', placeholder: 'optional' });
    const prio = h('input', { name: 'priority', id: 'seed-priority', type: 'number', min: 0, max: 100, placeholder: '0 = computed' });
    grid.appendChild(card('Add seeds', h('form', {
      id: 'seed-form', on: {
        submit: action(seedOut, async () => {
          const urls = seedText.value.split('\n').map((x) => x.trim()).filter(Boolean);
          if (urls.length === 0) throw new Error('no URL given');
          const p = parseInt(prio.value, 10);
          const body = { urls: urls.map((u) => (p > 0 ? { url: u, priority: p } : { url: u })) };
          if (crawlID.value.trim()) body.crawl_id = crawlID.value.trim();
          const r = await api('/api/v1/frontier/urls', { method: 'POST', json: body });
          return h('div', null,
            h('p', null, fmtNum(r.accepted), ' accepted, ', fmtNum(r.rejected), ' rejected, ', fmtNum(r.duplicate), ' duplicate'),
            table(r.results, null, (c, v) => (c === 'status' ? h('span', { class: 'tag ' + v, 'data-status': v }, v)
              : c === 'normalized' ? urlLink(v) : undefined)));
        }),
      },
    }, seedText, h('div', { class: 'inline' }, h('label', null, 'Crawl ID', crawlID), h('label', null, 'Priority', prio)),
    h('p', null, h('button', { type: 'submit', id: 'seed-submit' }, 'Submit seeds')), seedOut), true));

    // The whole crawl.
    const crawlOut = h('div', { class: 'result', id: 'crawl-result' });
    grid.appendChild(card('Whole crawl', h('div', null,
      h('p', { class: 'muted' }, 'Pausing stops new requests; what is in flight finishes. Nothing queued is lost.'),
      h('button', { type: 'button', id: 'crawl-pause', on: { click: action(crawlOut, () => api(CONTROL.crawlPause, { method: 'POST' }), refresh) } }, 'Pause crawl'),
      ' ',
      h('button', { type: 'button', id: 'crawl-resume', class: 'secondary', on: { click: action(crawlOut, () => api(CONTROL.crawlResume, { method: 'POST' }), refresh) } }, 'Resume crawl'),
      crawlOut, h('h3', null, 'Controls in force'), stateBox), true));

    // One host.
    const hostIn = h('input', { name: 'host', id: 'host-name', placeholder: 'host[:port]', value: hostArg || '', required: true });
    const hostOut = h('div', { class: 'result', id: 'host-result' });
    // A host the crawl does not know is refused (a typo), unless asked for.
    const createIn = h('input', { type: 'checkbox', id: 'host-create', name: 'create' });
    const delayIn = h('input', { name: 'delay_seconds', id: 'host-delay', type: 'number', step: 'any', min: 0, placeholder: 'seconds' });
    const budgetIn = h('input', { name: 'page_budget', id: 'host-budget', type: 'number', min: 0, placeholder: 'pages' });
    // The render mode: '' leaves it as it is, auto gives the host back to the evidence.
    const renderIn = h('select', { name: 'render', id: 'host-render' }, h('option', { value: '' }, 'unchanged'),
      h('option', { value: 'auto' }, 'by evidence'), h('option', { value: 'always' }, 'always'), h('option', { value: 'never' }, 'never'));
    const hostName = () => {
      const v = hostIn.value.trim().toLowerCase();
      if (!v) throw new Error('give a host');
      return v;
    };
    grid.appendChild(card('One host', h('div', null,
      h('form', { class: 'inline', on: { submit: (ev) => ev.preventDefault() } }, h('label', null, 'Host', hostIn)),
      h('p', null,
        h('button', { type: 'button', id: 'host-pause', on: { click: action(hostOut, () => api(CONTROL.hostPause(hostName()) + (createIn.checked ? '?create=true' : ''), { method: 'POST' }), refresh) } }, 'Pause host'), ' ',
        h('button', { type: 'button', id: 'host-resume', class: 'secondary', on: { click: action(hostOut, () => api(CONTROL.hostResume(hostName()), { method: 'POST' }), refresh) } }, 'Resume host'), ' ',
        h('button', { type: 'button', id: 'host-export', class: 'secondary', on: { click: action(hostOut, () => exportQueue(hostName())) } }, 'Export queue')),
      h('p', null, h('label', null, createIn, ' pause it even if the crawl does not know it yet')),
      h('form', {
        class: 'inline', id: 'host-settings', on: {
          submit: action(hostOut, () => {
            const body = {};
            if (delayIn.value !== '') body.delay_seconds = parseFloat(delayIn.value);
            if (budgetIn.value !== '') body.page_budget = parseInt(budgetIn.value, 10);
            if (renderIn.value !== '') body.render = renderIn.value;
            if (Object.keys(body).length === 0) throw new Error('give a delay, a page budget or a render mode');
            return api(CONTROL.host(hostName()), { method: 'PATCH', json: body });
          }, refresh),
        },
      }, h('label', null, 'Delay (s), never below robots Crawl-delay', delayIn), h('label', null, 'Page budget', budgetIn),
      h('label', null, 'Render in the browser', renderIn),
      h('button', { type: 'submit', id: 'host-apply' }, 'Apply')),
      hostOut)));

    // Exclusions.
    const exclOut = h('div', { class: 'result', id: 'exclusion-result' });
    const patIn = h('input', { name: 'pattern', id: 'exclusion-pattern', placeholder: 'https://shop.example/calendar/*', required: true, size: 34 });
    const synIn = h('select', { name: 'syntax', id: 'exclusion-syntax' }, h('option', { value: 'glob' }, 'glob'), h('option', { value: 'regexp' }, 'regexp'));
    const scopeIn = h('input', { name: 'host', id: 'exclusion-host', placeholder: 'all hosts' });
    grid.appendChild(card('Exclude a URL pattern', h('div', null,
      h('p', { class: 'muted' }, 'Matched against the normalized URL; applied to what is queued as well as to what is found later. ',
        'glob: the whole URL must match, * is any run of characters; regexp: RE2, anywhere unless anchored.'),
      h('form', {
        class: 'inline', id: 'exclusion-form', on: {
          submit: action(exclOut, () => {
            const body = { pattern: patIn.value.trim(), syntax: synIn.value };
            if (scopeIn.value.trim()) body.host = scopeIn.value.trim().toLowerCase();
            return api(CONTROL.exclusions, { method: 'POST', json: body });
          }, refresh),
        },
      }, h('label', null, 'Pattern', patIn), h('label', null, 'Syntax', synIn), h('label', null, 'Host', scopeIn),
      h('button', { type: 'submit', id: 'exclusion-add' }, 'Exclude')),
      exclOut, exclList), true));

    grid.appendChild(card('Audit log', auditBox, true));
    await refresh();
  }

  // loadInto fills box from an API route with render(answer), or with the error.
  async function loadInto(box, path, render) {
    try {
      const d = await api(path);
      box.replaceChildren(...[].concat(render(d)));
      box.setAttribute('data-loaded', new Date().toISOString());
    } catch (err) {
      if (err instanceof AuthError) throw err;
      box.replaceChildren(errorBox(err));
    }
  }

  function loadState(box) {
    return loadInto(box, CONTROL.state, (d) => {
      const hosts = (d.hosts || []).filter(isObj);
      return [
        h('p', null, d.paused ? h('strong', { class: 'error', 'data-crawl-paused': 'true' }, 'The crawl is paused')
          : h('span', { class: 'ok', 'data-crawl-paused': 'false' }, 'The crawl runs'),
        ' · ', num(d.paused_hosts, P('paused_hosts')), ' hosts paused · ', num(d.exclusions, P('exclusions')), ' exclusion patterns'),
        hosts.length ? table(hosts, P('hosts'), (c, v) => (c === 'host' ? hostLink(v) : undefined)) : h('p', { class: 'muted' }, 'no host override'),
      ];
    });
  }

  function loadAudit(box) {
    return loadInto(box, CONTROL.audit + '?limit=50', (d) => {
      const rows = (d.entries || []).map((e) => Object.assign({}, e, { params: e.params === undefined || e.params === null ? '' : JSON.stringify(e.params) }));
      return rows.length ? table(rows, P('entries'), (c, v) => (c === 'params' ? h('code', null, v) : undefined))
        : h('p', { class: 'muted' }, 'no control action yet');
    });
  }

  function loadExclusions(box, refresh) {
    return loadInto(box, CONTROL.exclusions, (d) => {
      const rows = d.exclusions || [];
      if (rows.length === 0) return h('p', { class: 'muted' }, 'no exclusion pattern');
      return table(rows, P('exclusions'), (c, v, row) => (c === 'id' ? [String(v), ' ', h('button', {
        type: 'button', class: 'secondary', 'data-delete': v,
        on: { click: action(box, () => api(CONTROL.exclusion(row.id), { method: 'DELETE' }), refresh) },
      }, 'Delete')] : undefined));
    });
  }

  async function exportQueue(host) {
    const resp = await api(CONTROL.hostQueue(host), { raw: true });
    const blob = await resp.blob();
    const a = h('a', { href: URL.createObjectURL(blob), download: host.replace(/[^a-z0-9.-]/g, '_') + '-queue.txt' });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    const lines = (await blob.text()).split('\n').filter(Boolean).length;
    return h('span', { class: 'ok', 'data-result': 'ok', 'data-exported': lines }, 'exported ' + lines + ' queued URLs');
  }

  // ---- start -----------------------------------------------------------------------

  // config.json says whether the API needs a token, so that a visitor without
  // one sees the login form rather than a refused call.
  async function start() {
    try {
      const r = await fetch('config.json', { cache: 'no-store' });
      if (r.ok) access = await r.json();
    } catch (err) {
      statusLine.textContent = 'console configuration unreadable: ' + err.message;
    }
    window.addEventListener('hashchange', () => { if (loginSection.hidden) route(); });
    if (access.tokens && !access.public && !sessionStorage.getItem(TOKEN_KEY)) {
      showLogin('');
      return;
    }
    loginSection.hidden = true;
    route();
  }

  start();
})();
