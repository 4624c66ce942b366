"""Check an API search's findings against the libraries themselves, outside the search.

``python tools/audit_findings.py DIR [--json OUT]`` reads ``DIR/findings.json`` and each
finding's bundle, decodes the call, and calls NumPy (``array_api_compat.numpy``) and the
candidate's own library (``mlx.core``, ``array_api_compat.torch``, ``array_api_strict``)
directly: no adapter, no worker, no value model. For each finding it reports

- ``true``: the two libraries still disagree on the bundle's inputs (a dtype, a shape, a
  value compared bit for bit with NaN equal to NaN and zeros by sign, or one side raising
  or lacking the function), or ``false`` when they agree (a false positive), or
  ``crash``/``hang`` findings, kept as the search recorded them (not re-run here);
- ``blame_check``: the audit's own check of the blame, where it has one: for an
  elementwise function mpmath evaluates, the first differing element's true value at 1024
  bits; a side farther from it than the finding's bound allows each side ("each side within
  N ULP", else 4; "correctly rounded": the nearest value alone; "relative to |z|": a
  complex value within N ULP of ``|z|`` too) is wrong. Complex ``add``/``subtract``/
  ``negative`` are checked per component with Python's float arithmetic (a real operand's
  imaginary part read as ``+0`` or as absent), ``remainder`` against Python's ``%``, and a
  missing function by which side lacks it. Then ``right`` (the blame names exactly the
  wrong sides: ``undecided`` where none is), ``wrong`` (it names another side),
  ``undecided`` (the search named no side, and the audit found one wrong or could not
  check), ``open`` (the search named no side because the standard leaves the answer open:
  blame ``undecided`` with evidence ``standard-rule``, its why saying which text; taken as
  the search states it where the audit has no check of its own) or ``unchecked`` (the
  search named a side by the standard's text, which this script does not transcribe).

A finding is counted right when it is true and its blame check is ``right``, ``open`` or
``unchecked``: ``right_percent`` is their share of all findings.

It exits 0 and prints one line per finding, then the counts. It is an audit tool: its
truth and its calls are its own, so it can disagree with the search.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

_MP_FUNCTIONS = {
    "exp": "exp",
    "expm1": "expm1",
    "log": "log",
    "log1p": "log1p",
    "log10": "log10",
    "sqrt": "sqrt",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "asin": "asin",
    "acos": "acos",
    "atan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "asinh": "asinh",
    "acosh": "acosh",
    "atanh": "atanh",
}
_BINARY = ("add", "subtract", "multiply", "divide", "pow", "atan2", "hypot", "logaddexp")


def _namespace(backend: str) -> Any:
    name = backend.split(":", 1)[0]
    if name == "numpy":
        import array_api_compat.numpy as xp
    elif name == "mlx":
        import mlx.core as xp
    elif name == "torch":
        import array_api_compat.torch as xp
    elif name == "array_api_strict":
        import array_api_strict as xp
    else:
        raise SystemExit(f"audit_findings: no direct namespace for {backend}")
    return xp


def _to(backend: str, xp: Any, value: Any) -> Any:
    if not isinstance(value, np.ndarray):
        return value
    name = backend.split(":", 1)[0]
    if name == "mlx":
        import mlx.core as mx

        dtype = getattr(mx, value.dtype.name)
        return mx.array(value, dtype=dtype)
    if name == "torch":
        import torch

        return torch.from_numpy(value.copy())
    if name == "array_api_strict":
        return xp.asarray(value)
    return value


def _home(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_home(v) for v in value)
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    if type(value).__module__.startswith("mlx"):
        import mlx.core as mx

        if value.dtype == mx.bfloat16:
            value = value.astype(mx.float32)
        return np.array(value)
    try:
        return np.asarray(value)
    except Exception:
        return np.asarray(value.__array__())


def _call(
    backend: str, function: str, example: Any, given: dict[str, Any] | None = None
) -> tuple[str, Any]:
    from diffcheck.search.recipes import call_for

    try:
        xp = given[backend] if given and backend in given else _namespace(backend)
    except ImportError as error:
        return "missing", str(error)
    fn = call_for(function, example)
    try:
        args = [_to(backend, xp, a) for a in example.args]
        with np.errstate(all="ignore"):
            if isinstance(fn, str):  # a plain call: xp.<name>(*args, **kwargs)
                target = xp
                for part in fn.split("."):
                    target = getattr(target, part)
                result = target(*args, **dict(example.kwargs))
            else:
                result = fn(xp, *args, **dict(example.kwargs))
        return "ok", _home(result)
    except AttributeError as error:
        return "missing", str(error)
    except Exception as error:
        return "raised", f"{type(error).__name__}: {error}"


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc":
        parts = ((a.real, b.real), (a.imag, b.imag)) if a.dtype.kind == "c" else ((a, b),)
        for x, y in parts:
            both_nan = np.isnan(x) & np.isnan(y)
            equal = (x == y) & (np.signbit(x) == np.signbit(y))
            if not np.all(both_nan | equal):
                return False
        return True
    return bool(np.array_equal(a, b))


def _same(ref: Any, cand: Any) -> bool:
    if isinstance(ref, tuple) or isinstance(cand, tuple):
        if not (isinstance(ref, tuple) and isinstance(cand, tuple)) or len(ref) != len(cand):
            return False
        return all(_same(r, c) for r, c in zip(ref, cand, strict=True))
    return _same_array(np.asarray(ref), np.asarray(cand))


def _truth(function: str, values: list[complex | float]) -> Any:
    import mpmath

    with mpmath.workprec(1024):
        args = [mpmath.mpc(v) if isinstance(v, complex) else mpmath.mpf(v) for v in values]
        if function in _MP_FUNCTIONS:
            return getattr(mpmath, _MP_FUNCTIONS[function])(*args)
        a, b = args
        table = {
            "add": lambda: a + b,
            "subtract": lambda: a - b,
            "multiply": lambda: a * b,
            "divide": lambda: a / b,
            "pow": lambda: mpmath.power(a, b),
            "atan2": lambda: mpmath.atan2(a, b),
            "hypot": lambda: mpmath.hypot(a, b),
            "logaddexp": lambda: mpmath.log(mpmath.exp(a) + mpmath.exp(b)),
        }
        return table[function]()


_BITS = {"float32": (24, -126), "float64": (53, -1022)}


def _nearest(truth: Any, dtype: str) -> float:
    """The ``dtype`` value nearest ``truth``, ties to even (mpmath's own rounding)."""
    import mpmath

    bits, emin = _BITS[dtype]
    with mpmath.workprec(2048):
        if abs(truth) < mpmath.ldexp(1, emin):  # subnormal: a fixed step of 2**(emin-bits+1)
            step = bits - 1 - emin
            return float(mpmath.ldexp(mpmath.nint(mpmath.ldexp(truth, step)), -step))
    with mpmath.workprec(bits):
        rounded = +truth
    largest = float(np.finfo(dtype).max)
    if abs(rounded) > largest:
        return math.copysign(math.inf, float(rounded))
    return float(rounded)


def _ulps(value: float, truth: Any, dtype: str, nearest: bool = False) -> float:
    """``value``'s distance from ``truth`` in ULPs of ``dtype``; with ``nearest`` (a
    correctly rounded bound) 0 for the nearest value and inf for any other."""
    import mpmath

    if math.isnan(value):
        return math.inf
    with mpmath.workprec(1024):
        if not mpmath.isfinite(truth):
            return 0.0 if math.isinf(value) and (value > 0) == (truth > 0) else math.inf
        with np.errstate(over="ignore"):
            rounded = np.asarray(float(truth)).astype(dtype)
        if np.isinf(rounded):  # the truth rounds past the largest finite value: to infinity
            return 0.0 if value == float(rounded) else math.inf
        if truth == 0:
            return 0.0  # an exact zero: its sign is the special cases' (mpmath has no -0)
        if nearest and value == 0 and rounded == 0:
            # Correctly rounded: the zero keeps the truth's sign. An approximation's sign
            # of zero is open (within one ULP of a tiny truth lie nonzero values of both
            # signs), so its distance below is measured as any value's.
            return 0.0 if math.copysign(1, value) == math.copysign(1, float(truth)) else math.inf
        if nearest:
            return 0.0 if value == _nearest(truth, dtype) else math.inf
        spacing = float(np.spacing(np.abs(rounded).astype(dtype))) or float(
            np.finfo(dtype).smallest_subnormal
        )
        return float(abs(mpmath.mpf(value) - truth)) / spacing


def _of_kind(kind: str, r: Any, c: Any) -> bool:
    """Whether two differing elements differ in the finding's kind (inf, nan, signed-zero)."""
    parts = ((r.real, c.real), (r.imag, c.imag)) if np.iscomplexobj(r) else ((r, c),)
    if kind == "inf":
        return any(bool(np.isinf(a) != np.isinf(b)) for a, b in parts)
    if kind == "nan":
        return any(bool(np.isnan(a) != np.isnan(b)) for a, b in parts)
    if kind == "signed-zero":
        return any(bool(a == 0 and b == 0 and np.signbit(a) != np.signbit(b)) for a, b in parts)
    return True


def _bits_equal(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or (
        x == y and math.copysign(1.0, x) == math.copysign(1.0, y)
    )


def _componentwise(function: str, values: list[Any], part: str) -> list[list[float]] | None:
    """Complex add/subtract/negative per component in Python floats: each component's
    allowed values (a real operand's imaginary part read as +0, or as absent)."""

    def rounded(v: float) -> float:
        with np.errstate(over="ignore"):
            return float(np.asarray(v).astype(part))

    if function == "negative" and len(values) == 1:
        z = complex(values[0])
        return [[-z.real], [-z.imag]]
    if function not in ("add", "subtract") or len(values) != 2:
        return None
    sign = 1.0 if function == "add" else -1.0
    x, y = complex(values[0]), complex(values[1])
    imaginary = [rounded(x.imag + sign * y.imag)]
    if not isinstance(values[0], complex):
        imaginary.append(sign * y.imag)
    if not isinstance(values[1], complex):
        imaginary.append(x.imag)
    return [[rounded(x.real + sign * y.real)], imaginary]


def _remainder(values: list[Any]) -> float | None:
    x, y = values
    if isinstance(x, complex) or isinstance(y, complex) or not (math.isfinite(x) and y):
        return None
    if math.isnan(y):
        return None
    return float(x % y)  # the standard: "must match that of the Python % operator"


def _wrong_side(
    function: str,
    example: Any,
    ref: Any,
    cand: Any,
    share: float,
    kind: str = "value",
    bound: str = "",
) -> set[str] | None:
    """The sides wrong at the first differing element (of the finding's kind) where the
    audit's truth finds one (an empty set: none is wrong where it looked; None: unchecked)."""
    checkable = (
        function in _MP_FUNCTIONS or function in _BINARY or function in ("negative", "remainder")
    )
    if not checkable:
        return None
    if isinstance(ref, tuple) or not isinstance(ref, np.ndarray) or ref.dtype.kind not in "fc":
        return None
    if not isinstance(cand, np.ndarray) or cand.shape != ref.shape:
        return None
    arrays = [a for a in example.args if isinstance(a, np.ndarray)]
    if not arrays or ref.size == 0:
        return None
    try:
        inputs = [np.broadcast_to(a, ref.shape) for a in arrays]
    except ValueError:
        return None
    part = {"complex64": "float32", "complex128": "float64"}.get(ref.dtype.name, ref.dtype.name)
    if part not in _BITS:
        return None
    nearest = "correctly rounded" in bound
    relative = "relative to |z|" in bound
    flat_r, flat_c = ref.reshape(-1), cand.astype(ref.dtype).reshape(-1)
    checked = False
    for i in range(flat_r.size):
        if _same_array(flat_r[i : i + 1], flat_c[i : i + 1]):
            continue
        if not _of_kind(kind, flat_r[i], flat_c[i]):
            continue  # an element that differs another way: not the one the finding is of
        values = [complex(a.reshape(-1)[i]) if a.dtype.kind == "c" else float(a.reshape(-1)[i])
                  for a in inputs]  # fmt: skip
        sides = (("reference", flat_r[i]), ("candidate", flat_c[i]))
        if ref.dtype.kind == "c" and function in ("add", "subtract", "negative"):
            allowed = _componentwise(function, values, part)
            if allowed is None:
                continue
            wrong = {
                side
                for side, value in sides
                if not all(
                    any(_bits_equal(got, want) for want in wants)
                    for got, wants in zip(
                        (float(value.real), float(value.imag)), allowed, strict=True
                    )
                )
            }
            if wrong:
                return wrong
            checked = True
            continue
        if function == "remainder":
            required = _remainder(values)
            if required is None:
                continue
            want = float(np.asarray(required).astype(part))
            wrong = {side for side, value in sides if not _bits_equal(float(value), want)}
            if wrong:
                return wrong
            checked = True
            continue
        if function == "negative":
            continue
        if any(not np.isfinite(v) or v == 0 for v in values):
            continue  # special cases (mpmath has no -0): the standard's table decides
        try:
            truth = _truth(function, values)
        except (ValueError, ZeroDivisionError, KeyError):
            continue
        import mpmath

        wrong = set()
        for side, value in sides:
            if ref.dtype.kind == "c":
                truth_c = mpmath.mpc(truth)
                err = max(
                    _ulps(float(value.real), truth_c.real, part, nearest),
                    _ulps(float(value.imag), truth_c.imag, part, nearest),
                )
                if relative and err > share and mpmath.isfinite(abs(truth_c)):
                    with mpmath.workprec(1024):
                        off = max(abs(mpmath.mpf(float(value.real)) - truth_c.real),
                                  abs(mpmath.mpf(float(value.imag)) - truth_c.imag))  # fmt: skip
                        size = abs(truth_c)
                    spacing = float(np.spacing(np.asarray(float(size)).astype(part))) or float(
                        np.finfo(part).smallest_subnormal
                    )
                    err = min(err, float(off) / spacing) if mpmath.isfinite(off) else err
            else:
                if isinstance(truth, mpmath.mpc):
                    break  # a real input with a complex truth: a domain error
                err = _ulps(float(value), truth, part, nearest)
            if err > share:
                wrong.add(side)
        if wrong:
            return wrong  # the first differing element where a side is wrong, as judged
        checked = True
    return set() if checked else None


def _check(entry: dict[str, Any], wrong: set[str] | None) -> str:
    """The blame check of one finding, from the sides the audit found wrong (None: none
    of its checks applies)."""
    blamed = entry["blame"]
    if blamed == "undecided":
        if wrong == set():
            return "right"
        if wrong is None and entry.get("blame_evidence") == "standard-rule":
            return "open"
        return "undecided"
    if wrong is None:
        return "unchecked"
    expected = {0: "undecided", 2: "both"}.get(len(wrong)) or next(iter(wrong))
    return "right" if blamed == expected else "wrong"


def audit(directory: Path, namespaces: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One row per finding of ``directory``: ``true`` and ``blame_check``, with a note.

    ``namespaces`` maps a backend name to the namespace to call for it (instead of its
    library's own, found by name).
    """
    from diffcheck.search.bundle import read_bundle
    from diffcheck.search.record import example_of

    document = json.loads((directory / "findings.json").read_text())
    reference = document["reference"]["backend"]
    candidate = document["candidate"]["backend"]
    rows = []
    for entry in document["findings"]:
        bundle = read_bundle(directory / entry["bundle"])
        example = example_of(bundle)
        row = {k: entry[k] for k in ("function", "kind", "dtype", "blame")}
        row["blame_evidence"] = entry.get("blame_evidence", "")
        if entry["kind"] in ("crash", "hang"):
            row.update(true=entry["kind"], blame_check=_check(entry, None))
            rows.append(row)
            continue
        r_state, r_value = _call(reference, entry["function"], example, namespaces)
        c_state, c_value = _call(candidate, entry["function"], example, namespaces)
        if r_state != "ok" or c_state != "ok":
            row["true"] = "true" if r_state != c_state else "false"
            failed = {s for s, st in (("reference", r_state), ("candidate", c_state)) if st != "ok"}
            row["note"] = " ".join(str(r_value if r_state != "ok" else c_value).split())[:120]
            checked = failed if entry["kind"] == "missing" and failed else None
            row["blame_check"] = _check(entry, checked)
        else:
            row["true"] = "false" if _same(r_value, c_value) else "true"
            found = re.search(r"each side within ([0-9.]+) ULP", entry["bound"])
            share = float(found.group(1)) if found else 4.0  # the search's own allowance
            if "correctly rounded" in entry["bound"]:  # IEEE 754's basic operations, sqrt
                share = 0.5
            wrong = _wrong_side(
                entry["function"], example, r_value, c_value, share, entry["kind"], entry["bound"]
            )
            row["blame_check"] = _check(entry, None if row["true"] == "false" else wrong)
            if wrong is not None and row["true"] == "true":
                row["note"] = f"audit: wrong sides {sorted(wrong) or 'none'}"
        if row["blame_check"] == "open":
            row["note"] = entry.get("blame_why", "")[:160]
        rows.append(row)
    return rows


def counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's counts; ``right_percent``: true findings with a right, open or unchecked
    blame, of all findings."""
    true = [r for r in rows if r["true"] in ("true", "crash", "hang")]
    right = [r for r in true if r["blame_check"] in ("right", "open", "unchecked")]
    result: dict[str, Any] = {
        "findings": len(rows),
        "true": len(true),
        "false": sum(r["true"] == "false" for r in rows),
        "blame_checked": sum(r["blame_check"] in ("right", "wrong") for r in rows),
        "blame_right": sum(r["blame_check"] == "right" for r in rows),
        "blame_wrong": sum(r["blame_check"] == "wrong" for r in rows),
        "undecided": sum(r["blame_check"] == "undecided" for r in rows),
        "open": sum(r["blame_check"] == "open" for r in rows),
    }
    result["right_percent"] = round(100.0 * len(right) / len(rows), 1) if rows else 100.0
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--json", type=Path, default=None)
    options = parser.parse_args(argv)
    if not (options.directory / "findings.json").is_file():
        print(
            f"audit_findings: no findings.json in {options.directory}: give a search's --out directory"
        )
        return 1
    if options.json is not None and options.json.exists():
        print(f"audit_findings: {options.json} exists: give a new path for --json")
        return 1
    rows = audit(options.directory)
    for row in rows:
        print(
            f"{row['function']:24} {row['kind']:12} {row['dtype']:20} blame={row['blame']:10} "
            f"true={row['true']:6} blame_check={row['blame_check']:9} {row.get('note', '')}"
        )
    summary = counts(rows)
    print(json.dumps(summary))
    if options.json is not None:
        options.json.write_text(json.dumps({"counts": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
