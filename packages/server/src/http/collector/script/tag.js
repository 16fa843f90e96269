// Partner Tags: the tag script, served per tag from the merchant's collector host as /t/<tagId>.js.
// Dependency-free. It only ever talks to its own host, and never throws into the host page.
((w, d) => {
  try {
    const TAG = '__TAG_ID__';
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
    const post = (events, tries) => {
      const body = JSON.stringify({ tagId: TAG, events });
      const retry = () => {
        if (tries < 2) setTimeout(() => post(events, tries + 1), 1000 * (tries + 1));
      };
      // A string body is text/plain: no preflight. keepalive lets it outlive a navigation.
      if (w.fetch) {
        fetch(endpoint.href, { method: 'POST', body, credentials: 'include', keepalive: true })
          .then((r) => {
            if (r.status === 503 || r.status === 429 || r.status >= 500) retry();
          })
          .catch(retry);
      } else beacon(body);
    };
    const flush = (hidden) => {
      clearTimeout(timer);
      timer = 0;
      while (queue.length) {
        const events = queue.splice(0, BATCH);
        if (hidden) {
          if (!beacon(JSON.stringify({ tagId: TAG, events }))) post(events, 2);
        } else post(events, 0);
      }
    };
    const track = (name, data) => {
      if (typeof name !== 'string' || !name.trim() || name.length > 100) return;
      let copy = {};
      try {
        copy = data === undefined ? {} : JSON.parse(JSON.stringify(data));
      } catch {}
      queue.push({ id: uid(), event_name: name, data: copy === undefined ? {} : copy });
      if (queue.length >= BATCH) flush(false);
      else if (!timer) timer = setTimeout(() => flush(false), DELAY);
    };
    const ptag = (command, name, data) => {
      try {
        if (command === 'track') track(name, data);
      } catch {}
    };
    ptag.loaded = true;
    w.ptag = ptag;
    track('PageView', { url: location.href, path: location.pathname, referrer: d.referrer, title: d.title });
    for (const args of prior?.q || []) ptag(...args);
    d.addEventListener('visibilitychange', () => {
      if (d.visibilityState === 'hidden') flush(true);
    });
    w.addEventListener('pagehide', () => flush(true));
  } catch {}
})(window, document);
