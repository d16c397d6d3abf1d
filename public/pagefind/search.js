// The search page's script (search/index.html): searches the site's Pagefind index, in shards,
// through Pagefind's JavaScript API (pagefind.js, in the first shard's folder) and lists the
// results. A classic script, not a module, so that it runs from a folder opened from disk too,
// where browsers load no module and no index, and can say so. Every text of a result is set as text; Pagefind's
// excerpt is rebuilt from its text, its matches in bold, so nothing from the index becomes markup.
"use strict";

(() => {
  const form = document.getElementById("search-form");
  const input = document.getElementById("search-query");
  const status = document.getElementById("search-status");
  const list = document.getElementById("search-results");
  const more = document.getElementById("search-more");
  const STEP = 20; // results loaded at a time: each is one small request
  let engine = null; // a promise of Pagefind's API, or of null where it cannot run
  let results = []; // the latest search's results, loaded STEP at a time
  let shown = 0;
  let generation = 0; // the latest search: an older one that ends late is dropped
  let timer = 0;

  function say(text) {
    status.textContent = text;
  }

  function unavailable(id, words) {
    document.getElementById(id).hidden = false;
    say(words);
    return null;
  }

  function load() {
    if (engine === null) {
      engine = (async () => {
        if (location.protocol === "file:") {
          return unavailable("search-from-disk", "Search does not work in a copy opened from disk: see below.");
        }
        if (!form.dataset.bundle) {
          return null; // nothing indexed yet: the page says so
        }
        try {
          // A script's import() resolves against the script's address: the page's is meant.
          const pagefind = await import(new URL(form.dataset.bundle, document.baseURI).href);
          // Result URLs from the site's root, whatever folder the site is served from: made relative in entry().
          const options = { baseUrl: "/", excerptLength: 24 };
          await pagefind.options(options);
          await pagefind.init();
          // The index comes in shards, the script's own the first: each other is merged, with the
          // same options (Pagefind gives a merged index none of the first one's), all at once.
          // Pagefind lists each in the order merged before it loads it, so results tie in order.
          const shards = (form.dataset.shards || "").split(" ").filter((s) => s);
          await Promise.all(shards.map((s) => pagefind.mergeIndex(new URL(s, document.baseURI).href, options)));
          return pagefind;
        } catch (error) {
          return unavailable("search-failed", "The search index could not be loaded: see below.");
        }
      })();
    }
    return engine;
  }

  function plural(n, one, many) {
    return n === 1 ? `1 ${one}` : `${n} ${many}`;
  }

  function excerpt(html) {
    const out = document.createElement("p");
    out.className = "search-excerpt how";
    out.append("Found in: ");
    const parsed = new DOMParser().parseFromString(html, "text/html");
    for (const node of parsed.body.childNodes) {
      if (node.nodeName === "MARK") {
        const match = document.createElement("strong");
        match.textContent = node.textContent;
        out.append(match);
      } else {
        out.append(node.textContent);
      }
    }
    return out;
  }

  function entry(data) {
    const item = document.createElement("li");
    const title = document.createElement("p");
    title.className = "search-result-title";
    const link = document.createElement("a");
    // Pagefind's URLs start at the site's root; the page's own links are relative, for any prefix and for disk.
    link.href = form.dataset.root + data.url.replace(/^\/+/, "");
    link.textContent = data.meta.title || data.url;
    title.append(link);
    item.append(title);
    if (data.meta.summary) {
      const summary = document.createElement("p");
      summary.className = "meta";
      summary.textContent = data.meta.summary;
      item.append(summary);
    }
    if (data.excerpt) {
      item.append(excerpt(data.excerpt));
    }
    return item;
  }

  async function showMore(focus) {
    const current = generation;
    const loaded = await Promise.all(results.slice(shown, shown + STEP).map((r) => r.data()));
    if (current !== generation) {
      return false;
    }
    const items = loaded.map(entry);
    list.append(...items);
    shown += items.length;
    list.hidden = shown === 0;
    more.hidden = shown >= results.length;
    if (focus && items.length > 0) {
      items[0].querySelector("a").focus();
    }
    return true;
  }

  async function search(text) {
    const current = ++generation;
    const query = text.trim();
    results = [];
    shown = 0;
    list.replaceChildren();
    list.hidden = true;
    more.hidden = true;
    if (!query) {
      say("");
      return;
    }
    const pagefind = await load();
    if (pagefind === null || current !== generation) {
      return;
    }
    // Said only when a search is slow (a first search loads the index), not at every key.
    const slow = setTimeout(() => current === generation && say("Searching…"), 500);
    try {
      const found = await pagefind.search(query);
      if (current !== generation) {
        return;
      }
      results = found.results;
      if (!(await showMore(false))) {
        return;
      }
    } catch (error) {
      if (current === generation) {
        say(`The search failed: ${error && error.message ? error.message : error}`);
      }
      return;
    } finally {
      clearTimeout(slow);
    }
    const n = results.length;
    if (n === 0) {
      say(`No record matches “${query}”. Try other or fewer words, or the sorted lists below.`);
    } else {
      const rest = n > shown ? `; the first ${shown} are shown.` : ".";
      say(`${plural(n, "record matches", "records match")} “${query}”${rest}`);
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(timer);
    const url = new URL(location.href);
    if (input.value.trim()) {
      url.searchParams.set("q", input.value.trim());
    } else {
      url.searchParams.delete("q");
    }
    try {
      history.replaceState(null, "", url); // the results' address can be kept and shared
    } catch (error) {
      // some browsers refuse it for file:// addresses, where search does not run anyway
    }
    search(input.value);
  });

  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => search(input.value), 300);
  });

  more.addEventListener("click", async () => {
    const current = generation;
    more.disabled = true; // a second click while these load would load them twice
    try {
      if ((await showMore(true)) && current === generation) {
        say(`${shown} of ${results.length} records are shown.`);
      }
    } finally {
      more.disabled = false;
    }
  });

  const asked = new URLSearchParams(location.search).get("q");
  if (asked) {
    input.value = asked;
  }
  load().then((pagefind) => {
    if (pagefind !== null && input.value.trim()) {
      search(input.value);
    }
  });
})();
