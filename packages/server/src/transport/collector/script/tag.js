// Partner Tags: the tag script, served per tag from the merchant's collector host as /t/<tagId>.js.
// Dependency-free. It only ever talks to its own host, and never throws into the host page.
((w, d) => {
  try {
    const TAG = '__TAG_ID__';
    // The tag's consent settings, inlined per tag by the collector: { mode, gpc, cookieless }.
    const CONSENT = __TAG_CONSENT__;
    const prior = w.ptag;
    if (prior?.loaded) return;
    const BATCH = 20;
    const DELAY = 500;
    const self = d.currentScript || d.querySelector(`script[src*="/t/${TAG}.js"]`);
    const endpoint = new URL('/e', self ? self.src : location.href);
    if (location.protocol === 'https:') endpoint.protocol = 'https:';
    const queue = [];
    let timer = 0;
    const uid = () =>
      w.crypto && crypto.randomUUID
        ? crypto.randomUUID()
        : Date.now().toString(36) + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
    const beacon = (body) => {
      try {
        return navigator.sendBeacon(endpoint.href, body);
      } catch {
        return false;
      }
    };
    // `sentAt` (this clock) lets the collector correct the events' times for a clock that is off.
    const body = (b) => JSON.stringify({ tagId: TAG, consent: b.c, events: b.events, sentAt: Date.now() });
    // Batches not yet acknowledged: kept in memory, so a batch that met a network error, 429 or 503 is sent again, with
    // the same event ids, after a backoff with jitter.
    const MAX_EVENTS = 300;
    const MAX_AGE = 300000;
    let box = [];
    let retryTimer = 0;
    const trim = () => {
      const now = Date.now();
      box = box.filter((b) => now - b.t0 < MAX_AGE);
      let n = 0;
      for (const b of box) n += b.events.length;
      while (n > MAX_EVENTS && box.length > 1) n -= box.shift().events.length;
    };
    // And in localStorage until acknowledged, where consent allows storage and fetch can bring an answer: the site's
    // next page, in this tab or another, sends them again with the same ids.
    const KEY = `ptag:${TAG}`;
    const STORE_MAX = 1000;
    const STORE_CHARS = 500000;
    const stores = () => w.fetch && [undefined, 'granted', 'implied'].includes(state());
    const stored = () => {
      try {
        const now = Date.now();
        return JSON.parse(localStorage.getItem(KEY)).filter((e) => now - Date.parse(e.event_time) < 86400000);
      } catch {
        return [];
      }
    };
    // Takes `events` out of storage, and puts them back last (collected under consent `c`) if `keep`.
    const sync = (events, keep, c) => {
      try {
        const ok = stores();
        const ids = new Set(events.map((e) => e.id));
        let list = ok ? stored().filter((e) => !ids.has(e.id)) : [];
        if (ok && keep) list = list.concat(events.map((e) => ({ ...e, c })));
        list = list.slice(-STORE_MAX);
        let n = JSON.stringify(list).length;
        while (n > STORE_CHARS) n -= JSON.stringify(list.shift()).length + 1;
        if (list.length) localStorage.setItem(KEY, JSON.stringify(list));
        else localStorage.removeItem(KEY);
      } catch {}
    };
    const schedule = () => {
      clearTimeout(retryTimer);
      const waiting = box.filter((b) => !b.busy);
      if (!waiting.length) return;
      const due = Math.min(...waiting.map((b) => b.due));
      retryTimer = setTimeout(pump, Math.max(0, due - Date.now()));
    };
    const done = (b) => {
      box = box.filter((x) => x !== b);
      sync(b.events);
    };
    const failed = (b, retryAfter) => {
      b.busy = false;
      b.tries += 1;
      const backoff = Math.min(60000, 1000 * 2 ** (b.tries - 1));
      const wait = retryAfter > 0 ? retryAfter * 1000 : backoff;
      b.due = Date.now() + wait * (0.75 + Math.random() * 0.5);
      trim();
      schedule();
    };
    const send = (b) => {
      b.busy = true;
      // A string body is text/plain: no preflight. keepalive lets it outlive a navigation.
      fetch(endpoint.href, { method: 'POST', body: body(b), credentials: 'include', keepalive: true })
        .then((r) => {
          if (r.status === 429 || r.status >= 500) failed(b, Number(r.headers.get('retry-after')) || 0);
          else done(b);
        })
        .catch(() => failed(b, 0))
        .catch(() => {});
    };
    const pump = () => {
      try {
        const now = Date.now();
        trim();
        for (const b of box) if (!b.busy && b.due <= now) send(b);
        schedule();
      } catch {}
    };
    // Consent (docs/decisions/consent.md): the visitor's answer, remembered for the tag (strictly necessary storage: it
    // is what keeps a denial), and GPC as a standing denial.
    const CHOICE = `ptag:consent:${TAG}`;
    let choice = null;
    try {
      const v = localStorage.getItem(CHOICE);
      if (v === 'granted' || v === 'denied') choice = v;
    } catch {}
    const gpc = CONSENT.gpc && navigator.globalPrivacyControl === true;
    // What the next events are sent under: 'granted' or 'implied', 'cookieless', undefined, 'wait' or 'off'.
    const state = () => {
      if (CONSENT.mode === 'none') return CONSENT.cookieless ? 'cookieless' : undefined;
      if (choice === 'granted') return 'granted';
      const without = CONSENT.cookieless ? 'cookieless' : 'off';
      if (choice === 'denied' || (gpc && CONSENT.mode === 'opt-out')) return without;
      if (CONSENT.mode === 'opt-in') return CONSENT.cookieless ? 'cookieless' : 'wait';
      return 'implied';
    };
    const held = [];
    const flush = (leaving) => {
      clearTimeout(timer);
      timer = 0;
      const c = state();
      sync(queue, true, c);
      while (queue.length) {
        const b = { events: queue.splice(0, BATCH), c, t0: Date.now(), tries: 0, due: 0 };
        // The page is going away: sendBeacon outlives it (fire and forget: a stored copy covers a
        // failure, sent again by the next page); kept here if refused.
        if ((leaving || !w.fetch) && (beacon(body(b)) || !w.fetch)) continue;
        box.push(b);
      }
      trim();
      if (w.fetch) pump();
    };
    const track = (name, data, at) => {
      if (typeof name !== 'string' || !name.trim() || name.length > 100) return;
      let copy = {};
      try {
        copy = data === undefined ? {} : JSON.parse(JSON.stringify(data));
      } catch {}
      const event = {
        id: uid(),
        event_name: name,
        event_time: new Date(at || Date.now()).toISOString(),
        data: copy === undefined ? {} : copy,
      };
      const c = state();
      if (c === 'off') return;
      if (c === 'wait') {
        if (held.length < MAX_EVENTS) held.push(event);
        return;
      }
      queue.push(event);
      if (queue.length >= BATCH) flush(false);
      else if (!timer) timer = setTimeout(() => flush(false), DELAY);
    };
    // Asks the collector to clear the muid cookie (httpOnly: only it can).
    const clearCookie = () => {
      const body = JSON.stringify({ tagId: TAG, consent: 'denied', events: [] });
      if (w.fetch)
        fetch(endpoint.href, { method: 'POST', body, credentials: 'include', keepalive: true }).catch(() => {});
      else beacon(body);
    };
    const consent = (answer) => {
      if (CONSENT.mode === 'none' || (answer !== 'granted' && answer !== 'denied')) return;
      try {
        localStorage.setItem(CHOICE, answer);
      } catch {}
      if (answer === 'granted') {
        // What was queued leaves under the state it was collected in; what waited for the answer follows.
        flush(false);
        choice = answer;
        for (const event of held.splice(0)) queue.push(event);
        if (queue.length) flush(false);
        return;
      }
      // Withdrawn: nothing collected under a cookie leaves any more, and the cookie goes.
      const was = state();
      choice = answer;
      held.length = 0;
      if (was !== state()) queue.length = 0;
      box = box.filter((b) => b.c === 'cookieless' || b.busy);
      sync([]);
      clearCookie();
    };
    const ptag = (command, name, data) => {
      try {
        if (command === 'track') track(name, data);
        else if (command === 'consent') consent(name);
      } catch {}
    };
    ptag.loaded = true;
    w.ptag = ptag;
    // Query strings and fragments often carry tokens: the page view records origin and path, and of the page's query
    // only the five utm_* campaign parameters and whether an ad click id was there.
    const bare = (u, utm) => {
      try {
        const x = new URL(u);
        let q = '';
        if (utm) {
          for (const k of 'utm_source utm_medium utm_campaign utm_term utm_content gclid gbraid wbraid dclid msclkid fbclid ttclid li_fat_id twclid'.split(
            ' ',
          )) {
            const v = x.searchParams.get(k);
            if (v) q += `${q ? '&' : '?'}${k}=${k[3] === '_' ? encodeURIComponent(v) : 1}`;
          }
        }
        return x.origin + x.pathname + q;
      } catch {
        return '';
      }
    };
    // Answers queued before the script loaded apply before its first event.
    const early = Array.from(prior?.q || []);
    for (const args of early) if (args[0] === 'consent') ptag(...args);
    // GPC with no answer yet: a cookie from before goes, once per session.
    if (gpc && CONSENT.mode !== 'none' && choice === null) {
      try {
        if (!sessionStorage.getItem(`${CHOICE}:gpc`)) {
          sessionStorage.setItem(`${CHOICE}:gpc`, '1');
          clearCookie();
        }
      } catch {}
    }
    // What an earlier page of the site left unacknowledged leaves again, with the same ids: with
    // this page's first batch if collected under the same consent, else in batches of its own.
    if (stores())
      for (const { c, ...e } of stored()) {
        const last = box[box.length - 1];
        if (c === state()) queue.push(e);
        else if (last?.c === c && last.events.length < BATCH) last.events.push(e);
        else box.push({ events: [e], c, t0: Date.now(), tries: 0, due: 0 });
      }
    // The page view in progress: its time `t0`, and how long it was visible (`vis` ms, and since
    // `since` when it is visible now).
    let page = {};
    const visible = () => d.visibilityState === 'visible';
    const tick = (on) => {
      const now = Date.now();
      if (page.since) page.vis += now - page.since;
      page.since = on && now;
    };
    // Engagement: the page view's visible ms so far, dated its time plus those ms, when they grew.
    const engage = () => {
      if (page.vis > page.sent) {
        page.sent = page.vis;
        track('Engagement', { path: page.path, engaged_ms: page.vis }, page.t0 + page.vis);
      }
    };
    const view = (referrer) => {
      const now = Date.now();
      const { href, pathname, search } = location;
      page = { key: pathname + search, href, path: pathname, t0: now, vis: 0, sent: 0, since: visible() && now };
      track('PageView', { url: bare(href, true), path: pathname, referrer, title: d.title }, now);
    };
    view(bare(d.referrer));
    for (const args of early) if (args[0] !== 'consent') ptag(...args);
    if (box.length && w.fetch) pump();
    // Single-page apps: a history navigation to another path or query is a page view, referred by
    // the page before it, which it ends; a change of the fragment alone is not.
    const nav = () => {
      try {
        if (location.pathname + location.search === page.key) return;
        tick();
        engage();
        view(bare(page.href));
      } catch {}
    };
    const H = w.history;
    for (const k of ['pushState', 'replaceState']) {
      const f = H?.[k];
      if (f)
        H[k] = function (...a) {
          const r = f.apply(this, a);
          nav();
          return r;
        };
    }
    w.addEventListener('popstate', nav);
    // Hidden, the page lives on (a tab switch): with a stored copy, fetch (keepalive), whose answer
    // removes the copy; a beacon would leave it for the next page to send again. Else by sendBeacon.
    const leave = (e) => {
      try {
        tick();
        engage();
        flush(e.type === 'pagehide' || !stores());
      } catch {}
    };
    d.addEventListener('visibilitychange', (e) => (visible() ? tick(1) : leave(e)));
    w.addEventListener('pagehide', leave);
  } catch {}
})(window, document);
