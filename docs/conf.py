"""Sphinx configuration for skdp's documentation.

The API reference (``api.rst``) is generated at build time from the public
subpackages' ``__all__``, so new estimators appear without editing the docs.
"""

import importlib
import os
import pkgutil
import re
import sys

sys.path.insert(0, os.path.abspath(".."))

import skdp  # noqa: E402
from numpydoc.docscrape import NumpyDocString  # noqa: E402

# skdp's docstrings have a "Privacy" section. numpydoc does not know it; the
# handler below renders it (as a rubric inside Notes), and registering the name
# keeps numpydoc's own parses of the raw docstring from warning about it.
NumpyDocString.sections.setdefault("Privacy", [])

project = "skdp"
author = "The skdp developers"
copyright = "2026, The skdp developers"
version = release = skdp.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.mathjax",
              "sphinx.ext.intersphinx", "numpydoc"]
autosummary_generate = True
autosummary_generate_overwrite = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
autodoc_default_options = {"members": True, "inherited-members": False, "show-inheritance": False}
autodoc_typehints = "none"
nitpicky = False
html_theme = "alabaster"
exclude_patterns = ["_build"]
templates_path = ["_templates"]
intersphinx_mapping = {}
suppress_warnings = ["ref.python"]

_SKIP = {"benchmarks"}


def _write_api_reference(app, config=None):
    lines = ["API reference", "=============", "",
             "Every public name of skdp, by subpackage. Each estimator's docstring has a",
             "**Privacy** section: the neighbouring relation, what is protected, and the",
             "theorem the guarantee rests on.", ""]
    lines += ["Top level", "---------", "", ".. automodule:: skdp", "   :no-members:", ""]
    # Top-level names are re-exports documented in their subpackage below.
    for name in sorted(n for n in skdp.__all__ if n != "__version__"):
        kind = "autoclass" if name[0].isupper() else "autofunction"
        lines += [f".. {kind}:: skdp.{name}", "   :no-index:", ""]
    lines.append("")
    for info in sorted(pkgutil.iter_modules(skdp.__path__), key=lambda i: i.name):
        if info.name.startswith("_") or info.name in _SKIP:
            continue
        mod = importlib.import_module(f"skdp.{info.name}")
        names = [n for n in getattr(mod, "__all__", []) if not n.startswith("_")]
        if not names and not info.ispkg:
            continue
        title = f"skdp.{info.name}"
        lines += [title, "-" * len(title), "", f".. automodule:: skdp.{info.name}",
                  "   :no-members:", ""]
        own = []
        for name in sorted(names):
            obj = getattr(mod, name)
            if getattr(obj, "__module__", "").startswith("skdp.") and obj.__module__ != mod.__name__ \
                    and not obj.__module__.startswith(mod.__name__):
                continue  # re-exported from elsewhere; documented at its home
            own.append(f"   {name}")
        # One page per public object (autosummary writes them into generated/).
        lines += [f".. currentmodule:: skdp.{info.name}", "", ".. autosummary::",
                  "   :toctree: generated/", "   :nosignatures:", ""] + own
        lines.append("")
    with open(os.path.join(app.srcdir, "api.rst"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


_HEADING = re.compile(r"^\s*-{3,}\s*$")


def _move_privacy_section(app, what, name, obj, options, lines):
    """Render the ``Privacy`` docstring section (unknown to numpydoc) as a rubric in Notes."""
    for i in range(len(lines) - 1):
        if lines[i].strip() == "Privacy" and _HEADING.match(lines[i + 1]):
            end = i + 2
            while end < len(lines) - 1 and not (lines[end].strip() and _HEADING.match(lines[end + 1])):
                end += 1
            if end == len(lines) - 1:
                end = len(lines)
            body = lines[i + 2:end]
            del lines[i:end]
            block = [".. rubric:: Privacy", ""] + body + [""]
            for j in range(len(lines) - 1):
                if lines[j].strip() == "Notes" and _HEADING.match(lines[j + 1]):
                    lines[j + 2:j + 2] = block
                    return
            # No Notes section: add one before References/Examples (or at the end).
            at = len(lines)
            for j in range(len(lines) - 1):
                if lines[j].strip() in ("References", "Examples") and _HEADING.match(lines[j + 1]):
                    at = j
                    break
            lines[at:at] = ["Notes", "-----"] + block
            return


def _skip_member(app, what, name, obj, skip, options):
    # scikit-learn's metadata-routing helpers (set_fit_request, ...) are generated
    # methods whose docstrings link into scikit-learn's own docs.
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    # At config-inited, before Sphinx lists the sources: autosummary must find api.rst
    # (on a fresh checkout too) to write the per-object pages.
    app.connect("config-inited", _write_api_reference)
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-docstring", _move_privacy_section, priority=100)
