"""Rules found by auditing a real search run against the standard's text, one test each."""

from __future__ import annotations

import numpy as np

from diffcheck.values.blame import blame
from diffcheck.values.compare import compare_values
from diffcheck.values.spec import is_standard_name


def test_functions_of_later_versions_are_standard_names() -> None:
    assert is_standard_name("isin")  # 2025.12: a backend lacking it is blamed, not excused
    assert not is_standard_name("fmod")


def test_an_overflow_to_infinity_is_blamed_alone_when_the_other_side_is_within_the_bound() -> None:
    x = np.asarray([88.722824], np.float32)
    ref = np.asarray([np.nextafter(np.float32(3.4027725e38), np.float32(0))], np.float32)
    cand = np.asarray([np.inf], np.float32)
    verdict = compare_values(ref, cand, function="exp")
    assert verdict.kind == "inf"
    found = blame("exp", [x], {}, ref, cand, verdict)
    assert found.side == "candidate", found
    swapped = blame("exp", [x], {}, cand, ref, compare_values(cand, ref, function="exp"))
    assert swapped.side == "reference", swapped
