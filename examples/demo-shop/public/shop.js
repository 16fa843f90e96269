// The shop's own script: buttons send events through the tag (`ptag`), and the side panel shows
// what the API has stored (GET /api/activity, read by the shop's server with the SDK).
document.addEventListener('click', (click) => {
  const button = click.target.closest('button[data-track]');
  if (!button) return;
  window.ptag('track', button.dataset.track, JSON.parse(button.dataset.event));
  button.textContent = `${button.dataset.track} sent`;
  // The tag sends what is queued when the page goes away (sendBeacon): navigating at once is fine.
  if (button.dataset.then) window.location.assign(button.dataset.then);
});

const panel = document.getElementById('activity');
const line = (text, className) => {
  const element = document.createElement(className === 'event' ? 'li' : 'p');
  element.className = className;
  element.textContent = text;
  return element;
};

async function refresh() {
  try {
    const res = await fetch('/api/activity');
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const { events, total, today } = await res.json();
    const list = document.createElement('ol');
    for (const e of events) {
      list.append(line(`${e.time.slice(11, 19)} ${e.name} ${JSON.stringify(e.data ?? {})}`, 'event'));
    }
    const revenue = today.revenue.map((r) => `${r.amount} ${r.currency}`).join(', ') || '0';
    panel.replaceChildren(
      panel.querySelector('h2'),
      line(
        `${total} events stored; today: ${today.pageviews} page views, ${today.visitors} visitors, ` +
          `${today.purchases} purchases (${revenue})`,
        'totals',
      ),
      list,
    );
  } catch (error) {
    panel.replaceChildren(panel.querySelector('h2'), line(`Could not read the activity: ${error.message}`, 'error'));
  }
}
refresh();
setInterval(refresh, 2000);
