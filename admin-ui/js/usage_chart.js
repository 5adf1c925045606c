// The Usage screen's chart: stacked bars per UTC day as inline SVG (no library, no canvas, no
// inline style), with a y axis in the chart's unit, dates on the x axis and a legend naming
// each colour. Colours come from the stylesheet (.usage-series-0 ...).

import {h, setAttribute, setText} from './dom.js';
import {axis, compact, grouped, labelledDays, shortDate, stackMax} from './usage_model.js';

const NS = 'http://www.w3.org/2000/svg';
const WIDTH = 560;
const HEIGHT = 220;
const LEFT = 52;    // room for the y labels
const BOTTOM = 36;  // room for the dates and the axis title
const TOP = 12;

function svg(tag, attrs, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) setAttribute(el, k, v);
  if (text !== undefined) setText(el, text);
  return el;
}

// dates: ['YYYY-MM-DD'] (UTC days); series: [{label, values}] (usage_model.stackSeries); unit:
// what the values count ("tokens"). Returns a <figure> with the chart and its legend.
export function stackedBars({dates, series, unit, title, id}) {
  const plotW = WIDTH - LEFT - 8;
  const plotH = HEIGHT - TOP - BOTTOM;
  const {max, ticks} = axis(stackMax(series));
  const y = (v) => TOP + plotH - (v / max) * plotH;
  const slot = plotW / Math.max(1, dates.length);
  const root = svg('svg', {viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'usage-chart', role: 'img',
                           'aria-label': title + ', ' + unit + ' per UTC day, ' + dates[0] + ' to ' +
                               dates[dates.length - 1]});
  root.append(svg('title', {}, title));
  for (const t of ticks) {
    root.append(svg('line', {x1: LEFT, x2: WIDTH - 8, y1: y(t), y2: y(t), class: 'grid'}));
    root.append(svg('text', {x: LEFT - 6, y: y(t) + 4, class: 'tick', 'text-anchor': 'end'}, compact(t)));
  }
  root.append(svg('text', {x: 12, y: TOP + plotH / 2, class: 'axis-title', 'text-anchor': 'middle',
                           transform: `rotate(-90 12 ${TOP + plotH / 2})`}, unit));
  dates.forEach((date, i) => {
    let base = 0;
    series.forEach((s, k) => {
      const v = s.values[i];
      if (!v) return;
      const bar = svg('rect', {x: LEFT + i * slot + slot * 0.15, width: Math.max(1, slot * 0.7), y: y(base + v),
                               height: Math.max(0.5, y(base) - y(base + v)), class: 'usage-series-' + k});
      bar.append(svg('title', {}, s.label + ', ' + date + ' (UTC): ' + grouped(v) + ' ' + unit));
      root.append(bar);
      base += v;
    });
  });
  root.append(svg('line', {x1: LEFT, x2: WIDTH - 8, y1: TOP + plotH, y2: TOP + plotH, class: 'axis'}));
  for (const i of labelledDays(dates.length)) {
    root.append(svg('text', {x: LEFT + (i + 0.5) * slot, y: TOP + plotH + 14, class: 'tick', 'text-anchor': 'middle'},
                    shortDate(dates[i])));
  }
  root.append(svg('text', {x: LEFT + plotW / 2, y: HEIGHT - 4, class: 'axis-title', 'text-anchor': 'middle'},
                  'day (UTC)'));
  const legend = series.length === 0
      ? h('p', {class: 'empty'}, 'No usage in this range.')
      : h('ul', {class: 'usage-legend'}, series.map((s, k) =>
          h('li', {}, h('span', {class: 'swatch usage-series-' + k, 'aria-hidden': 'true'}), s.label, ' ',
            h('span', {class: 'num'}, grouped(s.values.reduce((a, b) => a + b, 0)) + ' ' + unit))));
  return h('figure', {class: 'usage-figure', id}, h('figcaption', {}, title), root, legend);
}
