"""View models and view helpers: every word, number and link a page shows, computed before a template sees it
(templates compute nothing). A view imports core, other views and `build.gather`'s context types only: never the
writer, the renderer or the pages.
"""
