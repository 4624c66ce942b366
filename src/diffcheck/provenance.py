"""Which library actually computed each side of a comparison, and whether the two are independent.

A backend's name is a label: a NumPy adapter subclass registered as ``fastlib``, or a plugin
whose namespace is array-api-compat's NumPy, passes :func:`~diffcheck.adapters.same_backend`
and then vouches for NumPy with NumPy. Two facts are recorded instead of trusted:

* a :class:`Fingerprint` of each side, read off the arrays the function returned: the
  top-level module of their type (``numpy`` for an ``ndarray``, whatever adapter returned
  it), that module's version and, for NumPy, the BLAS it was built with;
* cheap independence probes (:func:`probe_bits`): both namespaces sum the same long
  float32 vector (a summation order: pairwise blocks, SIMD lanes, tree reductions), compute
  ``exp`` over thousands of varied values (an ULP pattern: each library's polynomial and
  range reduction) and multiply a small matrix by itself (a blocking order). Two libraries
  whose sums agree bit for bit, or whose ``exp`` and matmul both do, are, as far as this
  can tell, one implementation (:func:`probes_agree`); a wrapper over NumPy with a float64
  sum of its own still computes ``exp`` and matmul as NumPy does.

What it cannot detect: a library that wraps another's arrays in a type of its own and
delegates every operation (array-api-strict over NumPy: the fingerprint differs, the probe
flags it), a library that copies another's summation order exactly, or a candidate that
computes with another library and converts the result into arrays of its own type (the
fingerprint names the wrapper; only the probe may notice).
"""

from __future__ import annotations

import functools
import hashlib
import sys
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ._installed import installed_version

__all__ = [
    "PATTERN_ELEMENTS",
    "PATTERN_MATMUL",
    "PROBE_ELEMENTS",
    "Fingerprint",
    "ProbeBits",
    "Provenance",
    "exp_input",
    "fingerprint_of",
    "judge",
    "namespace_name",
    "numpy_blas",
    "one_library",
    "pattern_one_library",
    "probe_bits",
    "probe_input",
    "probe_patterns",
    "probes_agree",
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


@dataclass(frozen=True)
class ProbeBits:
    """What one side's namespace computed for the independence probes (:func:`probe_bits`):
    the float32 sum's four bytes, and the SHA-256 of the bits of ``exp`` over
    :func:`exp_input` and of a float32 matmul (None: that probe could not run there)."""

    sum: bytes
    exp: bytes | None = None
    matmul: bytes | None = None


#: One side's probe as the caller has it: the sum's bytes alone (what a report before the
#: exp and matmul probes records), or all three.
SideProbe = bytes | ProbeBits


def _bits(side: SideProbe) -> ProbeBits:
    return side if isinstance(side, ProbeBits) else ProbeBits(side)


def probes_agree(reference: SideProbe, candidate: SideProbe) -> bool:
    """Whether two sides' probes say one implementation: the sums' bits agree, or both the
    ``exp`` and the matmul bits agree. Matmul alone is not enough (two libraries may share
    one BLAS: torch's CPU matmul gives NumPy's bits here), nor is ``exp`` alone; an
    independent elementwise ``exp`` bit-identical on thousands of varied inputs is not seen
    (torch:cpu differs from NumPy on 1621 of 4096, mlx:cpu on 2244)."""
    ours, theirs = _bits(reference), _bits(candidate)
    if ours.sum == theirs.sum:
        return True
    pattern = ours.exp is not None and ours.matmul is not None
    return pattern and ours.exp == theirs.exp and ours.matmul == theirs.matmul


def one_library(
    reference: Fingerprint,
    candidate: Fingerprint,
    probes: tuple[SideProbe, SideProbe] | None = None,
) -> bool:
    """Whether both sides are one library: arrays of one module, computed through the same
    namespace (or a namespace not known on a side), or through another namespace whose
    probes agree (:func:`probes_agree`, ``probes``: a namespace over NumPy that returns
    NumPy's arrays and sums as NumPy does, such as the example plugin, or that sums in
    float64 but computes ``exp`` and matmul as NumPy does, is NumPy under another name). A
    backend that stores its values in NumPy arrays but computes with functions of its own
    is independent by this rule."""
    if reference.module != candidate.module:
        return False
    known = reference.namespace is not None and candidate.namespace is not None
    if not known or reference.namespace == candidate.namespace:
        return True
    return probes is not None and probes_agree(probes[0], probes[1])


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


def _why(probes: tuple[SideProbe, SideProbe]) -> str:
    """Which probes agree, as the verdict's note says it."""
    ours, theirs = _bits(probes[0]), _bits(probes[1])
    if ours.sum == theirs.sum:
        return f"a {PROBE_ELEMENTS}-element float32 sum is bit-identical on both sides"
    return (
        f"exp over {PATTERN_ELEMENTS} values and a {PATTERN_MATMUL}x{PATTERN_MATMUL} "
        "matmul are bit-identical on both sides"
    )


def judge(
    reference: Fingerprint,
    candidate: Fingerprint,
    probes: tuple[SideProbe, SideProbe] | None,
) -> Provenance:
    """The provenance of a comparison from both fingerprints and both sides' probes
    (:func:`probes_agree`)."""
    if one_library(reference, candidate, probes):
        by_probe = probes is not None and not one_library(reference, candidate)
        probe = f", and {_why(probes)}" if by_probe and probes is not None else ""
        return Provenance(
            reference,
            candidate,
            False,
            f"NOT INDEPENDENT: both sides returned {reference.module} arrays{probe}",
            one_library=True,
        )
    if probes is None:
        return Provenance(reference, candidate, None, "independence probe did not run")
    if probes_agree(probes[0], probes[1]):
        return Provenance(
            reference,
            candidate,
            False,
            f"NOT INDEPENDENT: {_why(probes)} (one implementation under two names?)",
        )
    return Provenance(
        reference, candidate, True, f"independent: the {PROBE_ELEMENTS}-element sums differ"
    )


#: The pattern probes' sizes: an elementwise ``exp`` (its ULP pattern) and a matmul.
PATTERN_ELEMENTS: Final = 4096
PATTERN_MATMUL: Final = 48


@functools.cache
def _exp_vector() -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(20240608)
    # Magnitudes from 2**-12 to 2**6.4 of either sign, inside float32's exp range: each
    # library's polynomial and range reduction round a different subset of them.
    signs = rng.choice(np.array([-1.0, 1.0]), PATTERN_ELEMENTS)
    vector = np.clip(signs * np.exp2(rng.uniform(-12.0, 6.4, PATTERN_ELEMENTS)), -87.0, 88.0)
    found: npt.NDArray[np.float32] = np.asarray(vector, dtype=np.float32)
    found.flags.writeable = False
    return found


def exp_input() -> npt.NDArray[np.float32]:
    """The ``exp`` probe's fixed input: :data:`PATTERN_ELEMENTS` varied float32 values (a
    writable copy per caller)."""
    return _exp_vector().copy()


def _digest(adapter: Any, array: Any) -> bytes:
    return hashlib.sha256(adapter.host_float32(array).tobytes()).digest()


def _exp_bits(adapter: Any, xp: Any) -> bytes | None:
    try:
        return _digest(adapter, xp.exp(xp.astype(adapter.to_device(exp_input()), xp.float32)))
    except Exception:  # a namespace without exp cannot be probed for it: not a failure
        return None


def _matmul_bits(adapter: Any, xp: Any) -> bytes | None:
    side = PATTERN_MATMUL * PATTERN_MATMUL
    square = probe_input()[side : 2 * side].reshape(PATTERN_MATMUL, PATTERN_MATMUL)
    try:
        matrix = xp.astype(adapter.to_device(np.ascontiguousarray(square)), xp.float32)
        return _digest(adapter, xp.matmul(matrix, matrix))
    except Exception:  # a namespace without matmul cannot be probed for it: not a failure
        return None


def probe_patterns(adapter: Any) -> tuple[str, ProbeBits] | None:
    """What ``adapter``'s namespace computes here: the top-level module of the arrays it
    returns, and its :class:`ProbeBits` (its float32 sum of :func:`probe_input`, a
    summation order; ``exp`` over :func:`exp_input`, an ULP pattern; a float32 matmul, a
    blocking and accumulation order). None when the namespace cannot sum the probe's
    vector as float32 (the probe then says it did not run); an ``exp`` or matmul it lacks
    is None in the bits."""
    try:
        with adapter.computing():
            xp = adapter.namespace()
            total = xp.sum(xp.astype(adapter.to_device(probe_input()), xp.float32))
            summed = bytes(adapter.host_float32(total).tobytes())
            module = type(total).__module__.split(".")[0]
            found = ProbeBits(summed, _exp_bits(adapter, xp), _matmul_bits(adapter, xp))
    except Exception:  # a namespace without sum or float32 cannot be probed: not a failure
        return None
    return (module, found) if len(summed) == 4 else None


def probe_bits(adapter: Any) -> ProbeBits | None:
    """``adapter``'s :class:`ProbeBits` on its device (:func:`probe_patterns`), or None."""
    found = probe_patterns(adapter)
    return None if found is None else found[1]


def pattern_one_library(
    reference: tuple[str, ProbeBits] | None, candidate: tuple[str, ProbeBits] | None
) -> bool:
    """Whether two :func:`probe_patterns` say one library: arrays of one module and probes
    that agree (:func:`probes_agree`); False when either could not be probed."""
    if reference is None or candidate is None or reference[0] != candidate[0]:
        return False
    return probes_agree(reference[1], candidate[1])


def provenance_of(reference: Any, candidate: Any, ref_output: Any, cand_output: Any) -> Provenance:
    """Fingerprints of both outputs and the probes, for adapters ``reference``/``candidate``."""
    ours, theirs = probe_bits(reference), probe_bits(candidate)
    both = None if ours is None or theirs is None else (ours, theirs)
    return judge(fingerprint_of(ref_output), fingerprint_of(cand_output), both)
