// The overview's budget banner: when any monthly token budget is at its alert threshold this
// UTC month, a line saying how many, linking to the Usage screen. Read once when the overview
// opens (not polled). Kept apart from the overview so that screen stays its own.

import {get} from './api.js';
import {h, replace} from './dom.js';

// Roles that may read budgets (usage.read, docs/security.md).
export const BUDGET_ROLES = ['admin', 'operator', 'auditor'];

export function budgetBanner() {
  const banner = h('div', {id: 'budget-banner', class: 'budget-alert', role: 'alert', hidden: true});
  get('/admin/v1/budgets').then((budgets) => {
    const alerting = budgets.data.filter((b) => b.alerting);
    if (alerting.length === 0) return;
    const names = alerting.map((b) => b.scope + ' ' + (b.name || b.subject)).join(', ');
    replace(banner, h('strong', {}, alerting.length === 1 ? '1 token budget' : alerting.length + ' token budgets'),
            ' at the alert threshold this month (UTC): ', names, '. ', h('a', {href: '#/usage'}, 'See Usage'));
    banner.hidden = false;
  }).catch(() => {});  // the overview works without it
  return banner;
}
