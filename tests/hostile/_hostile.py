"""Strategies for hostile input: values, edits of a JSON document, byte damage, argv tokens.

Every strategy here draws something an attacker or an unlucky user could hand diffcheck:
numbers past every bound and of the wrong type, texts with control characters, ESC, line
separators and surrogates, very long names, deep nesting, many keys, other encodings, and
special paths (devices, directories, parents, names too long, NUL bytes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "HOSTILE_TEXT",
    "HOSTILE_VALUE",
    "SPECIAL_PATHS",
    "Edit",
    "bundle_edits",
    "edits",
    "json_paths",
]

_CONTROL = st.sampled_from(
    ["\n", "\r", "\x1b[31m", "\x00", "\x07", "\x85", "\u2028", "\ud800", "\t"]
)
HOSTILE_TEXT = st.one_of(
    st.text(max_size=12),
    st.builds(lambda a, c, b: a + c + b, st.text(max_size=6), _CONTROL, st.text(max_size=6)),
    st.sampled_from(["", " ", "-", "--", "--help", "nan", "inf", "-0", "1e309", "0x10", "١٢"]),
    st.integers(min_value=300, max_value=5000).map(lambda n: "9" * n),
    st.integers(min_value=256, max_value=2000).map(lambda n: "a" * n),
)
_HOSTILE_NUMBER = st.one_of(
    st.sampled_from([0, -1, 1, 2**31, 2**32, 2**63, 2**64, 2**64 + 1, 10**30, -(2**63)]),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)
_LEAF = st.one_of(st.none(), _HOSTILE_NUMBER, HOSTILE_TEXT)
HOSTILE_VALUE: st.SearchStrategy[Any] = st.one_of(
    _LEAF,
    st.recursive(
        _LEAF,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(HOSTILE_TEXT, inner, max_size=4)
        ),
        max_leaves=8,
    ),
)
SPECIAL_PATHS = [
    "/dev/zero",
    "/dev/null",
    "/dev/stdin",
    "/proc/self/mem",
    "/proc/self/status",
    "/",
    ".",
    "..",
    "../escape.json",
    "missing/inside.json",
    "n" * 300,
    "nul\x00byte",
    "line\nbreak",
    "esc\x1b[2J",
    "\udcff-undecodable",
    "dir",
    "fifo",
]


def json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``value`` (dict keys and list indices), the root first."""
    paths = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            paths += json_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:6]):  # long lists: their first items
            paths += json_paths(item, (*prefix, index))
    return paths


@dataclass(frozen=True)
class Edit:
    """One hostile change to a JSON document; ``surely_bad`` when no valid file can result."""

    kind: str
    path: tuple[Any, ...]
    value: Any = None
    count: int = 0

    @property
    def surely_bad(self) -> bool:
        return self.kind in {
            "extra_key",
            "many_keys",
            "truncate",
            "utf16",
            "deep",
            "not_utf8",
            "retype",
            "huge_shape",
            "foreign_function",
        }

    def apply(self, document: Any) -> bytes:
        """The edited document's bytes (the document is changed in place)."""
        parent = document
        for part in self.path[:-1]:
            parent = parent[part]
        last = self.path[-1] if self.path else None
        if self.kind in ("set", "retype", "foreign_function") and self.path:
            parent[last] = self.value
        elif self.kind == "huge_shape" and self.path:
            parent[last].update(self.value)  # a shape, and the byte count it claims
        elif self.kind == "delete" and self.path:
            del parent[last]
        elif self.kind in ("extra_key", "many_keys"):
            target = parent.get(last) if self.path and isinstance(parent, dict) else document
            if not isinstance(target, dict):
                target = document
            names = [f"x-{self.count}"] if self.kind == "extra_key" else range(self.count)
            target.update({f"extra{name}": "v" for name in names})
        if self.kind == "deep":
            return b"[" * self.count + b"]" * self.count
        text = json.dumps(document, indent=1)
        if self.kind == "truncate":
            return text.encode()[: self.count % max(1, len(text) - 1)]
        if self.kind == "utf16":
            return text.encode("utf-16")
        if self.kind == "not_utf8":
            return text.encode()[:40] + b"\xff\xfe" + text.encode()[40:]
        return text.encode("utf-8", "surrogatepass")


def edits(document: Any) -> st.SearchStrategy[Edit]:
    """Hostile edits of ``document``: set a value, delete a key, add keys, damage the bytes."""
    paths = json_paths(document)
    return st.one_of(
        st.builds(Edit, st.just("set"), st.sampled_from(paths[1:]), HOSTILE_VALUE),
        st.builds(
            Edit,
            st.just("delete"),
            st.sampled_from([p for p in paths if p and isinstance(p[-1], str)]),
        ),
        st.builds(
            Edit,
            st.just("extra_key"),
            st.sampled_from([p for p in paths if p and isinstance(p[-1], str)]),
            st.none(),
            st.integers(0, 9),
        ),
        st.builds(
            Edit,
            st.just("many_keys"),
            st.just(("environment",)) | st.just(()),
            st.none(),
            st.integers(65, 5000),
        ),
        st.builds(Edit, st.just("truncate"), st.just(()), st.none(), st.integers(1, 10**6)),
        st.builds(Edit, st.sampled_from(["utf16", "not_utf8"]), st.just(())),
        st.builds(Edit, st.just("deep"), st.just(()), st.none(), st.integers(1500, 20_000)),
    )


def _retyped(value: Any) -> list[Any]:
    """Values of the wrong JSON type for ``value``'s field, each surely refused (strict)."""
    if isinstance(value, bool):
        return [int(value), str(value).lower(), [value]]
    if isinstance(value, int):
        return [str(value), float(value), value % 2 == 1, [value]]
    if isinstance(value, str):
        return [len(value), True, [value], {"text": value}]
    return [True]


#: Names a bundle may not call: dunders, loader and module paths, private names, NumPy's own
#: attributes the standard does not name, and nothing.
FOREIGN_FUNCTIONS = [
    "__loader__.set_data",
    "__loader__.get_data",
    "__import__",
    "_private",
    "os.system",
    "linalg",
    "ndarray",
    "show_config",
    "fromfile",
    "save",
    "load",
    "lib.format.open_memmap",
    "exp.__call__",
    "linalg.vecdot.__globals__",
    "",
    "exp\n",
    "e" * 64,
]


def bundle_edits(document: Any) -> st.SearchStrategy[Edit]:
    """:func:`edits`, and edits only a bundle has: every leaf retyped, an array claiming a huge
    shape (with or without a matching byte count), a function outside the standard."""
    paths = json_paths(document)
    leaves = []
    for path in paths[1:]:
        value: Any = document
        for part in path:
            value = value[part]
        if isinstance(value, bool | int | str):
            leaves.append((path, value))
    arrays = [p for p in paths if p and p[-1] == "array"] + [
        p for p in paths if len(p) >= 2 and p[-2] == "arrays"
    ]
    huge = st.sampled_from(
        [[2**40, 2**40], [10**6] * 32, [2**62], [0, 2**63], [16000, 16000], [-1, 4]]
    )
    return st.one_of(
        edits(document),
        st.sampled_from(leaves).flatmap(
            lambda leaf: st.builds(
                Edit, st.just("retype"), st.just(leaf[0]), st.sampled_from(_retyped(leaf[1]))
            )
        ),
        st.builds(
            Edit,
            st.just("huge_shape"),
            st.sampled_from(arrays),
            st.builds(
                lambda shape, claim: (
                    {"shape": shape} | ({"bytes": 4 * _product(shape)} if claim else {})
                ),
                huge,
                st.booleans(),
            ),
        ),
        st.builds(
            Edit,
            st.just("foreign_function"),
            st.just(("function",)),
            st.sampled_from(FOREIGN_FUNCTIONS),
        ),
    )


def _product(shape: list[int]) -> int:
    result = 1
    for n in shape:
        result *= n
    return result
