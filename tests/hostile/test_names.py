"""Issue 34 S1-S3 and L3: one rule for every name that becomes a path part, one escaper for
every text that reaches a terminal.

A plugin op named ``../../../escape`` once became a sweep folder outside ``--out``; ``show``
printed a report's backend name raw (NUL, newline, ``ESC[2J``, an OSC title); ``ops`` printed
a plugin's NUL and BEL raw; any backend name replayed as agreeing and ``upgrade`` wrote it
into a new report. The rule (:func:`diffcheck.text.check_name`) and the escaping stream of
the command line are tested as mechanisms, with generated names and texts.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.ops import OPS, get_op
from diffcheck.ops._registry import OpPluginError

from ._harness import assert_one_line, assert_refused, cli
from ._hostile import HOSTILE_TEXT

#: What a name must never reach a file name or a terminal as.
PAYLOADS = [
    "../../../escape",
    "..",
    ".",
    "",
    "a/b",
    "a\\b",
    "/abs",
    "mlx\x00cpu",
    "mlx\ncpu",
    "mlx\x1b[2J",
    "mlx\x1b]0;owned\x07",
    "mlx\x07",
    "\u202eevil",
    "x" * 65,
    "-rf",
    "<b>",
]


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


@settings(max_examples=400, deadline=None)
@given(st.one_of(HOSTILE_TEXT, st.sampled_from(PAYLOADS), st.text(max_size=70)))
def test_a_name_the_rule_accepts_is_one_plain_path_part(text: str) -> None:
    from diffcheck.text import MAX_NAME_CHARS, check_name, is_name

    if not is_name(text):
        with pytest.raises(ValueError, match="rename it") as raised:
            check_name("op", text)
        assert "\n" not in str(raised.value)
        assert not _raw_controls(str(raised.value))
        return
    assert check_name("op", text) == text
    assert os.path.basename(text) == text
    assert text not in (".", "..")
    assert not text.startswith(("-", "."))
    assert len(text) <= MAX_NAME_CHARS
    assert text.isascii()
    assert text.isprintable()


@pytest.mark.parametrize("name", ["mlx:cpu", "numpy", "array_api_strict", "torch:cuda"])
def test_real_backend_names_are_names(name: str) -> None:
    from diffcheck.text import check_name

    assert check_name("backend", name, backend=True) == name


@pytest.mark.parametrize("name", ["mlx:cpu:0", ":cpu", "mlx:", *PAYLOADS])
def test_backend_names_outside_the_rule_are_refused(name: str) -> None:
    from diffcheck.text import check_name

    with pytest.raises(ValueError, match="NAME or NAME:NAME"):
        check_name("backend", name, backend=True)


# -- S1: a plugin op's name ----------------------------------------------------------------


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    OPS.reset()
    yield path
    monkeypatch.undo()
    for name in [m for m in sys.modules if m.startswith("hostile_op_mod")]:
        del sys.modules[name]
    OPS.reset()


def _plugin(site: Path, name: str, module: str) -> None:
    info = site / "hostile_ops-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hostile-ops\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[diffcheck.ops]\n{name} = hostile_op_mod:Op\n")
    (site / "hostile_op_mod.py").write_text(module)


def _softmax_named(name: str, **extra: str) -> str:
    fields = "".join(f"    {key} = {value!r}\n" for key, value in extra.items())
    return (
        "from diffcheck.ops.softmax import Softmax\n"
        f"class Op(Softmax):\n    name = {name!r}\n{fields}"
    )


@pytest.mark.parametrize("name", ["../../../escape", "..", "a/b", "-rf", "x" * 65])
def test_a_plugin_op_named_outside_the_rule_cannot_be_used(site: Path, name: str) -> None:
    _plugin(site, name, _softmax_named(name))
    with pytest.raises(OpPluginError, match="rename it"):
        get_op(name)
    assert name not in OPS
    assert any("rename it" in str(p) for p in OPS.problems())
    assert get_op("softmax").name == "softmax"


def test_a_plugin_alias_outside_the_rule_disables_the_op(site: Path) -> None:
    _plugin(site, "fine-op", _softmax_named("fine-op") + "    aliases = ('../up',)\n")
    with pytest.raises(OpPluginError, match="rename it"):
        get_op("fine-op")


def test_a_sweep_never_plans_a_folder_from_a_path_named_op(site: Path, tmp_path: Path) -> None:
    from diffcheck.errors import ConfigError
    from diffcheck.sweep.matrix import load_matrix
    from diffcheck.sweep.plan import plan_matrix

    name = "../../../escape"
    _plugin(site, name, _softmax_named(name))
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        'schema_version = 1\n[[pairs]]\nreference = "numpy"\ncandidate = "array_api_strict"\n'
        f'[[ops."{name}".shapes]]\nrows = 2\ncols = 4\n'
    )
    with pytest.raises(ConfigError, match=r"op '\.\./\.\./\.\./escape'"):
        plan_matrix(load_matrix(matrix), tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.toml", "site"]


# -- S3: `diffcheck ops` ---------------------------------------------------------------------


def test_ops_lists_a_plugins_texts_escaped(site: Path) -> None:
    _plugin(
        site, "noisy-op", _softmax_named("noisy-op", execution_path="bell\x07nul\x00esc\x1b[2J")
    )
    code, out, err = cli(["ops"])
    assert code == 0, err
    assert "noisy-op" in out
    assert "bell\\x07nul\\x00esc\\x1b[2J" in out
    assert not _raw_controls(out + err)


def test_ops_says_a_refused_plugin_name_in_one_escaped_line(site: Path) -> None:
    name = "bad\x07op"
    info = site / "hostile_ops-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hostile-ops\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[diffcheck.ops]\n{name} = hostile_op_mod:Op\n")
    (site / "hostile_op_mod.py").write_text(_softmax_named(name))
    code, out, err = cli(["ops"])
    assert code == 1
    assert_one_line(err)
    assert "bad\\x07op" in err
    assert not _raw_controls(out)


# -- S2 and L3: a report's backend names -----------------------------------------------------


@pytest.mark.parametrize("field", ["result", "config", "reference_backend"])
@pytest.mark.parametrize("command", ["show", "replay", "upgrade"])
@pytest.mark.parametrize("name", ["mlx\x00cpu", "mlx\ncpu", "mlx\x1b[2J", "mlx\x1b]0;t\x07", "a/b"])
def test_a_report_naming_a_backend_outside_the_rule_is_refused(
    tmp_path: Path, report_json: dict[str, Any], field: str, command: str, name: str
) -> None:
    if field == "result":
        report_json["result"]["backend"] = name
    elif field == "config":
        report_json["config"]["require_backend"] = name
    else:
        report_json["reference_backend"] = name
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report_json))
    new = tmp_path / "new.json"
    argv = [command, str(path)] + (["--out", str(new)] if command == "upgrade" else [])
    code, out, err = cli(argv)
    assert_refused(code, err)
    assert "does not name a backend" in err
    assert not _raw_controls(out + err)
    assert not new.exists()


# -- the escaping stream: whatever a command prints -------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.lists(HOSTILE_TEXT, max_size=4))
def test_the_terminal_stream_lets_no_control_character_through(texts: list[str]) -> None:
    from diffcheck.cli import _Terminal

    sink = io.StringIO()
    terminal = _Terminal(sink)
    for text in texts:
        assert terminal.write(text) == len(text)
    written = sink.getvalue()
    assert not _raw_controls(written)
    assert written.count("\n") == sum(t.count("\n") for t in texts)


def test_a_command_that_forgets_to_escape_is_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    from diffcheck.cli import commands

    def careless(argv: object) -> int:
        print("title\x1b]0;owned\x07 clear\x1b[2J nul\x00")
        print("bell\x07", file=sys.stderr)
        return 0

    monkeypatch.setattr(commands, "ops", careless)
    code, out, err = cli(["ops"])
    assert code == 0
    assert out == "title\\x1b]0;owned\\x07 clear\\x1b[2J nul\\x00\n"
    assert err == "bell\\x07\n"
