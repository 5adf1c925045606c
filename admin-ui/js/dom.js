// Small DOM helpers shared by the screens: element construction without HTML strings (so no
// markup is ever built from data), the confirmation dialog, and value formatting.

// h('button', {type: 'button', onclick: f}, 'Save'): attributes starting with "on" become
// listeners, `dataset` and `class` are handled, null/false attributes are skipped.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'value') el.value = value;
    else setAttribute(el, key, value === true ? '' : value);
  }
  append(el, children);
  return el;
}

// What would break or disguise a line of text (control characters but tab and newline, the
// line and paragraph separators, bidi embeddings, overrides and isolates) shown as \uXXXX, as the
// audit log and kimictl show it: a key named "prod-\u202eyek-tset" must not read "prod-test-key".
const DISGUISING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028-\u202e\u2066-\u2069]/g;
export function shown(text) {
  return text.replace(DISGUISING, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

// Attributes the reader sees (a tooltip) or hears (what a screen reader says) hold text like
// an element's: through shown(). Others (ids, values sent back, data-*) keep their bytes.
const SHOWN_ATTRIBUTES = new Set(['title', 'aria-label', 'aria-description', 'aria-roledescription',
                                  'aria-valuetext', 'placeholder', 'alt', 'label']);

// Every attribute the console sets, on HTML and SVG elements alike, is set here.
export function setAttribute(el, name, value) {
  el.setAttribute(name, SHOWN_ATTRIBUTES.has(name) ? shown(String(value)) : String(value));
}

// An element's whole text, for elements not built with h() (SVG, and text that changes in place).
export function setText(el, text) {
  el.textContent = shown(String(text));
  return el;
}

// Every text child goes through shown(): data from the appliance is text, whatever it holds.
function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(shown(String(child))));
  }
}

export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// A labelled form field; the input gets `id` so that the label points at it.
export function field(label, input, hint) {
  return h('div', {class: 'field'}, h('label', {for: input.id}, label), input,
           hint ? h('small', {class: 'hint'}, hint) : null);
}

export function table(columns, rows, emptyText = 'Nothing yet.') {
  if (rows.length === 0) return h('p', {class: 'empty'}, emptyText);
  return h('div', {class: 'table-scroll'},
           h('table', {},
             h('thead', {}, h('tr', {}, columns.map((c) => h('th', {scope: 'col'}, c)))),
             h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((c) => h('td', {}, c)))))));
}

// An error line for a failed call; `unavailable` errors say the feature is not in this
// appliance rather than that something broke.
export function errorLine(error, what = '') {
  if (error && error.unavailable) {
    return h('p', {class: 'unavailable', role: 'status'},
             (what || 'This feature') + ' is not available on this appliance (' + error.message + ').');
  }
  return h('p', {class: 'error', role: 'alert'}, (what ? what + ': ' : '') + (error ? error.message : 'failed'));
}

// A modal confirmation stating what will happen; resolves true when confirmed. `body`: one
// or more paragraphs (strings) or elements. Keyboard: focus starts on the confirm button,
// Enter confirms, Escape cancels, Tab stays inside the dialog (the browser's modal dialog),
// and focus returns to where it was when the dialog closes.
export function confirmAction({title, body, confirmLabel, danger = false}) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const dialog = h('dialog', {class: 'confirm', 'aria-labelledby': 'confirm-title', 'aria-describedby': 'confirm-body'});
    const close = (answer) => {
      dialog.close();
      dialog.remove();
      if (opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
      resolve(answer);
    };
    const confirm = h('button', {type: 'button', class: danger ? 'danger' : 'primary', onclick: () => close(true)},
                      confirmLabel);
    dialog.append(
        h('h2', {id: 'confirm-title'}, title),
        h('div', {id: 'confirm-body'}, [].concat(body).map((line) => (typeof line === 'string' ? h('p', {}, line) : line))),
        h('div', {class: 'actions'},
          h('button', {type: 'button', class: 'quiet', onclick: () => close(false)}, 'Cancel'), confirm),
        h('p', {class: 'hint'}, 'Enter: ' + confirmLabel.toLowerCase() + ' · Escape: cancel'));
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      close(false);
    });
    // A focused button already answers Enter with its own click.
    dialog.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !(e.target instanceof HTMLButtonElement)) {
        e.preventDefault();
        close(true);
      }
    });
    document.body.append(dialog);
    dialog.showModal();
    confirm.focus();
  });
}

export function formatBytes(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return (i === 0 ? String(Math.round(n)) : n.toFixed(1)) + ' ' + units[i];
}

export function formatNumber(n, digits = 1) {
  if (n === null || n === undefined || Number.isNaN(n)) return '–';
  return Math.abs(n) >= 100 ? String(Math.round(n)) : n.toFixed(digits);
}

export function formatSeconds(s) {
  if (s === null || s === undefined || Number.isNaN(s)) return '–';
  return s < 1 ? Math.round(s * 1000) + ' ms' : s.toFixed(2) + ' s';
}

export function formatTime(iso) {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '–';
}

// Submits a form's handler with its button disabled and errors shown in `status`.
export function busy(button, status, work) {
  return async (event) => {
    if (event) event.preventDefault();
    button.disabled = true;
    replace(status);
    try {
      await work();
    } catch (e) {
      replace(status, errorLine(e));
    } finally {
      button.disabled = false;
    }
  };
}
