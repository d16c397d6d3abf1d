"""The browser side: check.js under Node (through check_js_driver.js) and its parity table, and the site,
its in-browser checks and its search in Chromium with axe-core (package.json)."""
