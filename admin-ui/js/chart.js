// Line charts drawn as inline SVG (no library, no canvas). lineChart: a small sparkline of one
// or two series over the session, scaled to their own maximum. timeChart: a chart over a time
// range with a value axis in its unit (round ticks from zero), a UTC time axis, gaps where a
// series has no value or misses a point, and a legend naming each series. The tick and label
// arithmetic (niceTicks, timeTicks, formatValue) is pure, for node's test runner.

import {setAttribute, setText} from './dom.js';

const NS = 'http://www.w3.org/2000/svg';
const WIDTH = 240;
const HEIGHT = 56;

function svg(tag, attrs) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) setAttribute(el, k, v);
  return el;
}

// series: [{values: [number|null], className}]; returns an <svg> with role img and `label`.
export function lineChart(series, label) {
  const root = svg('svg', {viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'chart', role: 'img', 'aria-label': label,
                           preserveAspectRatio: 'none'});
  root.append(svg('line', {x1: 0, y1: HEIGHT - 0.5, x2: WIDTH, y2: HEIGHT - 0.5, class: 'axis'}));
  const all = series.flatMap((s) => s.values).filter((v) => v !== null && Number.isFinite(v));
  const max = Math.max(1e-9, ...all);
  const length = Math.max(2, ...series.map((s) => s.values.length));
  for (const s of series) {
    let points = [];
    const flush = () => {
      if (points.length === 1) points.push(points[0].replace(/^[\d.]+/, (x) => String(Number(x) + 1)));
      if (points.length > 1) root.append(svg('polyline', {points: points.join(' '), class: 'line ' + s.className}));
      points = [];
    };
    s.values.forEach((v, i) => {
      if (v === null || !Number.isFinite(v)) {
        flush();
        return;
      }
      const x = (i / (length - 1)) * WIDTH;
      const y = HEIGHT - 2 - (v / max) * (HEIGHT - 6);
      points.push(x.toFixed(1) + ',' + y.toFixed(1));
    });
    flush();
  }
  root.prepend(setText(svg('title', {}), label));
  return root;
}

// Round axis values from 0 to at least `max`, about `count` steps of 1, 2 or 5 × 10^k.
export function niceTicks(max, count = 4) {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= raw * (1 - 1e-9));
  const ticks = [0];
  while (ticks[ticks.length - 1] < max * (1 - 1e-9)) ticks.push(Number((ticks.length * step).toPrecision(12)));
  return ticks;
}

const MINUTE = 60 * 1000;
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 180, 240, 360, 720].map((m) => m * MINUTE);

// Times on whole steps (1 minute to 12 hours) within [from, to], about `count` of them.
export function timeTicks(from, to, count = 5) {
  const span = to - from;
  if (!(span > 0)) return [];
  const step = TIME_STEPS.find((candidate) => span / candidate <= count) || TIME_STEPS[TIME_STEPS.length - 1];
  const ticks = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) ticks.push(t);
  return ticks;
}

// "HH:MM" in UTC (the axis title says so).
export function formatClock(ms) {
  return new Date(ms).toISOString().slice(11, 16);
}

// A value in the chart's unit: 's' (shown in ms below a second), 'bytes' (binary prefixes),
// 'share' (a fraction shown in %), or a plain count with the unit's name after it.
export function formatValue(value, unit) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  const trim = (n, digits) => String(Number(n.toFixed(digits)));
  if (unit === 's') return value === 0 ? '0 s' : value < 1 ? trim(value * 1000, 1) + ' ms' : trim(value, 2) + ' s';
  if (unit === 'share') return trim(value * 100, 2) + '%';
  if (unit === 'bytes') {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (Math.abs(value) >= 1024 && i < units.length - 1) {
      value /= 1024;
      i += 1;
    }
    return trim(value, 1) + ' ' + units[i];
  }
  const number = Math.abs(value) >= 100 ? String(Math.round(value)) : trim(value, 2);
  return unit ? number + ' ' + unit : number;
}

// The polylines of one series: [[x, y], ...] runs, split where a value is missing or where
// two points are further apart than `maxGap` (the sampler was not running).
export function seriesRuns(points, maxGap) {
  const runs = [];
  let run = [];
  let lastT = null;
  for (const [t, v] of points) {
    const gap = lastT !== null && t - lastT > maxGap;
    if (v === null || v === undefined || !Number.isFinite(v) || gap) {
      if (run.length) runs.push(run);
      run = [];
    }
    if (v !== null && v !== undefined && Number.isFinite(v)) run.push([t, v]);
    lastT = t;
  }
  if (run.length) runs.push(run);
  return runs;
}

const T_WIDTH = 560;
const T_HEIGHT = 200;
const MARGIN = {left: 64, right: 12, top: 10, bottom: 34};

function text(x, y, content, className, anchor = 'middle') {
  return setText(svg('text', {x, y, class: className, 'text-anchor': anchor}), content);
}

// spec: {title, unit, from, to (ms), maxGap (ms), series: [{name, points: [[t, v]]}]}; returns a
// <figure> with the chart (role img, labelled by the title) and its legend.
export function timeChart(spec) {
  const plotW = T_WIDTH - MARGIN.left - MARGIN.right;
  const plotH = T_HEIGHT - MARGIN.top - MARGIN.bottom;
  const values = spec.series.flatMap((s) => s.points.map((p) => p[1])).filter((v) => v !== null && Number.isFinite(v));
  const ticks = niceTicks(Math.max(0, ...values));
  const top = ticks[ticks.length - 1];
  const x = (t) => MARGIN.left + ((t - spec.from) / (spec.to - spec.from)) * plotW;
  const y = (v) => MARGIN.top + plotH - (v / top) * plotH;
  const root = svg('svg', {viewBox: `0 0 ${T_WIDTH} ${T_HEIGHT}`, class: 'time-chart', role: 'img',
                           'aria-label': spec.title + ' (' + spec.unitLabel + ')'});
  root.append(setText(svg('title', {}), spec.title));
  for (const tick of ticks) {
    root.append(svg('line', {x1: MARGIN.left, x2: MARGIN.left + plotW, y1: y(tick), y2: y(tick), class: 'grid'}));
    root.append(text(MARGIN.left - 6, y(tick) + 4, formatValue(tick, spec.unit), 'tick', 'end'));
  }
  for (const t of timeTicks(spec.from, spec.to)) {
    root.append(svg('line', {x1: x(t), x2: x(t), y1: MARGIN.top + plotH, y2: MARGIN.top + plotH + 4, class: 'axis'}));
    root.append(text(x(t), MARGIN.top + plotH + 16, formatClock(t), 'tick'));
  }
  root.append(svg('line', {x1: MARGIN.left, x2: MARGIN.left + plotW, y1: MARGIN.top + plotH, y2: MARGIN.top + plotH,
                           class: 'axis'}));
  root.append(text(MARGIN.left + plotW / 2, T_HEIGHT - 2, 'time (UTC)', 'axis-title'));
  const legend = document.createElement('ul');
  legend.className = 'legend';
  spec.series.forEach((s, i) => {
    const className = 'series-' + (i % 6);
    for (const run of seriesRuns(s.points, spec.maxGap)) {
      if (run.length === 1) {
        root.append(svg('circle', {cx: x(run[0][0]), cy: y(run[0][1]), r: 2, class: 'dot ' + className}));
      } else {
        const points = run.map(([t, v]) => x(t).toFixed(1) + ',' + y(v).toFixed(1)).join(' ');
        root.append(svg('polyline', {points, class: 'line ' + className, 'data-series': s.name}));
      }
    }
    const item = document.createElement('li');
    item.className = className;
    const latest = s.points.length ? s.points[s.points.length - 1][1] : null;
    setText(item, s.name + ': ' + formatValue(latest, spec.unit));
    legend.append(item);
  });
  const figure = document.createElement('figure');
  figure.className = 'time-chart';
  figure.dataset.chart = spec.id || '';
  const caption = document.createElement('figcaption');
  setText(caption, spec.title + ' (' + spec.unitLabel + ')');
  figure.append(caption, root, legend);
  return figure;
}
