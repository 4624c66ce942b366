"""Which library actually computed each side of a comparison, and whether the two are independent.

A backend's name is a label: a NumPy adapter subclass registered as ``fastlib``, or a plugin
whose namespace is array-api-compat's NumPy, passes :func:`~diffcheck.adapters.same_backend`
and then vouches for NumPy with NumPy. Two facts are recorded instead of trusted:

* a :class:`Fingerprint` of each side, read off the arrays the function returned: the
  top-level module of their type (``numpy`` for an ``ndarray``, whatever adapter returned
  it), that module's version and, for NumPy, the BLAS it was built with;
* a cheap independence probe (:func:`same_bits_probe`): both namespaces sum the same long
  float32 vector; the summation order is each library's own (pairwise blocks, SIMD lanes,
  tree reductions), so two libraries that return the same bits for it are, as far as this
  can tell, one implementation.

What it cannot detect: a library that wraps another's arrays in a type of its own and
delegates every operation (array-api-strict over NumPy: the fingerprint differs, the probe
flags it), a library that copies another's summation order exactly, or a candidate that
computes with another library and converts the result into arrays of its own type (the
fingerprint names the wrapper; only the probe may notice).
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ._installed import installed_version

__all__ = [
    "PROBE_ELEMENTS",
    "Fingerprint",
    "Provenance",
    "fingerprint_of",
    "judge",
    "namespace_name",
    "numpy_blas",
    "one_library",
    "pattern_one_library",
    "probe_input",
    "probe_patterns",
    "probe_sum",
    "provenance_of",
]

#: Length of the probe's float32 vector: long enough that summation orders differ in bits.
PROBE_ELEMENTS: Final = 1 << 17


@dataclass(frozen=True)
class Fingerprint:
    """The library whose arrays one side returned: ``module`` (top level), its ``version``,
    the array type's qualified name, for NumPy its BLAS (``name version``), and, where the
    caller knows it, the ``namespace`` module whose functions computed them (a backend may
    store its values in NumPy arrays and compute with functions of its own)."""

    module: str
    version: str | None
    array_type: str
    blas: str | None = None
    namespace: str | None = None

    def __str__(self) -> str:
        version = f" {self.version}" if self.version else ""
        blas = f"; BLAS {self.blas}" if self.blas else ""
        via = f"; via {self.namespace}" if self.namespace else ""
        return f"{self.module}{version} ({self.array_type}{blas}{via})"


@dataclass(frozen=True)
class Provenance:
    """Both sides' fingerprints and what the independence probe found.

    ``independent`` is False when both sides' arrays come from the same library, or when
    the probe's sums are bit-identical; None when the probe could not run on a side.
    ``note`` says which, in one line.
    """

    reference: Fingerprint
    candidate: Fingerprint
    independent: bool | None
    note: str
    #: Both sides one library (:func:`one_library`): never a pass, like a self-test; a
    #: verdict that carries it is false (``bool(verdict)``).
    one_library: bool = False

    def __str__(self) -> str:
        return f"reference {self.reference}; candidate {self.candidate}; {self.note}"


def _version(module: str) -> str | None:
    found = getattr(sys.modules.get(module), "__version__", None)
    if isinstance(found, str):
        return found
    return installed_version(module)


@functools.cache
def numpy_blas() -> str | None:
    """The BLAS NumPy was built with (``scipy-openblas 0.3.27``), from its build config; None
    when the config does not say. Read once: it is fixed for the process."""
    try:
        config: Any = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        name, version = blas.get("name"), blas.get("version")
    except Exception:  # an older or unusual build without the dict form: not recorded
        return None
    if not isinstance(name, str):
        return None
    return f"{name} {version}" if isinstance(version, str) and version else name


def namespace_name(xp: Any) -> str:
    """The module name of an array namespace (a module, or an object standing for one)."""
    name = getattr(xp, "__name__", None)
    return name if isinstance(name, str) else type(xp).__module__


def fingerprint_of(array: Any, namespace: Any = None) -> Fingerprint:
    """The fingerprint of the library whose type ``array`` is (a Python scalar: ``builtins``),
    computed through ``namespace`` when the caller names it."""
    kind = type(array)
    module = kind.__module__.split(".")[0]
    blas = numpy_blas() if module == "numpy" else None
    via = None if namespace is None else namespace_name(namespace)
    qualified = f"{kind.__module__}.{kind.__qualname__}"
    return Fingerprint(module, _version(module), qualified, blas, via)


def one_library(
    reference: Fingerprint, candidate: Fingerprint, sums: tuple[bytes, bytes] | None = None
) -> bool:
    """Whether both sides are one library: arrays of one module, computed through the same
    namespace (or a namespace not known on a side), or through another namespace whose
    probe sum is bit-identical (``sums``: a namespace over NumPy that returns NumPy's arrays
    and sums as NumPy does, such as the example plugin, is NumPy under another name). A
    backend that stores its values in NumPy arrays but sums with functions of its own is
    independent by this rule."""
    if reference.module != candidate.module:
        return False
    known = reference.namespace is not None and candidate.namespace is not None
    if not known or reference.namespace == candidate.namespace:
        return True
    return sums is not None and sums[0] == sums[1]


@functools.cache
def _probe_vector() -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(20240607)
    vector = (
        rng.standard_normal(PROBE_ELEMENTS) * np.exp2(rng.integers(-12, 12, PROBE_ELEMENTS))
    ).astype(np.float32)
    vector.flags.writeable = False
    return vector


def probe_input() -> npt.NDArray[np.float32]:
    """The probe's vector: fixed, spanning magnitudes so rounding depends on the order.

    Drawn once per process (the draw costs more than the sum); each caller gets its own
    writable copy, so no library can change what the next probe sums."""
    return _probe_vector().copy()


def judge(
    reference: Fingerprint,
    candidate: Fingerprint,
    sums: tuple[bytes, bytes] | None,
) -> Provenance:
    """The provenance of a comparison from both fingerprints and both probe sums' bits."""
    if one_library(reference, candidate, sums):
        by_probe = one_library(reference, candidate) is False
        probe = (
            f", and a {PROBE_ELEMENTS}-element float32 sum is bit-identical on both sides"
            if by_probe
            else ""
        )
        return Provenance(
            reference,
            candidate,
            False,
            f"NOT INDEPENDENT: both sides returned {reference.module} arrays{probe}",
            one_library=True,
        )
    if sums is None:
        return Provenance(reference, candidate, None, "independence probe did not run")
    if sums[0] == sums[1]:
        return Provenance(
            reference,
            candidate,
            False,
            f"NOT INDEPENDENT: a {PROBE_ELEMENTS}-element float32 sum is bit-identical on "
            "both sides (one implementation under two names?)",
        )
    return Provenance(
        reference, candidate, True, f"independent: the {PROBE_ELEMENTS}-element sums differ"
    )


def probe_sum(adapter: Any) -> bytes | None:
    """The bits of ``adapter``'s float32 sum of :func:`probe_input`, on its device; None if
    its namespace cannot compute it (the probe then says it did not run)."""
    try:
        with adapter.computing():
            xp = adapter.namespace()
            total = xp.sum(xp.astype(adapter.to_device(probe_input()), xp.float32))
            return bytes(adapter.host_float32(total).tobytes())
    except Exception:  # a namespace without sum or float32 cannot be probed: not a failure
        return None


#: The pattern probes' sizes: an elementwise ``exp`` (its ULP pattern) and a matmul.
PATTERN_ELEMENTS: Final = 4096
PATTERN_MATMUL: Final = 48


def probe_patterns(adapter: Any) -> tuple[str, tuple[bytes, bytes, bytes]] | None:
    """What ``adapter``'s namespace computes here, beyond one sum: the top-level module of
    the arrays it returns, and the bits of three results whose rounding is each library's
    own: the probe's float32 sum (a summation order), ``exp`` over a span of magnitudes (an
    ULP pattern) and a float32 matmul (a blocking and accumulation order). None when the
    namespace cannot compute them.

    A namespace that returns another library's arrays and matches it bit for bit in any of
    the three computes with that library for that much (:func:`pattern_one_library`)."""
    try:
        with adapter.computing():
            xp = adapter.namespace()
            vector = probe_input()
            values = xp.astype(adapter.to_device(vector), xp.float32)
            total = xp.sum(values)
            small = xp.astype(adapter.to_device(vector[:PATTERN_ELEMENTS] / 64), xp.float32)
            exp = xp.exp(small)
            side = PATTERN_MATMUL * PATTERN_MATMUL
            square = vector[side : 2 * side].reshape(PATTERN_MATMUL, PATTERN_MATMUL)
            matrix = xp.astype(adapter.to_device(np.ascontiguousarray(square)), xp.float32)
            product = xp.matmul(matrix, matrix)
            module = type(exp).__module__.split(".")[0]
            bits = tuple(
                bytes(adapter.host_float32(array).tobytes()) for array in (total, exp, product)
            )
            return module, (bits[0], bits[1], bits[2])
    except Exception:  # a namespace without one of them cannot be probed: not a failure
        return None


def pattern_one_library(
    reference: tuple[str, tuple[bytes, ...]] | None, candidate: tuple[str, tuple[bytes, ...]] | None
) -> bool:
    """Whether two :func:`probe_patterns` say one library: arrays of one module and any of
    the three results bit-identical (False when either could not be probed)."""
    if reference is None or candidate is None or reference[0] != candidate[0]:
        return False
    return any(ours == theirs for ours, theirs in zip(reference[1], candidate[1], strict=True))


def provenance_of(reference: Any, candidate: Any, ref_output: Any, cand_output: Any) -> Provenance:
    """Fingerprints of both outputs and the probe, for adapters ``reference``/``candidate``."""
    sums = probe_sum(reference), probe_sum(candidate)
    both = None if sums[0] is None or sums[1] is None else (sums[0], sums[1])
    return judge(fingerprint_of(ref_output), fingerprint_of(cand_output), both)
