"""Methodology versions: the parameter file (format v1 §5) and the prose that explains it.

The prose is Markdown in which every number is a placeholder filled from the parameter file
(`{{ item_threshold }}`, `{{ tiers.critical.weight }}`), so a number is never typed twice and
the published explanation cannot drift from the parameters it explains.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import markdown
import nh3
from jinja2.sandbox import SandboxedEnvironment

from generator import canonical
from generator.datadir import Paths
from generator.errors import InputError, problem
from generator.sources import load_data_file
from generator.verifier import check_methodology

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
    params = load_data_file(path, file)
    problems = [p.at(file) for p in check_methodology(params)]
    try:
        canonical.dumps(params)
    except canonical.NotCanonicalizable as e:
        problems += [p.at(file) for p in e.problems]
    if problems:
        raise InputError(problems, f"{file}: not a valid methodology parameter file (format v1 §5, docs/formats/v1.md)")
    assert isinstance(params, dict)  # check_methodology refuses anything else
    return params


def render_prose(template: str, params: dict[str, Any], file: str) -> str:
    """Fill the prose's placeholders from the parameters; an unknown placeholder is an error."""
    try:
        return _PROSE_ENV.from_string(template).render(**params, grades=_grades(params))
    except jinja2.TemplateError as e:
        line = getattr(e, "lineno", None)
        raise InputError([problem(file, f"prose template: {e.message or e}", f"line {line}" if line else "")]) from None


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
