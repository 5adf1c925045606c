// A line diff for showing a change before it is saved (the policies screen): the longest
// common subsequence of the two texts' lines, reported as the lines removed and added with a
// few unchanged lines of context around each change. Pure functions, no DOM; O(n·m) in time
// and memory, meant for documents of a few hundred lines.

// The edit script: [{op: ' ' | '-' | '+', line}] turning `before` into `after`.
export function lineDiff(before, after) {
  const a = before.split('\n');
  const b = after.split('\n');
  // common[i][j]: the length of the longest common subsequence of a[i..] and b[j..].
  const common = Array.from({length: a.length + 1}, () => new Int32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      common[i][j] = a[i] === b[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const script = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      script.push({op: ' ', line: a[i]});
      i += 1;
      j += 1;
    } else if (i < a.length && (j === b.length || common[i + 1][j] >= common[i][j + 1])) {
      script.push({op: '-', line: a[i]});
      i += 1;
    } else {
      script.push({op: '+', line: b[j]});
      j += 1;
    }
  }
  return script;
}

// The script as text, "- " and "+ " before changed lines, unchanged lines kept only within
// `context` lines of a change and "…" where some were left out. Empty when nothing changed.
export function formatDiff(script, context = 2) {
  const changed = script.map((s) => s.op !== ' ');
  if (!changed.includes(true)) return '';
  const near = (k) => {
    for (let d = -context; d <= context; d += 1) if (changed[k + d]) return true;
    return false;
  };
  const out = [];
  let skipped = false;
  script.forEach((s, k) => {
    if (!near(k)) {
      skipped = true;
      return;
    }
    if (skipped) out.push('…');
    skipped = false;
    out.push(s.op + ' ' + s.line);
  });
  if (skipped) out.push('…');
  return out.join('\n');
}
