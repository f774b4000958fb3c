"""Docstrings of a normal length: derivations and studies belong in the user guide.

Every public class (each name in ``__all__`` of each skdp subpackage) has a
docstring of at most 12,000 characters (scikit-learn's ``LogisticRegression``
has about 12,200) and a Privacy section of at most 2,000: the neighbouring
relation, what is protected, the guarantee with its reference and what the
user supplies publicly. The proofs, the corrections to the papers and the
studies behind the defaults are in ``docs/guide/`` and linked from the
docstrings.
"""

import importlib
import inspect
import pkgutil
import pydoc
import re
import textwrap

import pytest

import skdp

MAX_DOCSTRING = 12_000
MAX_PRIVACY = 2_000



def _public_classes():
    found = {}
    modules = [skdp] + [importlib.import_module(f"skdp.{info.name}")
                        for info in pkgutil.iter_modules(skdp.__path__)
                        if not info.name.startswith("_")]
    for mod in modules:
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name, None)
            if isinstance(obj, type) and obj.__module__.startswith("skdp"):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return sorted(found.items())


_HEADING = re.compile(r"^[ \t]*(\w[\w ]*)\n[ \t]*-{3,}\n", re.MULTILINE)


def _sections(doc):
    """``{heading: body}`` of a numpydoc docstring, measured as written (indented)."""
    parts = _HEADING.split(doc)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


_CLASSES = [pytest.param(cls, id=cls.__name__) for _, cls in _public_classes()]


def test_every_subpackage_is_covered():
    names = {cls.__name__ for _, cls in _public_classes()}
    assert {"DPLogisticRegressionAMP", "PrivateParameterSelector", "DPStandardScaler",
            "PrivateKernelSVC", "PrivateQueryAnswerer", "BudgetAccountant"} <= names


@pytest.mark.parametrize("cls", _CLASSES)
def test_docstring_is_at_most_12000_characters(cls):
    assert len(cls.__doc__ or "") <= MAX_DOCSTRING, (
        f"{cls.__name__}'s docstring has {len(cls.__doc__)} characters; move derivations "
        "and studies to the user guide (docs/guide/) and link it")


@pytest.mark.parametrize("cls", _CLASSES)
def test_privacy_section_is_at_most_2000_characters(cls):
    body = _sections(cls.__doc__ or "").get("Privacy", "")
    assert len(body) <= MAX_PRIVACY, (
        f"{cls.__name__}'s Privacy section has {len(body)} characters; keep the neighbouring "
        "relation, what is protected, the guarantee and the public inputs, and link the proof")


def test_the_section_parser_finds_privacy_sections():
    # Guard against a parser that silently measures nothing.
    from skdp.linear_model import DPLogisticRegressionAMP
    sections = _sections(DPLogisticRegressionAMP.__doc__)
    assert {"Parameters", "Attributes", "Privacy", "Examples"} <= set(sections)
    assert "replacing one" in sections["Privacy"]
    assert "Parameters" not in sections["Privacy"] and "Examples" not in sections["Privacy"]


@pytest.mark.parametrize("cls", [c for c in _CLASSES
                                 if "Parameters" in _sections(c.values[0].__doc__ or "")])
def test_parameters_start_within_the_first_screen(cls):
    # A short summary, then Parameters: at most 22 lines of docstring before it.
    lines = [line.strip() for line in inspect.cleandoc(cls.__doc__).splitlines()]
    assert lines.index("Parameters") <= 22, (
        f"{cls.__name__}: {lines.index('Parameters')} lines before Parameters")


def test_help_of_amp_shows_its_parameters_on_the_first_screen():
    # What `help(DPLogisticRegressionAMP)` prints, wrapped to an 80 x 24 terminal: the
    # Parameters heading and the first parameter are on the first screen.
    from skdp.linear_model import DPLogisticRegressionAMP
    text = pydoc.plaintext.document(DPLogisticRegressionAMP)
    rows = []
    for line in text.splitlines():
        rows.extend(textwrap.wrap(line, 80) or [""])
    heading = next(i for i, row in enumerate(rows) if row.strip(" |") == "Parameters")
    assert heading + 3 < 24, "\n".join(rows[:heading + 3])
    assert "epsilon : float" in rows[heading + 2]
