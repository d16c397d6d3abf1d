"""The pages people read: view models (`views/`), Jinja2 rendering, one function per page kind, rendering on every
core, search and feeds. A site module may import every layer below it; a view imports only core, other views and the
gathered context, never the writer or the renderer.
"""
