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
    // Batches not yet acknowledged: kept (at most MAX_EVENTS events, MAX_AGE ms) in memory and in
    // sessionStorage, so a batch that met a network error, 429 or 503 is sent again, with the same
    // event ids, after a backoff with jitter (or the server's Retry-After), here or on the next page.
    const KEY = `ptag:${TAG}`;
    const MAX_EVENTS = 300;
    const MAX_AGE = 300000;
    let box = [];
    let retryTimer = 0;
    const save = () => {
      try {
        if (box.length) sessionStorage.setItem(KEY, JSON.stringify(box));
        else sessionStorage.removeItem(KEY);
      } catch {}
    };
    const trim = () => {
      const now = Date.now();
      box = box.filter((b) => now - b.t0 < MAX_AGE);
      let n = 0;
      for (const b of box) n += b.events.length;
      while (n > MAX_EVENTS && box.length > 1) n -= box.shift().events.length;
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
      save();
    };
    const failed = (b, retryAfter) => {
      b.busy = false;
      b.tries += 1;
      const backoff = Math.min(60000, 1000 * 2 ** (b.tries - 1));
      const wait = retryAfter > 0 ? retryAfter * 1000 : backoff;
      b.due = Date.now() + wait * (0.75 + Math.random() * 0.5);
      trim();
      save();
      schedule();
    };
    const send = (b) => {
      b.busy = true;
      const body = JSON.stringify({ tagId: TAG, consent: b.c, events: b.events });
      // A string body is text/plain: no preflight. keepalive lets it outlive a navigation.
      fetch(endpoint.href, { method: 'POST', body, credentials: 'include', keepalive: true })
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
    // Consent (docs/decisions/consent.md): the visitor's answer, remembered for the tag (strictly
    // necessary storage: it is what keeps a denial), and GPC as a standing denial. The collector
    // enforces the tag's mode on every batch; `consent` only says what the visitor answered.
    const CHOICE = `ptag:consent:${TAG}`;
    let choice = null;
    try {
      const v = localStorage.getItem(CHOICE);
      if (v === 'granted' || v === 'denied') choice = v;
    } catch {}
    const gpc = CONSENT.gpc && navigator.globalPrivacyControl === true;
    // What the next events are sent under: 'granted' or 'implied' (the muid cookie), 'cookieless'
    // (no cookie: the collector names the visitor by a daily hash), undefined (mode none), 'wait'
    // (opt-in before an answer: held in memory, sent on 'granted') or 'off' (not collected).
    const state = () => {
      if (CONSENT.mode === 'none') return CONSENT.cookieless ? 'cookieless' : undefined;
      if (choice === 'granted') return 'granted';
      const without = CONSENT.cookieless ? 'cookieless' : 'off';
      if (choice === 'denied' || (gpc && CONSENT.mode === 'opt-out')) return without;
      if (CONSENT.mode === 'opt-in') return CONSENT.cookieless ? 'cookieless' : 'wait';
      return 'implied';
    };
    const held = [];
    const flush = (hidden) => {
      clearTimeout(timer);
      timer = 0;
      const c = state();
      while (queue.length) {
        const b = { events: queue.splice(0, BATCH), c, t0: Date.now(), tries: 0, due: 0 };
        if (hidden || !w.fetch) {
          // The page may be going away: sendBeacon outlives it (fire and forget); kept if refused.
          if (beacon(JSON.stringify({ tagId: TAG, consent: c, events: b.events }))) continue;
          if (!w.fetch) continue;
        }
        box.push(b);
      }
      trim();
      save();
      if (w.fetch) pump();
    };
    try {
      const stored = JSON.parse(sessionStorage.getItem(KEY) || '[]');
      if (Array.isArray(stored)) {
        for (const b of stored) {
          if (b && Array.isArray(b.events))
            box.push({ events: b.events, c: b.c, t0: b.t0, tries: b.tries || 0, due: 0 });
        }
      }
    } catch {}
    // Batches of an earlier page collected under a cookie wait no more once the visitor said no.
    if (state() === 'cookieless' || state() === 'off') box = box.filter((b) => b.c === 'cookieless');
    const track = (name, data) => {
      if (typeof name !== 'string' || !name.trim() || name.length > 100) return;
      let copy = {};
      try {
        copy = data === undefined ? {} : JSON.parse(JSON.stringify(data));
      } catch {}
      const event = { id: uid(), event_name: name, data: copy === undefined ? {} : copy };
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
      save();
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
    // Query strings and fragments often carry tokens (password resets, sessions, e-mail links): the
    // page view records origin and path, and of the page's query only the five utm_* campaign
    // parameters (docs/decisions/collector.md).
    const bare = (u, utm) => {
      try {
        const x = new URL(u);
        let q = '';
        if (utm) {
          for (const k of ['source', 'medium', 'campaign', 'term', 'content']) {
            const v = x.searchParams.get(`utm_${k}`);
            if (v !== null) q += `${q ? '&' : '?'}utm_${k}=${encodeURIComponent(v)}`;
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
    track('PageView', {
      url: bare(location.href, true),
      path: location.pathname,
      referrer: bare(d.referrer),
      title: d.title,
    });
    for (const args of early) if (args[0] !== 'consent') ptag(...args);
    if (box.length && w.fetch) pump();
    d.addEventListener('visibilitychange', () => {
      if (d.visibilityState === 'hidden') flush(true);
    });
    w.addEventListener('pagehide', () => flush(true));
  } catch {}
})(window, document);
