import { PartnerTagsDashboard } from './dashboard-element.js';

export type { DashboardFilter, DashboardRange, DashboardSession, DashboardState } from './dashboard-element.js';
export { PartnerTagsDashboard };

/** The tag name; defined on import unless the page defined it already. */
export const TAG_NAME = 'partner-tags-dashboard';

if (typeof customElements !== 'undefined' && !customElements.get(TAG_NAME)) {
  customElements.define(TAG_NAME, PartnerTagsDashboard);
}

declare global {
  interface HTMLElementTagNameMap {
    'partner-tags-dashboard': PartnerTagsDashboard;
  }
}
