// A searchable, paged list of the admin API (GET path?search=&limit=&offset=, answered with
// {data, total, has_more}): a search box (partial, case-insensitive, on the daemon), the page
// drawn by the caller, and Previous/Next with "1–50 of 120". The daemon bounds the page size.

import {get} from '../api.js';
import {errorLine, h, replace} from '../dom.js';

const PAGE_SIZE = 50;
const TYPING_PAUSE_MS = 250;

// id: the prefix of element ids; what: "API keys", "users"; draw(rows) -> the page's element.
// Returns {element, load()}; load() redraws the current page (after a change).
export function pagedList({id, path, what, searchHint, draw}) {
  let offset = 0;
  let typing = null;
  const search = h('input', {id: id + '-search', type: 'search', placeholder: searchHint, spellcheck: 'false',
                             'aria-label': 'Search ' + what});
  const body = h('div', {id: id + '-list'});
  const count = h('span', {class: 'detail', id: id + '-count', role: 'status'});
  const previous = h('button', {type: 'button', class: 'small', disabled: true, onclick: () => {
    offset = Math.max(0, offset - PAGE_SIZE);
    load();
  }}, 'Previous');
  const next = h('button', {type: 'button', class: 'small', disabled: true, onclick: () => {
    offset += PAGE_SIZE;
    load();
  }}, 'Next');
  search.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      offset = 0;
      load();
    }, TYPING_PAUSE_MS);
  });

  async function load() {
    const text = search.value.trim();
    try {
      const page = await get(path, {query: {search: text, limit: PAGE_SIZE, offset}});
      const rows = page.data || [];
      replace(body, draw(rows));
      body.dataset.search = text;  // which search the rows answer (a newer one may be typed)
      replace(count, rows.length ? (offset + 1) + '–' + (offset + rows.length) + ' of ' + page.total
                                 : '0 of ' + page.total);
      previous.disabled = offset === 0;
      next.disabled = !page.has_more;
    } catch (e) {
      replace(body, errorLine(e, what));
    }
  }

  const element = h('div', {class: 'paged'},
                    h('div', {class: 'pager'}, search, count, previous, next), body);
  return {element, load};
}
