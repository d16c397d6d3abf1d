"""The pages people read: view models (`views/`), Jinja2 rendering, one function per page kind,
rendering on every core, search and feeds. A site module imports core, the gathered context, the
staging writer and the few modules of the program, the state and the build its line of
`generator.architecture` names; a view imports only core, other views and the gathered context,
never the writer or the renderer.
"""
