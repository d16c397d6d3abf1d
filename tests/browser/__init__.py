"""The browser side: check.js under Node (through check_js_driver.js), its parity table and the ML-DSA-44 module it
loads (mldsa44.js, built again from its pinned packages), and the site, its in-browser checks and its search in
Chromium with axe-core (package.json)."""
