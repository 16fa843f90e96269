// The partner page's only script: the element asks this backend for a merchant session (the API
// key never reaches the browser), first and again whenever the session is about to expire.
const dashboard = document.querySelector('partner-tags-dashboard');

dashboard.fetchSession = async () => {
  const res = await fetch('/api/session', { method: 'POST' });
  if (!res.ok) throw new Error(`POST /api/session answered ${res.status}`);
  return res.json(); // { token, expiresAt, merchantId }
};

// A theme switch of the page; without it the element follows the system's light or dark setting.
const toggle = document.getElementById('theme');
toggle.setAttribute('aria-pressed', String(matchMedia('(prefers-color-scheme: dark)').matches));
toggle.addEventListener('click', () => {
  const dark = toggle.getAttribute('aria-pressed') !== 'true';
  toggle.setAttribute('aria-pressed', String(dark));
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  dashboard.setAttribute('theme', dark ? 'dark' : 'light');
});
