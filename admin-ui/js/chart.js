// A small line chart drawn as inline SVG (no library, no canvas): one or two series over
// the session, scaled to their own maximum. Gaps (null) break the line.

const NS = 'http://www.w3.org/2000/svg';
const WIDTH = 240;
const HEIGHT = 56;

function svg(tag, attrs) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
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
  const title = svg('title', {});
  title.textContent = label;
  root.prepend(title);
  return root;
}
