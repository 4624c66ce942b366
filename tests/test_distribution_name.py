"""The core is installed by one name everywhere: its own pyproject and every plugin's.

The index name ``diffcheck`` belongs to an unrelated project, so a plugin depending on it
would install that project; each plugin must depend on the core by ``DISTRIBUTION``.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from diffcheck._distribution import DISTRIBUTION, IMPORT_PACKAGE

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_PYPROJECTS = sorted(
    [*ROOT.glob("adapters/*/pyproject.toml"), *ROOT.glob("ops/*/pyproject.toml")]
)


def core_misnamings(dependencies: list[str]) -> list[str]:
    """Dependencies that mean the core but do not name it ``DISTRIBUTION``.

    A dependency means the core when its canonical name is the import package's or begins
    with it and is not a sibling plugin of the form ``diffcheck-<plugin>`` published here.
    """
    wrong = []
    for text in dependencies:
        name = canonicalize_name(Requirement(text).name)
        if name == canonicalize_name(IMPORT_PACKAGE) or (
            name != canonicalize_name(DISTRIBUTION) and name.replace("-", "") == "diffchecknumerics"
        ):
            wrong.append(text)
    return wrong


def declares_core(dependencies: list[str]) -> bool:
    names = {canonicalize_name(Requirement(text).name) for text in dependencies}
    return canonicalize_name(DISTRIBUTION) in names


def test_every_plugin_folder_is_found() -> None:
    # The adapters and the example op: losing the glob would make the next test vacuous.
    folders = {path.parent.relative_to(ROOT).as_posix() for path in PLUGIN_PYPROJECTS}
    assert {"adapters/mlx", "adapters/wgpu", "adapters/metal", "adapters/example"} <= folders
    assert "ops/example" in folders


@pytest.mark.parametrize(
    "pyproject",
    PLUGIN_PYPROJECTS,
    ids=[p.parent.relative_to(ROOT).as_posix() for p in PLUGIN_PYPROJECTS],
)
def test_each_plugin_depends_on_the_core_by_its_distribution_name(pyproject: Path) -> None:
    dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    assert core_misnamings(dependencies) == []
    assert declares_core(dependencies), f"{pyproject} does not depend on {DISTRIBUTION}"


def test_the_core_is_distributed_under_that_name() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION
    assert project["scripts"]["diffcheck"].startswith(f"{IMPORT_PACKAGE}.")


def test_the_index_name_of_the_other_project_is_caught() -> None:
    assert core_misnamings(["diffcheck", "numpy>=1.26"]) == ["diffcheck"]
    assert core_misnamings(["DiffCheck>=0.1; python_version >= '3.11'"]) != []
    assert not declares_core(["diffcheck", "numpy"])


@given(
    name=st.sampled_from(
        [
            "diffcheck",
            "Diffcheck",
            "DIFFCHECK",
            "diffcheck_numerics",
            "diffcheck.numerics",
            "Diffcheck-Numerics",
        ]
    ),
    spec=st.sampled_from(
        ["", ">=0.1", "==0.1.0", "[fuzz]", "[fuzz]>=0.1; sys_platform == 'linux'"]
    ),
)
def test_any_spelling_is_judged_by_its_canonical_name(name: str, spec: str) -> None:
    dependency = f"{name}{spec}"
    is_core_name = re.sub(r"[-_.]+", "-", name).lower() == DISTRIBUTION
    assert declares_core([dependency]) == is_core_name
    assert (core_misnamings([dependency]) == []) == is_core_name
