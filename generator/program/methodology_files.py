"""Methodology versions: the parameter file (format v1 §5) and the prose that explains it.

The prose is Markdown in which every number is a placeholder filled from the parameter file
(`{{ item_threshold }}`, `{{ tiers.critical.weight }}`), so a number is never typed twice and
the published explanation cannot drift from the parameters it explains.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta
import markdown
import nh3
from jinja2.sandbox import SandboxedEnvironment

from generator.core import canonical_json
from generator.core.generator_errors import InputError, problem
from generator.core.strict_input import load_data_file
from generator.program.datadir import Paths
from generator.verifier import Problem, check_methodology

_PROSE_ENV = SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)


# What Markdown may produce on the site; anything else (scripts, styles, event handlers) is dropped.
ALLOWED_TAGS = {
    "a",
    "abbr",
    "blockquote",
    "br",
    "code",
    "dd",
    "del",
    "div",
    "dl",
    "dt",
    "em",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "li",
    "ol",
    "p",
    "pre",
    "span",
    "strong",
    "sub",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
}


def load_params(path: Path, display: str | None = None) -> dict[str, Any]:
    """A parameter file (JSON or YAML), validated against format v1 §5; all problems at once."""
    file = display or str(path)
    problems: list[Problem] = []
    params = load_data_file(path, file, problems)  # its non-integers, reported with every other problem
    problems += [p.at(file) for p in check_methodology(params)]
    try:
        canonical_json.dumps(params)
    except canonical_json.NotCanonicalizable as e:
        problems += [p.at(file) for p in e.problems]
    if problems:
        raise InputError(problems, f"{file}: not a valid methodology parameter file (format v1 §5, docs/formats/v1.md)")
    assert isinstance(params, dict)  # check_methodology refuses anything else
    return params


# The first name of each `{{ … }}` (an unterminated one runs to the end of its line), and the
# names `{% for %}` and `{% set %}` bind: found without parsing, so that a syntax error elsewhere
# hides no unknown placeholder.
_PLACEHOLDER_RE = re.compile(r"\{\{-?\s*([A-Za-z_][A-Za-z0-9_]*)")
_BOUND_RE = re.compile(r"\{%-?\s*(?:for|set)\s+([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)")


def render_prose(template: str, params: dict[str, Any], file: str) -> str:
    """Fill the prose's placeholders from the parameters; every unknown placeholder (with its line
    and the names there are) and a syntax error are reported together."""
    known = {*params, "grades"}
    valid = "one of " + ", ".join(sorted(known))
    bound = {name.strip() for m in _BOUND_RE.finditer(template) for name in m.group(1).split(",")}
    problems: list[Problem] = []
    for n, text in enumerate(template.split("\n"), start=1):
        for m in _PLACEHOLDER_RE.finditer(text):
            name = m.group(1)
            if name not in known and name not in bound and name not in _PROSE_ENV.globals:
                problems.append(
                    problem(file, f"prose template: unknown placeholder {name!r}", f"line {n}", valid, name)
                )
    try:
        tree = _PROSE_ENV.parse(template)
    except jinja2.TemplateSyntaxError as e:
        problems.append(problem(file, f"prose template: {e.message or e}", f"line {e.lineno}"))
        raise InputError(problems) from None
    # A name used outside `{{ }}` (`{% if name %}`) is found by the parser, without a line.
    seen = {p.found for p in problems}
    for name in sorted(jinja2.meta.find_undeclared_variables(tree) - known - seen - set(_PROSE_ENV.globals)):
        problems.append(problem(file, f"prose template: unknown name {name!r}", "", valid, name))
    if problems:
        raise InputError(problems)
    try:
        return _PROSE_ENV.from_string(template).render(**params, grades=_grades(params))
    except jinja2.TemplateError as e:
        line = getattr(e, "lineno", None)
        raise InputError(
            [problem(file, f"prose template: {e.message or e}", f"line {line}" if line else "", valid)]
        ) from None


def prose_html(markdown_text: str) -> str:
    """Markdown to HTML, sanitised: the operator's prose cannot inject script into the site."""
    html = markdown.markdown(markdown_text, extensions=["tables", "fenced_code", "sane_lists"], output_format="html")
    return nh3.clean(
        html, tags=ALLOWED_TAGS, attributes={"a": {"href", "title"}, "td": {"align"}, "th": {"align"}}, link_rel=None
    )


def _grades(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Grades best first, each with its cut-off and band, for prose and pages."""
    rows = []
    for c in params["grade_cutoffs"]:
        rows.append({"grade": c["grade"], "min_pass_rate": c["min_pass_rate"], "band": params["bands"][c["grade"]]})
    lowest = params["lowest_grade"]
    rows.append({"grade": lowest, "min_pass_rate": None, "band": params["bands"][lowest]})
    return rows


def describe(params: dict[str, Any]) -> dict[str, Any]:
    """What the methodology page shows beside the prose: tiers, grades and the rule."""
    return {
        "tiers": [{"tier": t, **params["tiers"][t]} for t in ("critical", "high", "low")],
        "grades": _grades(params),
    }


def params_file(paths: Paths, version: str) -> Path:
    return paths.methodology_dir / f"{version}.json"


def prose_file(paths: Paths, version: str) -> Path:
    return paths.methodology_dir / f"{version}.md"
