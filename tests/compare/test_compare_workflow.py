"""The example GitHub Actions workflow: valid YAML, shaped as a shard matrix
plus a merge/compare job, and running heaplab only through ./run.py
subcommands that exist."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "heaplab.yml"

# run.py's subcommands (the CLI's list).
SUBCOMMANDS = {"run", "list", "plot", "test", "reproduce", "compare", "merge", "ci", "gbench"}

# Tools a step must not call directly: heaplab's build and runs go through run.py.
DIRECT_TOOLS = ("cmake", "ctest", "pytest", "python3", "heaplab-run", "make ")

RUN_PY = re.compile(r"\./run\.py\s+([A-Za-z0-9_-]+)")

try:
    import yaml  # python3-yaml; PyYAML
except ImportError:  # pragma: no cover - depends on the machine
    yaml = None


# --- a YAML-subset check, for machines without PyYAML ---------------------------------------

KEY_LINE = re.compile(r"^(?P<indent> *)(?:- )?(?P<key>[A-Za-z0-9_.-]+):(?: (?P<value>.*))?$")
ITEM_LINE = re.compile(r"^(?P<indent> *)- (?P<value>.+)$")


def yaml_subset_problems(text: str) -> list[str]:
    """Problems in a block-style YAML document restricted to what workflows
    use: `key: value`, `key:` opening a mapping or list, `- item`, and `|`
    block scalars (more-indented lines, taken verbatim). Flow values such as
    [1, 2] must close on their line."""
    problems = []
    block_indent: int | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if "\t" in line:
            problems.append(f"line {number}: tab character")
            continue
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        if block_indent is not None:
            if not stripped or indent > block_indent:
                continue
            block_indent = None
        if not stripped or stripped.startswith("#"):
            continue
        if indent % 2:
            problems.append(f"line {number}: indentation of {indent} is not a multiple of 2")
        match = KEY_LINE.match(line) or ITEM_LINE.match(line)
        if not match:
            problems.append(f"line {number}: neither 'key: value' nor '- item': {stripped!r}")
            continue
        value = (match.group("value") or "").split(" #")[0].strip()
        if value in ("|", ">", "|-", ">-"):
            block_indent = indent
        elif value.count("[") != value.count("]") or value.count("{") != value.count("}"):
            problems.append(f"line {number}: unbalanced brackets in {value!r}")
        elif value[:1] in "\"'" and value[-1:] != value[:1]:
            problems.append(f"line {number}: unterminated quote in {value!r}")
    return problems


def run_scripts_by_text(text: str) -> list[str]:
    """Every `run:` script, found by indentation (no YAML library needed)."""
    scripts = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = re.match(r"^( *)(?:- )?run: ?(.*)$", line)
        if not match:
            continue
        indent, value = len(match.group(1)), match.group(2).strip()
        if value not in ("|", ">"):
            scripts.append(value)
            continue
        body = []
        for follow in lines[i + 1:]:
            if follow.strip() and len(follow) - len(follow.lstrip(" ")) <= indent:
                break
            body.append(follow.strip())
        scripts.append("\n".join(body))
    return scripts


# --- helpers on the parsed workflow -----------------------------------------------------------

def load() -> dict[str, Any]:
    if yaml is None:
        pytest.skip("PyYAML not installed; the subset check covers validity")
    return yaml.safe_load(WORKFLOW.read_text())


def steps_of(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def run_py_commands(scripts: list[str]) -> list[str]:
    return [name for script in scripts for name in RUN_PY.findall(script)]


# --- tests -----------------------------------------------------------------------------------------

def test_workflow_passes_the_yaml_subset_check():
    assert yaml_subset_problems(WORKFLOW.read_text()) == []


def test_subset_check_catches_broken_yaml():
    assert yaml_subset_problems("jobs:\n\tbuild: x\n")            # tab
    assert yaml_subset_problems("jobs:\n   build: x\n")           # odd indent
    assert yaml_subset_problems("matrix:\n  shard: [1, 2\n")      # unclosed flow list
    assert yaml_subset_problems("name: 'heaplab\n")                 # unterminated quote
    assert yaml_subset_problems("just words\n")


def test_workflow_is_valid_yaml_with_jobs():
    workflow = load()
    assert isinstance(workflow, dict) and workflow["jobs"]
    # PyYAML reads the bare key `on` as True
    triggers = workflow.get("on", workflow.get(True))
    assert "pull_request" in triggers


def test_every_run_py_command_is_a_known_subcommand():
    commands = run_py_commands(run_scripts_by_text(WORKFLOW.read_text()))
    assert commands, "the workflow runs no ./run.py command"
    assert set(commands) <= SUBCOMMANDS, set(commands) - SUBCOMMANDS
    assert {"run", "merge", "compare"} <= set(commands)


def test_yaml_and_text_views_of_run_steps_agree():
    workflow = load()
    parsed = [step["run"] for step in steps_of(workflow) if "run" in step]
    assert run_py_commands(parsed) == run_py_commands(run_scripts_by_text(WORKFLOW.read_text()))


def test_steps_call_heaplab_only_through_run_py():
    for script in run_scripts_by_text(WORKFLOW.read_text()):
        # one shell command per line, with backslash continuations joined
        for line in script.replace("\\\n", " ").splitlines():
            if line.startswith("apt-get"):
                continue  # installing packages names them, e.g. cmake
            for tool in DIRECT_TOOLS:
                assert not re.search(rf"(^|[\s;&|(]){re.escape(tool.strip())}(\s|$)", line), \
                    f"step calls {tool.strip()} directly: {line}"


def test_shard_matrix_matches_the_shard_count_in_the_commands():
    workflow = load()
    shard_jobs = [job for job in workflow["jobs"].values()
                  if "shard" in job.get("strategy", {}).get("matrix", {})]
    assert len(shard_jobs) == 1
    job = shard_jobs[0]
    shards = job["strategy"]["matrix"]["shard"]
    runs = [step["run"] for step in job["steps"] if "run" in step and "./run.py run" in step["run"]]
    assert runs
    for script in runs:
        counts = re.findall(r"--shard \$\{\{ matrix\.shard \}\}/(\d+)", script)
        assert counts, f"run step without --shard K/N: {script}"
        assert all(int(n) == len(shards) for n in counts)
    assert sorted(shards) == list(range(1, len(shards) + 1))


def test_merge_job_downloads_the_shards_merges_compares_and_writes_the_summary():
    workflow = load()
    shard_job = next(name for name, job in workflow["jobs"].items()
                     if "shard" in job.get("strategy", {}).get("matrix", {}))
    merging = [job for job in workflow["jobs"].values()
               if any("./run.py merge" in step.get("run", "") for step in job.get("steps", []))]
    assert len(merging) == 1
    job = merging[0]
    needs = job["needs"] if isinstance(job["needs"], list) else [job["needs"]]
    assert shard_job in needs
    uses = [step.get("uses", "") for step in job["steps"]]
    assert any(u.startswith("actions/download-artifact@") for u in uses)
    scripts = "\n".join(step.get("run", "") for step in job["steps"])
    assert scripts.index("./run.py merge") < scripts.index("./run.py compare")
    assert "$GITHUB_STEP_SUMMARY" in scripts
    # the compare's exit status (1 on a regression) reaches the job
    assert 'exit "$status"' in scripts


def test_shard_jobs_upload_what_they_ran():
    workflow = load()
    for job in workflow["jobs"].values():
        if "shard" not in job.get("strategy", {}).get("matrix", {}):
            continue
        uploads = [step for step in job["steps"]
                   if step.get("uses", "").startswith("actions/upload-artifact@")]
        assert uploads and "${{ matrix.shard }}" in uploads[0]["with"]["name"]
