"""The real runner through run.py: a couple of built-in workloads on their
quick sizes, once, on every allocator. Runs only when the runner has been
built (`./run.py test` always builds it first)."""
import json
import os
import subprocess
import sys

import pytest

E2E_WORKLOAD_COUNT = 2
E2E_TIMEOUT_S = 600


@pytest.fixture(scope="module")
def smoke_run(runner, listing, repo_root, tmp_path_factory):
    builtins = [w for w in listing["workloads"] if w["kind"] == "builtin" and not w["threaded"]]
    if len(builtins) < E2E_WORKLOAD_COUNT:
        builtins = [w for w in listing["workloads"] if w["kind"] == "builtin"]
    chosen = [w["name"] for w in builtins[:E2E_WORKLOAD_COUNT]]
    assert chosen, "the runner lists no built-in workload"
    out = tmp_path_factory.mktemp("runs")
    env = dict(os.environ, HEAPLAB_RUN=str(runner))
    proc = subprocess.run([sys.executable, str(repo_root / "run.py"), "run", "--quick", "--reps", "1",
                           "--workload", ",".join(chosen), "--out", str(out), "--no-plots"],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=E2E_TIMEOUT_S)
    return proc, out / "latest", chosen


def test_smoke_run_succeeds_on_every_installed_allocator(smoke_run, listing):
    proc, folder, chosen = smoke_run
    assert proc.returncode == 0, proc.stderr[-4000:]
    summary = json.loads((folder / "summary.json").read_text())
    # baselines ("floor") run only when named
    by_alloc = {a["name"]: a for a in listing["allocators"] if a.get("default", True)}
    for cell in summary["cells"]:
        assert cell["workload"] in chosen
        if by_alloc[cell["allocator"]]["available"]:
            assert cell["status"] == "ok" and cell["n"] == 1, cell
            assert isinstance(cell["median"], float)
        else:
            assert cell["status"] == "not installed"
    assert {c["allocator"] for c in summary["cells"]} == set(by_alloc)


def test_smoke_run_documents_follow_the_schema(smoke_run):
    _, folder, _ = smoke_run
    for line in (folder / "raw.jsonl").read_text().splitlines():
        doc = json.loads(line)
        assert doc["schema"] == "heaplab.run/1" and doc["status"] == "ok"
        assert doc["rep"] == 1 and doc["cell"].startswith(doc["workload"]["name"] + "/")
        assert doc["primary"] in doc["metrics"]


def test_smoke_run_tables_have_a_row_per_workload(smoke_run):
    proc, folder, chosen = smoke_run
    md = (folder / "tables.md").read_text()
    for name in chosen:
        # every row says what its runs wrote into their blocks
        assert f"| {name} (touch=first) |" in md
        assert f"| {name} (touch=first) |" in proc.stdout


def test_list_against_the_runner(runner, repo_root, listing):
    env = dict(os.environ, HEAPLAB_RUN=str(runner))
    proc = subprocess.run([sys.executable, str(repo_root / "run.py"), "list"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for w in listing["workloads"]:
        assert w["name"] in proc.stdout


def test_charts_are_drawn_from_the_smoke_run(smoke_run, repo_root):
    if not (repo_root / "plots" / "__init__.py").exists():
        pytest.skip("the plots package is not there")
    _, folder, _ = smoke_run
    proc = subprocess.run([sys.executable, str(repo_root / "run.py"), "plot", str(folder)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert list(folder.glob("*.png")) or list(folder.glob("**/*.png"))
