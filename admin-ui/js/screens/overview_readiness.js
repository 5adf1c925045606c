// The overview's readiness lines, from the body of GET /readyz: each component's state and
// since when, what it says now, and its last failure (what failed and when), which /readyz
// keeps after the component recovered. Pure: the overview draws what this returns.

import {formatTime} from '../dom.js';

export function componentLines(components) {
  return Object.entries(components || {}).map(([name, c]) => ({
    name,
    ready: Boolean(c.ready),
    state: (c.ready ? 'ready' : 'not ready') + (c.since ? ' since ' + formatTime(c.since) : ''),
    detail: c.detail || '',
    lastFailure: c.last_failure ? 'last failure ' + formatTime(c.last_failure.at) + ': ' + c.last_failure.reason : '',
  }));
}
