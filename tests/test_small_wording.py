"""The small things a newcomer trips on: suggestions that read on, defaults as they are
typed, a self-test refusal that names both sides, a fuzz run that says it ran fewer, and a
top-level help that names every entry point."""

from __future__ import annotations

import re

import numpy as np
import pytest

import diffcheck
from diffcheck.cli import main
from diffcheck.cli.run_parser import usage
from diffcheck.errors import ConfigError
from diffcheck.fuzz.driver import FuzzResult
from diffcheck.ops import OPS, get_op


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_misspelt_op_gets_a_suggestion_the_sentence_reads_on_from(name: str) -> None:
    typo = name[:-1] + ("x" if name[-1] != "x" else "y")
    with pytest.raises(ConfigError) as raised:
        get_op(typo)
    message = str(raised.value)
    assert "?;" not in message
    assert re.search(r' \(did you mean "[^"]+"\?\); ', message), message


def test_run_help_prints_boolean_defaults_as_they_are_typed() -> None:
    text = usage()
    assert "causal false" in text
    assert "causal False" not in text
    assert not re.search(r"\b(True|False)\b", text.split("Operators and their options")[1])


def test_a_self_test_refusal_names_both_sides_once_each() -> None:
    with pytest.raises(ConfigError) as raised:
        diffcheck.compare(lambda xp, v: v, np.ones(4), candidate="numpy", reference="numpy:cpu")
    assert str(raised.value).startswith(
        'candidate "numpy" and reference "numpy:cpu" are the same backend; '
    )
    assert "''" not in str(raised.value)


def _result(examples: int, asked: int | None) -> FuzzResult:
    return FuzzResult(
        status="passed",
        op="gemm",
        candidate="array_api_strict",
        reference="numpy",
        precision="f32",
        max_nmse=1e-7,
        examples=examples,
        asked=asked,
    )


def test_a_fuzz_run_over_fewer_examples_than_asked_says_so() -> None:
    assert "; 5 fewer than the 200 asked" in _result(195, 200).summary()
    assert "fewer" not in _result(200, 200).summary()
    assert "fewer" not in _result(20, None).summary()


def test_the_top_level_help_names_the_api_search_and_locate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "--api" in out
    assert "locate=True" in out
