"""Every paper cited in user-facing text is listed, once, on the References page.

User-facing text is the docstrings and the warning and error messages of ``skdp``, the
docs (``docs/**/*.rst``), the README and the examples. A citation is "Author (YYYY)",
"Author et al. (YYYY)", "Author and Author (YYYY)", "Author, Author and Author (YYYY)",
"Author's (YYYY)" or the parenthetical "(Author YYYY)", "(Author et al. YYYY, Sec. 2)";
it is matched by its first author's surname and its year.
"""

import ast
import inspect
import collections
import pathlib
import re
import unicodedata

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
REFERENCES = ROOT / "docs" / "references.rst"

# A surname: a capital letter, then letters (accents included), apostrophes or hyphens,
# ending in a lower-case letter (so acronyms such as "NeurIPS", "ICML" or "TV16" are not
# names). Particles ("van", "de", "von", "di") may come first.
_NAME = r"(?<![\w'’-])(?:[^\W\d_a-z]\.[\s-]*)*(?:(?:van|von|de|der|den|di|da|du|le|la)\s+)*[^\W\d_a-z][\w'’-]*[^\W\d_A-Z]"
_SEP = r"(?:,\s+(?:and\s+)?|\s+and\s+|\s+&\s+)"
_AUTHORS = rf"{_NAME}(?:{_SEP}{_NAME})*(?:\s+et\s+al\.?)?(?:['’]s?)?"
CITATION = re.compile(
    rf"(?P<authors>{_AUTHORS})\s+\(?(?P<year>(?:19[5-9]|20[0-4])\d)[a-z]?(?![\w-])"
)
_FIRST = re.compile(_NAME)
# Capitalised words that open a sentence or a clause before a citation, never surnames.
NOT_SURNAMES = {
    "Also", "And", "As", "By", "See", "In", "Following", "From", "Like", "Per", "Unlike",
    "Then", "Here", "With", "Without", "Whether", "Against", "Since", "After", "Before",
    "Until", "Under", "Using", "Via", "Cf", "Eq", "Sec", "Alg", "Thm", "Lemma", "Table",
    "Fig", "Figure", "Section", "Theorem", "Algorithm", "Corollary", "Definition", "Note",
    "Boston", "Singapore", "University", "Confidentiality", "Privacy", "Journal",
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
}
REFERENCE_ENTRY = re.compile(r"^\* \*\*(?P<label>[^*]+?)\*\*\.(?P<body>.*?)(?=^\* \*\*|^\S|\Z)",
                             re.MULTILINE | re.DOTALL)


def _fold(name):
    """Compare surnames without accents or case: "Hintermüller" matches "Hintermueller"."""
    name = name.replace("ü", "ue").replace("ö", "oe").replace("ä", "ae")
    name = unicodedata.normalize("NFKD", name)
    return "".join(ch for ch in name if not unicodedata.combining(ch)).lower()


def _citations(text):
    """(first author's surname, year) of every citation in ``text``."""
    text = re.sub(r"\s+", " ", text)
    for match in CITATION.finditer(text):
        names = [name for name in _FIRST.findall(match["authors"])
                 if name.split()[-1] not in NOT_SURNAMES]
        if names:
            surname = re.sub(r"['’]s?$", "", names[0].split()[-1])
            yield surname, match["year"]


def _message_strings(call):
    for node in ast.walk(call):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def _python_texts(path):
    """Docstrings and the literal parts of warning and exception messages."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield getattr(node, "lineno", 1), doc
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "warn" or name.endswith(("Error", "Warning", "Exception")):
                yield node.lineno, " ".join(_message_strings(node))


def _user_facing_texts():
    """(where, text) for every piece of user-facing text."""
    for pattern in ("skdp/**/*.py", "examples/*.py"):
        for path in sorted(ROOT.glob(pattern)):
            for line, text in _python_texts(path):
                yield f"{path.relative_to(ROOT)}:{line}", text
    for path in sorted(ROOT.glob("docs/**/*.rst")) + [ROOT / "README.md"]:
        if "_build" in path.parts or path == REFERENCES:
            continue
        # Paragraph by paragraph, so that a citation broken across lines is found.
        number = 1
        for paragraph in re.split(r"(\n\s*\n)", path.read_text(encoding="utf-8")):
            yield f"{path.relative_to(ROOT)}:{number}", paragraph
            number += paragraph.count("\n")


def _cited():
    cited = collections.defaultdict(list)
    for where, text in _user_facing_texts():
        for surname, year in _citations(text):
            cited[_fold(surname), year].append((surname, where))
    return cited


def _entries():
    """(label, body) of every entry of the References page."""
    text = REFERENCES.read_text(encoding="utf-8")
    return [(m["label"], re.sub(r"\s+", " ", m["body"]).strip())
            for m in REFERENCE_ENTRY.finditer(text)]


def _listed():
    listed = collections.defaultdict(list)
    for label, _ in _entries():
        for surname, year in _citations(label):
            listed[_fold(surname), year].append(label)
    return listed


def test_every_cited_paper_is_on_the_references_page():
    listed = _listed()
    missing = {key: where for key, where in _cited().items() if key not in listed}
    lines = [f"{where[0][0]} ({year}), cited {len(where)}x, e.g. at "
             + ", ".join(sorted({w for _, w in where})[:3])
             for (_, year), where in sorted(missing.items())]
    assert not missing, (
        f"{len(missing)} cited paper(s) missing from docs/references.rst "
        "(add an entry '* **Author et al. (YYYY)**. ...', or fix the citation):\n"
        + "\n".join(lines))


def test_the_references_page_lists_each_paper_once():
    entries = _entries()
    assert len(entries) >= 20, "the References page parser found too few entries"
    labels = collections.Counter(label for label, _ in entries)
    twice = [label for label, count in labels.items() if count > 1]
    assert not twice, f"listed more than once on docs/references.rst: {twice}"
    # The same paper under two labels: the same title (the first sentence after the authors).
    titles = collections.defaultdict(list)
    for label, body in entries:
        # Split after a word, not after an initial: "I. Mironov. On significance ...".
        sentences = [s.strip().lower() for s in re.split(r"(?<=[a-z)])\.\s", body) if s.strip()]
        if len(sentences) > 1:
            titles[sentences[1]].append(label)
    same = {title: labels for title, labels in titles.items() if len(labels) > 1}
    assert not same, f"one paper under several labels on docs/references.rst: {same}"
    # Every label is itself a citation the page can be searched by.
    unparsed = [label for label, _ in entries if not list(_citations(label))]
    assert not unparsed, f"labels not of the form 'Author et al. (YYYY)': {unparsed}"


def test_the_pattern_reads_the_citation_forms():
    forms = {
        "Thakkar (2019), Alg. 1": ("Thakkar", "2019"),
        "as in Chaudhuri et al. (2011), Alg. 2": ("Chaudhuri", "2011"),
        "Jain and Thakurta (2013)": ("Jain", "2013"),
        "Canonne, Kamath and Steinke (2020)": ("Canonne", "2020"),
        "Hall, Rinaldo, and Wasserman (2013)": ("Hall", "2013"),
        "(Dwork et al. 2014, Alg. 1)": ("Dwork", "2014"),
        "(Balle and Wang 2018; Mironov 2012)": ("Balle", "2018"),
        "Thakkar's (2019) constant": ("Thakkar", "2019"),
        "Lyu, Su and Li's (2017) analysis": ("Lyu", "2017"),
        "Also, Dwork et al. (2014a)": ("Dwork", "2014"),
        "Hintermüller, Ito and Kunisch (2002)": ("Hintermüller", "2002"),
        "(Erlingsson & Mironov 2019)": ("Erlingsson", "2019"),
        "van der Maaten (2008)": ("Maaten", "2008"),
        "K. Chaudhuri, C. Monteleoni and A. D. Sarwate (2011)": ("Chaudhuri", "2011"),
        "B. Balle and Y.-X. Wang (2018)": ("Balle", "2018"),
    }
    for text, expected in forms.items():
        assert list(_citations(text))[:1] == [expected], text
    for text in ("NeurIPS 2020", "ICML 2013", "the TV16 (2016) table",
                 "Boston University, 2019", "random_state=2019"):
        assert not list(_citations(text)), text
    assert list(_citations("(Balle and Wang 2018; Mironov 2012)"))[1] == ("Mironov", "2012")
    assert _fold("Hintermüller") == _fold("Hintermueller")


def _public_estimators_and_mechanisms():
    import importlib
    import inspect
    import pkgutil

    import skdp
    found = {}
    for info in pkgutil.iter_modules(skdp.__path__):
        if info.name.startswith("_") or info.name in ("benchmarks", "testing", "datasets", "utils"):
            continue
        module = importlib.import_module(f"skdp.{info.name}")
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) and (hasattr(obj, "fit") or name.endswith("Mechanism")
                                         or name == "BudgetAccountant"):
                found[name] = obj
    return sorted(found.items())


# Data-independent transforms implement no paper.
_NO_PAPER = {"PublicBoundsScaler"}


@pytest.mark.parametrize("name,cls", [(n, c) for n, c in _public_estimators_and_mechanisms()
                                      if n not in _NO_PAPER],
                         ids=[n for n, _ in _public_estimators_and_mechanisms()
                              if n not in _NO_PAPER])
def test_every_estimator_and_mechanism_has_a_references_section(name, cls):
    doc = inspect.cleandoc(cls.__doc__ or "")
    assert "\nReferences\n----------\n" in doc, (
        f"{name}: add a numpydoc References section with the papers it implements")
