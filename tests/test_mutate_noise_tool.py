"""tools/mutate_noise.py never leaves a mutant in the tree, even when it is stopped."""

import os
import signal
import subprocess
import sys
import time

import pytest

TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools",
                    "mutate_noise.py")

CHILD = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("mutate_noise", sys.argv[1])
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)
tool.ROOT = sys.argv[2]
tool.run_mutant("m", "mod.py", "x = 1.0", "x = 0.5", ["t_slow.py"], timeout=120.0)
"""


def _git(repo, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                   check=True, capture_output=True)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_stopped_run_restores_the_mutated_file(tmp_path, sig):
    repo = tmp_path
    (repo / "mod.py").write_text("x = 1.0\n")
    (repo / "t_slow.py").write_text("import time\n\n\ndef test_slow():\n    time.sleep(60)\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "mod.py", "t_slow.py")
    _git(repo, "commit", "-qm", "init")
    child = subprocess.Popen([sys.executable, "-c", CHILD, TOOL, str(repo)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while "0.5" not in (repo / "mod.py").read_text():
            assert child.poll() is None and time.time() < deadline, "the mutant was not applied"
            time.sleep(0.05)
        time.sleep(0.5)  # the covering tests are running
        child.send_signal(getattr(signal, sig))
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert (repo / "mod.py").read_text() == "x = 1.0\n"


def _load_tool():
    import importlib.util

    spec = importlib.util.spec_from_file_location("mutate_noise", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_a_mutant_run_leaves_out_the_check_that_every_mutant_applies(monkeypatch):
    # test_every_mutant_of_the_audit_still_applies_to_the_code fails whenever a mutant is
    # applied (its old text is gone from the tree), so in a mutant run it would "kill"
    # every mutant that the real tests miss, and the audit would report no survivor.
    tool = _load_tool()
    commands = []

    class Done:
        returncode, stdout, stderr = 0, "", ""

    def run(command, **kwargs):
        commands.append(command)
        return Done()

    monkeypatch.setattr(tool.subprocess, "run", run)
    tool._pytest([tool.NEW_TESTS, "tests/kernel_methods/test_kernel_methods.py"], 10.0)
    tool._pytest([tool.NEW_TESTS], 10.0, keyword="scale")
    check = f"{tool.NEW_TESTS}::test_every_mutant_of_the_audit_still_applies_to_the_code"
    for command in commands:
        assert command[command.index("--deselect") + 1] == check


def test_the_quick_pass_runs_the_mutant_tests_too(tmp_path, monkeypatch):
    # tests/test_noise_mutants.py "runs first for every mutant": --quick-only too, or a
    # mutant only it kills is reported "not killed by the quick pass".
    repo = tmp_path
    (repo / "tests").mkdir()
    (repo / "mod.py").write_text("x = 1.0\n")
    (repo / "tests" / "test_noise_mutants.py").write_text(
        "import mod\n\n\ndef test_x():\n    assert mod.x == 1.0\n")
    (repo / "t_cov.py").write_text("def test_quick():\n    pass\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "init")
    tool = _load_tool()
    monkeypatch.setattr(tool, "ROOT", str(repo))
    monkeypatch.setattr(tool, "QUICK", {"t_cov.py": "quick"})
    monkeypatch.setenv("PYTHONPATH", str(repo))
    result = tool.run_mutant("m", "mod.py", "x = 1.0", "x = 0.5",
                             [tool.NEW_TESTS, "t_cov.py"], 120.0, quick_only=True)
    assert result["status"] == "killed"
    assert (repo / "mod.py").read_text() == "x = 1.0\n"
