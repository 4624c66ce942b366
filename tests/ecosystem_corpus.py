"""The ecosystem's own Array API code: third-party functions and estimators, unchanged.

Each case is a function of its arrays alone, as a user calls it (``xpx.cov(x)``,
``PCA(...).fit_transform(x)``): the library finds its namespace through the arrays. Each
names what ``locate`` must find on each candidate at float32:

- ``CLEAN``: no call is wrong and the paths never split (a clean library, 0 false alarms);
- ``Real(function)``: a real deviation of that backend, first found at a call of
  ``function`` (each is listed in docs/locate.md with its evidence);
- ``Known(cause, raises)``: a false alarm or a failure to run whose cause is named; the
  corpus test marks it ``xfail(strict=True)`` with that cause, so the case reports itself
  once the cause is gone (none is left).

At float16 and bfloat16 (``precision="f16"``, ``"bf16"``: the candidate's floating inputs
are cast to that dtype, the reference keeps float32) every case runs on each candidate that
runs it at float32 and executes the precision (torch:cpu and mlx:cpu; array_api_strict
executes f32 only). Each is clean unless ``Case.narrow`` names what else it must give:

- ``Raises(function, error, reason)``: the candidate's run stops at a call of ``function``
  with an exception matching ``error``, where the reference ran on (``result.raised``);
- ``Splits(reference, reason)``: the library takes another path on the candidate's dtype
  than on the reference's float32, first parting at a call of ``reference`` on the
  reference's side (``result.path_split``).

Neither may come with a wrong call.

MLX runs a case only where the library accepts ``mlx.core`` (which is not an Array API
namespace: no ``unique_values``, ``signbit``, ``bool``, ``astype(copy=)``, ``asarray(device=)``
or array ``.device``); where it does not, the case lists no expectation for it.

SciPy dispatches on the Array API only when ``SCIPY_ARRAY_API=1`` is set before it is first
imported; this module sets it, and ``scipy_dispatches`` says whether it took effect.
"""

from __future__ import annotations

import os

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # before SciPy (and scikit-learn) import it

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import array_api_extra as xpx
import numpy as np
import scipy.special as special
import scipy.stats as stats
import sklearn
from array_api_compat import array_namespace
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import Ridge
from sklearn.metrics import (
    accuracy_score,
    max_error,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    r2_score,
)
from sklearn.metrics.pairwise import (
    additive_chi2_kernel,
    cosine_similarity,
    euclidean_distances,
    linear_kernel,
    polynomial_kernel,
    rbf_kernel,
    sigmoid_kernel,
)
from sklearn.preprocessing import (
    KernelCenterer,
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    StandardScaler,
)
from sklearn.utils.extmath import row_norms
from sklearn.utils.extmath import softmax as sk_softmax

CANDIDATES = ("array_api_strict", "torch:cpu", "mlx:cpu")


@dataclass(frozen=True)
class Real:
    """A real deviation of the candidate, first found at a call of ``function``."""

    function: str
    evidence: str


@dataclass(frozen=True)
class Known:
    """A false alarm (or a failure to run) of a named cause, not yet fixed.

    ``explained`` matches every wrong call's local reason (or, for a cause that stops the
    run, the exception's message): a wrong call it does not match is no longer this cause's
    and fails the case outright.
    """

    cause: str
    explained: str
    raises: type[BaseException] = AssertionError


@dataclass(frozen=True)
class Raises:
    """The candidate's run stops at a call of ``function`` raising ``error`` (a regex)."""

    function: str
    error: str
    reason: str


@dataclass(frozen=True)
class Splits:
    """The paths part at a call of ``reference`` on the reference's side: a dtype branch."""

    reference: str
    reason: str


CLEAN = "clean"
Expectation = str | Real | Known | Raises | Splits
#: The precisions below float32 the corpus runs at, on each candidate that executes them.
NARROW = ("f16", "bf16")


@dataclass(frozen=True)
class Case:
    """One third-party function, its inputs, and what locate must find per candidate."""

    library: str
    fn: Callable[..., Any]
    inputs: Callable[[], tuple[Any, ...]]
    expect: dict[str, Expectation] = field(default_factory=dict)
    #: (candidate, precision) -> what it must give at f16 or bf16 where that is not clean.
    narrow: dict[tuple[str, str], Expectation] = field(default_factory=dict)

    def expected(self, candidate: str, precision: str) -> Expectation:
        """What locate must find on ``candidate`` at ``precision``."""
        if precision == "f32":
            return self.expect[candidate]
        return self.narrow.get((candidate, precision), CLEAN)


def _rng() -> np.random.Generator:
    return np.random.default_rng(32)


def _matrix() -> tuple[Any, ...]:
    return (_rng().standard_normal((12, 4)).astype(np.float32),)


def _cancelling() -> tuple[Any, ...]:
    # Column sums of this kernel cancel (one is about -0.1 from terms near 10): torch's
    # sum there differs from NumPy's by 64 ULP of the result, well within the terms' error.
    return (np.random.default_rng(0).standard_normal((12, 4)).astype(np.float32),)


def _vector() -> tuple[Any, ...]:
    return (_rng().standard_normal(12).astype(np.float32),)


def _positive() -> tuple[Any, ...]:
    return (np.abs(_rng().standard_normal((12, 4))).astype(np.float32) + 0.1,)


def _pair() -> tuple[Any, ...]:
    y = _rng().standard_normal(12).astype(np.float32)
    return y, (y * 0.9 + 0.05).astype(np.float32)


def _positive_pair() -> tuple[Any, ...]:
    (p,) = _positive()
    return p[:, 0].copy(), p[:, 1].copy()


def _ints() -> tuple[Any, ...]:
    return np.array([1, 2, 3, 4, 5, 3], np.int64), np.array([2, 4, 6], np.int64)


def _labels() -> tuple[Any, ...]:
    return (np.array([0, 1, 2] * 4, np.int64),)


def _matrix_labels() -> tuple[Any, ...]:
    return (*_matrix(), *_labels())


def _matrix_target() -> tuple[Any, ...]:
    return (*_matrix(), *_vector())


def sk(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run with scikit-learn's Array API dispatch on, as its documentation says."""

    def run(*arrays: Any) -> Any:
        with sklearn.config_context(array_api_dispatch=True):
            return fn(*arrays)

    run.__name__ = getattr(fn, "__name__", "estimator")
    return run


def metric(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``'s Python float returned as a 0-d float64 array of the inputs' namespace.

    A scikit-learn metric returns ``float(...)`` of its last array; locate compares a
    program's arrays (a Python float is refused), so the case hands the value back as the
    user would keep it in their namespace. float64: the value is a Python float on both
    sides, and the default floating dtype is each library's own.
    """

    def run(*arrays: Any) -> Any:
        xp = array_namespace(*arrays)
        return xp.asarray(fn(*arrays), dtype=xp.float64)

    run.__name__ = getattr(fn, "__name__", "metric")
    return run


def scipy_dispatches() -> bool:
    """Whether SciPy was imported with its Array API dispatch on."""
    from scipy._lib._array_api import SCIPY_ARRAY_API

    return bool(SCIPY_ARRAY_API)


all_clean = {"array_api_strict": CLEAN, "torch:cpu": CLEAN, "mlx:cpu": CLEAN}
no_mlx_clean = {"array_api_strict": CLEAN, "torch:cpu": CLEAN}
torch_sqrt = Real(
    "sqrt",
    "torch's float32 sqrt is not correctly rounded: 15,648 of 100,000 uniform arguments in "
    "[0, 10) differ from the correctly rounded root (NumPy's match it everywhere)",
)

# --- what a case gives at f16 and bf16 where it is not clean -----------------------------

#: torch's ``@`` does not promote two floating dtypes, which the standard's matmul does.
torch_matmul = Raises(
    "matmul",
    r"have the same dtype",
    "scikit-learn fits a float16 or bfloat16 input in float64 (a dtype it does not keep) and "
    "then computes X @ coef_ of the input's dtype and float64: torch's @ refuses two floating "
    "dtypes (float32 @ float64 raises too), where the standard's matmul, NumPy and "
    "array_api_compat.torch.matmul promote",
)
#: SciPy's special functions compute on NumPy arrays, and NumPy has no bfloat16.
scipy_bf16 = {
    ("torch:cpu", "bf16"): Raises(
        "(the program's own code)",
        r"unsupported ScalarType BFloat16",
        "SciPy converts the input to NumPy, which has no bfloat16 (torch's __array__ raises)",
    ),
    ("mlx:cpu", "bf16"): Raises(
        "(the program's own code)",
        r"'bfloat16' is not a valid PEP 3118 buffer format string",
        "SciPy converts the input to NumPy, which has no bfloat16 (MLX's buffer raises)",
    ),
}
#: scikit-learn computes float32 distances in float64 chunks, and other dtypes directly.
upcast_split = Splits(
    "empty",
    "scikit-learn's euclidean_distances upcasts float32 inputs by chunks "
    "(_euclidean_distances_upcast: empty at pairwise.py:581) and computes float16 and float64 "
    "(bfloat16 becomes float64) directly: the reference's float32 takes another path",
)
#: scikit-learn keeps no bfloat16: it turns it into float64, the reference's float32 stays.
scaler_split = Splits(
    "astype",
    "scikit-learn turns bfloat16 into float64 (check_array keeps float64, float32 and "
    "float16) and upcasts the reference's float32 sums to float64 (astype at extmath.py:1102) "
    "where the candidate's float64 needs none",
)
sklearn_narrow = {("torch:cpu", p): torch_matmul for p in NARROW}
distances_narrow = {("torch:cpu", p): upcast_split for p in NARROW}

CORPUS: dict[str, Case] = {
    # array-api-extra
    "xpx.cov": Case("array-api-extra", xpx.cov, lambda: (_matrix()[0].T.copy(),), no_mlx_clean),
    "xpx.pad": Case("array-api-extra", lambda x: xpx.pad(x, 2), _matrix, no_mlx_clean),
    "xpx.setdiff1d": Case(
        "array-api-extra",
        xpx.setdiff1d,
        _ints,
        no_mlx_clean,
    ),
    "xpx.kron": Case(
        "array-api-extra",
        xpx.kron,
        lambda: (_matrix()[0][:2, :3].copy(), _matrix()[0][:3, :2].copy()),
        all_clean,
    ),
    "xpx.nanmin": Case("array-api-extra", lambda x: xpx.nanmin(x, axis=1), _matrix, all_clean),
    "xpx.atleast_nd": Case(
        "array-api-extra", lambda x: xpx.atleast_nd(x, ndim=3), _vector, all_clean
    ),
    "xpx.nunique": Case("array-api-extra", xpx.nunique, _labels, no_mlx_clean),
    "xpx.sinc": Case("array-api-extra", xpx.sinc, _vector, no_mlx_clean),
    "xpx.isclose": Case("array-api-extra", lambda a, b: xpx.isclose(a, b), _pair, no_mlx_clean),
    "xpx.one_hot": Case("array-api-extra", lambda y: xpx.one_hot(y, 3), _labels, no_mlx_clean),
    "xpx.create_diagonal": Case("array-api-extra", xpx.create_diagonal, _vector, no_mlx_clean),
    "xpx.nan_to_num": Case("array-api-extra", xpx.nan_to_num, _vector, no_mlx_clean),
    "xpx.nanmean": Case("array-api-extra", xpx.nanmean, _matrix, no_mlx_clean),
    "xpx.nansum": Case("array-api-extra", xpx.nansum, _matrix, all_clean),
    "xpx.nanmax": Case("array-api-extra", lambda x: xpx.nanmax(x, axis=0), _matrix, all_clean),
    "xpx.isin": Case(
        "array-api-extra",
        xpx.isin,
        _ints,
        no_mlx_clean,
    ),
    "xpx.union1d": Case("array-api-extra", xpx.union1d, _ints, no_mlx_clean),
    "xpx.deg2rad": Case("array-api-extra", xpx.deg2rad, _vector, all_clean),
    "xpx.partition": Case("array-api-extra", lambda x: xpx.partition(x, 3), _vector, no_mlx_clean),
    "xpx.unravel_index": Case(
        "array-api-extra", lambda i: xpx.unravel_index(i, (3, 4)), _labels, all_clean
    ),
    # SciPy
    "scipy.special.logsumexp": Case("scipy", special.logsumexp, _matrix, no_mlx_clean),
    "scipy.special.softmax": Case(
        "scipy", lambda x: special.softmax(x, axis=1), _matrix, all_clean
    ),
    "scipy.special.xlogy": Case(
        "scipy", special.xlogy, lambda: (_positive()[0], _positive()[0] + 1), no_mlx_clean
    ),
    "scipy.special.entr": Case("scipy", special.entr, _positive, all_clean, narrow=scipy_bf16),
    "scipy.special.expit": Case("scipy", special.expit, _vector, all_clean, narrow=scipy_bf16),
    "scipy.special.erf": Case("scipy", special.erf, _vector, all_clean, narrow=scipy_bf16),
    "scipy.special.log_ndtr": Case(
        "scipy", special.log_ndtr, _vector, all_clean, narrow=scipy_bf16
    ),
    "scipy.special.gammaln": Case(
        "scipy", special.gammaln, _positive, all_clean, narrow=scipy_bf16
    ),
    "scipy.stats.zscore": Case("scipy", stats.zscore, _matrix, no_mlx_clean),
    "scipy.stats.skew": Case("scipy", stats.skew, _matrix, no_mlx_clean),
    "scipy.stats.gmean": Case("scipy", stats.gmean, _positive, no_mlx_clean),
    # scikit-learn
    "sklearn PCA": Case(
        "scikit-learn",
        sk(lambda x: PCA(n_components=2, svd_solver="full").fit_transform(x)),
        _matrix,
        no_mlx_clean,
    ),
    "sklearn LinearDiscriminantAnalysis": Case(
        "scikit-learn",
        sk(lambda x, y: LinearDiscriminantAnalysis(solver="svd").fit(x, y).predict_proba(x)),
        _matrix_labels,
        # Its linalg.svd(full_matrices=False) of a (3, 4) matrix of rank 2: torch's third
        # right vector is another unit vector of the 2-dimensional null space than NumPy's,
        # judged by what the input determines (values.gauge).
        no_mlx_clean,
        narrow=sklearn_narrow,
    ),
    "sklearn Ridge": Case(
        "scikit-learn",
        sk(lambda x, y: Ridge(alpha=1.0, solver="svd").fit(x, y).predict(x)),
        _matrix_target,
        no_mlx_clean,
        narrow=sklearn_narrow,
    ),
    "sklearn r2_score": Case("scikit-learn", sk(metric(r2_score)), _pair, no_mlx_clean),
    "sklearn mean_squared_error": Case(
        "scikit-learn", sk(metric(mean_squared_error)), _pair, no_mlx_clean
    ),
    "sklearn mean_absolute_error": Case(
        "scikit-learn", sk(metric(mean_absolute_error)), _pair, no_mlx_clean
    ),
    "sklearn mean_absolute_percentage_error": Case(
        "scikit-learn", sk(metric(mean_absolute_percentage_error)), _pair, no_mlx_clean
    ),
    "sklearn max_error": Case("scikit-learn", sk(metric(max_error)), _pair, no_mlx_clean),
    "sklearn accuracy_score": Case(
        "scikit-learn",
        sk(metric(accuracy_score)),
        lambda: (_labels()[0], _labels()[0][::-1].copy()),
        no_mlx_clean,
    ),
    "sklearn StandardScaler": Case(
        "scikit-learn",
        sk(lambda x: StandardScaler().fit_transform(x)),
        _matrix,
        no_mlx_clean,
        narrow={("torch:cpu", "bf16"): scaler_split},
    ),
    "sklearn MinMaxScaler": Case(
        "scikit-learn", sk(lambda x: MinMaxScaler().fit_transform(x)), _matrix, no_mlx_clean
    ),
    "sklearn MaxAbsScaler": Case(
        "scikit-learn", sk(lambda x: MaxAbsScaler().fit_transform(x)), _matrix, no_mlx_clean
    ),
    "sklearn Normalizer": Case(
        "scikit-learn",
        sk(lambda x: Normalizer().fit_transform(x)),
        _matrix,
        {"array_api_strict": CLEAN, "torch:cpu": torch_sqrt},
    ),
    "sklearn KernelCenterer": Case(
        "scikit-learn",
        sk(lambda x: KernelCenterer().fit_transform(x @ x.T)),
        _cancelling,
        {
            "array_api_strict": CLEAN,
            "torch:cpu": CLEAN,
        },
    ),
    "sklearn linear_kernel": Case("scikit-learn", sk(linear_kernel), _matrix, no_mlx_clean),
    "sklearn polynomial_kernel": Case("scikit-learn", sk(polynomial_kernel), _matrix, no_mlx_clean),
    "sklearn sigmoid_kernel": Case("scikit-learn", sk(sigmoid_kernel), _matrix, no_mlx_clean),
    "sklearn rbf_kernel": Case(
        "scikit-learn", sk(rbf_kernel), _matrix, no_mlx_clean, narrow=distances_narrow
    ),
    "sklearn cosine_similarity": Case(
        "scikit-learn",
        sk(cosine_similarity),
        _matrix,
        {"array_api_strict": CLEAN, "torch:cpu": torch_sqrt},
    ),
    "sklearn euclidean_distances": Case(
        "scikit-learn",
        sk(euclidean_distances),
        _matrix,
        {"array_api_strict": CLEAN, "torch:cpu": torch_sqrt},
        narrow=distances_narrow,
    ),
    "sklearn additive_chi2_kernel": Case(
        "scikit-learn", sk(additive_chi2_kernel), _positive, no_mlx_clean
    ),
    "sklearn row_norms": Case(
        "scikit-learn",
        sk(lambda x: row_norms(x)),
        _matrix,
        {"array_api_strict": CLEAN, "torch:cpu": torch_sqrt, "mlx:cpu": CLEAN},
    ),
    "sklearn softmax": Case("scikit-learn", sk(sk_softmax), _matrix, all_clean),
}
