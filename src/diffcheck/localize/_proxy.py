"""Recording proxies: a namespace and its arrays that log every Array API call a program makes.

A program ``fn(xp, *arrays)`` is run with ``xp`` replaced by a :class:`RecordingNamespace`
and its arrays by :class:`Tracked` wrappers. Every namespace function (``xp.exp``,
``xp.linalg.matmul``), array method, operator (``a @ b``, ``a + 1``, ``-a``), index
(``a[i]``) and attribute that computes (``a.T``, ``a.mT``) goes through
:meth:`Recorder.call`, which runs the real call on the unwrapped arrays and notes it in
program order: its name, the call site in the user's code, the inputs and the outputs.
What a record keeps of the arrays (everything, or digests only) is the recorder's choice.
"""

from __future__ import annotations

import contextlib
import operator
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType, ModuleType
from typing import Any

import numpy as np

__all__ = ["LEAVES", "RawCall", "Recorder", "RecordingNamespace", "Tracked", "is_array", "unwrap"]

_HERE = str(Path(__file__).parent)


_ARRAY_TYPES: dict[type, bool] = {}
#: Argument types that never hold an array, tracked or not (most arguments of a call, after
#: its arrays).
LEAVES = frozenset([int, float, bool, complex, str, type(None), slice, type(Ellipsis)])


def is_array(value: Any) -> bool:
    """Whether ``value`` is an array (of any library), not a scalar, dtype or device.

    Decided once per type: a program's calls ask about ten times per call.
    """
    kind = type(value)
    found = _ARRAY_TYPES.get(kind)
    if found is None:
        found = _ARRAY_TYPES[kind] = (
            hasattr(value, "shape")
            and hasattr(value, "dtype")
            and not isinstance(value, type)
            and not isinstance(value, bool | int | float | complex)
        )
    return found


def unwrap(value: Any) -> Any:
    """``value`` with every :class:`Tracked` replaced by its array (in tuples, lists, dicts)."""
    kind = type(value)
    if kind is Tracked:
        return value.raw
    if kind is tuple:  # a call's arguments: most are tracked arrays or plain scalars
        return tuple(
            [v.raw if type(v) is Tracked else v if type(v) in LEAVES else unwrap(v) for v in value]
        )
    if isinstance(value, Tracked):
        return value.raw
    if isinstance(value, tuple):
        return tuple(unwrap(v) for v in value)
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    return value


def _call_site() -> str:
    """``file:line`` of the innermost frame outside this package (the user's call)."""
    # Asked by Recorder.call only: the walk starts at its caller (mostly a recording wrapper).
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_HERE):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    code = frame.f_code
    # Keyed by the code object's identity: its hash is worked out anew at each lookup
    # (its constants, names and bytecode), about a microsecond a call. The entry holds the
    # code object, so the identity stays its own.
    key = (id(code), frame.f_lineno)
    found = _SITES.get(key)
    if found is not None and found[0] is code:
        return found[1]
    if len(_SITES) > 4096:  # code made on the fly (exec, many lambdas): start again
        _SITES.clear()
    site = f"{code.co_filename}:{frame.f_lineno}"
    _SITES[key] = (code, site)
    return site


#: ``file:line`` (with its code object) by code identity and line: the same few sites come
#: back every run.
_SITES: dict[tuple[int, int], tuple[CodeType, str]] = {}


@dataclass(slots=True)
class RawCall:
    """One call as it ran: the callable, its unwrapped arguments and its outputs."""

    index: int
    name: str
    site: str
    function: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    outputs: list[Any] = field(default_factory=list)
    #: "namespace" (xp.f), "operator" (a + b, in the mathematics' order), or "array" (an
    #: index, an attribute or a method: no function of the standard calls it that way).
    via: str = "namespace"
    #: Whether the function returned one array (not a tuple or list of them).
    single: bool = True


class Recorder:
    """Runs calls and hands each, in program order, to ``observe``.

    ``observe(call)`` sees the unwrapped arguments and outputs; it may raise to stop the
    program (the exception propagates out of ``fn``).
    """

    def __init__(self, observe: Callable[[RawCall], None]) -> None:
        self.observe = observe
        self.count = 0
        #: The recording namespace, for ``array.__array_namespace__()`` inside the program.
        self.namespace: Any = None
        #: The last call (or namespace attribute) that raised: (error, index, name, site).
        self.failed: tuple[BaseException, int, str, str] | None = None

    def call(
        self,
        name: str,
        function: Callable[..., Any],
        args: Any,
        kwargs: Any,
        via: str = "namespace",
    ) -> Any:
        raw_args = unwrap(tuple(args))
        raw_kwargs = unwrap(dict(kwargs)) if kwargs else {}
        # NaN, overflow and division by zero are values under test here, not warnings: the
        # run ignores them (see ``running``).
        try:
            result = function(*raw_args, **raw_kwargs)
        except Exception as error:  # noted: a call that raises on one side only is a finding
            self.failed = (error, self.count, name, _call_site())
            raise
        if isinstance(result, (tuple, list)):
            arrays = [o for o in result if is_array(o)]
            single = False
        else:
            if isinstance(result, np.generic):
                # NumPy's reductions return a NumPy scalar (np.float64 is a float, which
                # is_array declines) where other libraries return a 0-d array: the call, and
                # its re-runs, give a 0-d array, so both sides record it.
                function = _scalar_as_array(function)
                result = np.asarray(result)
            arrays = [result] if is_array(result) else []
            single = True
        if not arrays:
            return result  # a scalar, dtype or info object: nothing to compare
        call = RawCall(
            self.count, name, _call_site(), function, raw_args, raw_kwargs, arrays, via, single
        )
        self.count += 1
        self.observe(call)
        return Tracked(result, self) if single else self.wrap(result)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """The program's run: a RuntimeWarning (NaN, overflow) is a value under test here.

        NumPy's floating-point errors are ignored, and other libraries' RuntimeWarnings too.
        Set once around the run, not per call: a warnings filter costs about 6 us to set up
        and undo, NumPy's error state about 2 us, and a located program makes two calls (its
        own and the re-run) per call. (The program's own NumPy code between its calls runs
        so too.)
        """
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            yield

    def wrap(self, value: Any) -> Any:
        if is_array(value):
            return Tracked(value, self)
        if isinstance(value, tuple) and type(value) is not tuple:
            items = [self.wrap(v) for v in value]
            if hasattr(type(value), "_fields"):  # a namedtuple: one argument per field
                return type(value)(*items)
            # A struct sequence (torch.return_types.linalg_svd) takes one sequence; a tuple
            # subclass of another kind may take either, so it is tried as a sequence.
            return type(value)(items)
        if isinstance(value, tuple | list):
            return type(value)(self.wrap(v) for v in value)
        return value


class RecordingNamespace:
    """An Array API namespace whose functions are recorded (sub-namespaces too)."""

    def __init__(self, xp: Any, recorder: Recorder, prefix: str = "") -> None:
        self._xp = xp
        self._recorder = recorder
        self._prefix = prefix
        # Not the library's own name: code that branches on which library it runs on
        # (array-api-compat's is_numpy_namespace, is_torch_namespace: xpx.cov calls numpy.cov
        # on NumPy, torch.cov on torch) takes its generic Array API path on both sides, so
        # the two sides make the same calls and each pairs with its own.
        self.__name__ = f"diffcheck.recording({getattr(xp, '__name__', type(xp).__name__)})"
        if recorder.namespace is None:
            recorder.namespace = self

    def __getattr__(self, name: str) -> Any:
        try:
            value = getattr(self._xp, name)
        except AttributeError as error:  # a function or dtype this library lacks
            recorder = self._recorder
            recorder.failed = (error, recorder.count, f"{self._prefix}{name}", _call_site())
            raise
        if name in ("linalg", "fft") and not callable(value):
            return RecordingNamespace(value, self._recorder, f"{self._prefix}{name}.")
        if isinstance(value, ModuleType):
            # A module the standard does not define (torch's ``special``, ``nn``): code that
            # asks ``hasattr(xp, "special")`` would take it on one side only, and call it
            # unrecorded. Without it, both sides take the same generic path.
            raise AttributeError(
                f"the recording namespace offers the standard's linalg and fft, not {name!r}"
            )
        if callable(value) and not isinstance(value, type) and not name.startswith("__"):
            if not _is_standard(name):
                # A name outside the standard means different things in each library
                # (torch's median returns values and indices, NumPy's the values): code
                # that asks hasattr(xp, "median") takes its standard path on both sides.
                raise AttributeError(
                    f"{self._prefix}{name} is not in the Array API standard; the recording "
                    "namespace offers the standard's functions, so both sides run the same ones"
                )
            recorder, qualified = self._recorder, f"{self._prefix}{name}"

            def recorded(*args: Any, **kwargs: Any) -> Any:
                return recorder.call(qualified, value, args, kwargs)

            # Kept on the instance: the program's next ``xp.<name>`` finds it without
            # coming here (a block asks for the same few functions again and again).
            self.__dict__[name] = recorded
            return recorded
        return value


def _scalar_as_array(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` returning a 0-d array where it returns a NumPy scalar."""

    def call(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        return np.asarray(result) if isinstance(result, np.generic) else result

    call.__name__ = getattr(function, "__name__", "call")
    return call


def _is_standard(name: str) -> bool:
    from ..values.spec import is_standard_name  # the standard's names, read once

    return is_standard_name(name)


def _method(name: str) -> Callable[..., Any]:
    """A callable that calls method ``name`` of its first argument (re-runnable elsewhere)."""

    def call(array: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(array, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _setter(xp: Any) -> Callable[..., Any]:
    """``a[key] = value`` as a function of ``a`` in namespace ``xp``: a new array."""

    def setitem(array: Any, key: Any, value: Any) -> Any:
        out = xp.asarray(array, copy=True)
        out[key] = value
        return out

    setitem.__name__ = "__setitem__"
    return setitem


def _binary(name: str, op: Callable[[Any, Any], Any], *, reflected: bool = False) -> Any:
    def method(self: Tracked, other: Any) -> Any:
        # Recorded in the order of the mathematics (``1 / x`` is divide(1, x)), so the call
        # re-runs, and replays as a bundle, as the standard's function.
        operands = (other, self) if reflected else (self, other)
        return self._recorder.call(name, op, operands, {}, "operator")

    return method


def _unary(name: str, op: Callable[[Any], Any]) -> Any:
    def method(self: Tracked) -> Any:
        return self._recorder.call(name, op, (self,), {}, "operator")

    return method


def _attribute(name: str) -> Any:
    def getter(self: Tracked) -> Any:
        return self._recorder.call(name, operator.attrgetter(name), (self,), {}, "array")

    return property(getter)


class Tracked:
    """An array whose operators, methods and computing attributes are recorded."""

    __slots__ = ("_recorder", "raw")

    def __init__(self, raw: Any, recorder: Recorder) -> None:
        self.raw = raw
        self._recorder = recorder

    # Metadata passes through; it computes nothing.
    @property
    def shape(self) -> Any:
        return self.raw.shape

    @property
    def dtype(self) -> Any:
        return self.raw.dtype

    @property
    def ndim(self) -> int:
        return int(self.raw.ndim)

    @property
    def size(self) -> Any:
        return self.raw.size

    @property
    def device(self) -> Any:
        return self.raw.device

    T = _attribute("T")
    mT = _attribute("mT")

    __add__ = _binary("add", operator.add)
    __radd__ = _binary("add", operator.add, reflected=True)
    __sub__ = _binary("subtract", operator.sub)
    __rsub__ = _binary("subtract", operator.sub, reflected=True)
    __mul__ = _binary("multiply", operator.mul)
    __rmul__ = _binary("multiply", operator.mul, reflected=True)
    __truediv__ = _binary("divide", operator.truediv)
    __rtruediv__ = _binary("divide", operator.truediv, reflected=True)
    __floordiv__ = _binary("floor_divide", operator.floordiv)
    __rfloordiv__ = _binary("floor_divide", operator.floordiv, reflected=True)
    __mod__ = _binary("remainder", operator.mod)
    __rmod__ = _binary("remainder", operator.mod, reflected=True)
    __pow__ = _binary("pow", operator.pow)
    __rpow__ = _binary("pow", operator.pow, reflected=True)
    __matmul__ = _binary("matmul", operator.matmul)
    __rmatmul__ = _binary("matmul", operator.matmul, reflected=True)
    __and__ = _binary("bitwise_and", operator.and_)
    __or__ = _binary("bitwise_or", operator.or_)
    __xor__ = _binary("bitwise_xor", operator.xor)
    __lshift__ = _binary("bitwise_left_shift", operator.lshift)
    __rshift__ = _binary("bitwise_right_shift", operator.rshift)
    __lt__ = _binary("less", operator.lt)
    __le__ = _binary("less_equal", operator.le)
    __gt__ = _binary("greater", operator.gt)
    __ge__ = _binary("greater_equal", operator.ge)
    __eq__ = _binary("equal", operator.eq)
    __ne__ = _binary("not_equal", operator.ne)
    __neg__ = _unary("negative", operator.neg)
    __pos__ = _unary("positive", operator.pos)
    __abs__ = _unary("abs", operator.abs)
    __invert__ = _unary("bitwise_invert", operator.invert)
    __hash__ = None  # type: ignore[assignment]

    def __getitem__(self, key: Any) -> Any:
        return self._recorder.call("__getitem__", operator.getitem, (self, key), {}, "array")

    def __setitem__(self, key: Any, value: Any) -> None:
        # Recorded as a function of the old array (a copy with the values set), which this
        # array then holds: the call re-runs on the reference's inputs like any other, and
        # outputs of earlier calls, kept for judging, are not changed under the judge.
        setter = _setter(self._recorder.namespace._xp)
        result = self._recorder.call("__setitem__", setter, (self, key, value), {}, "array")
        self.raw = unwrap(result)

    # Conversions to Python values leave the recorded world: control flow on values.
    def __bool__(self) -> bool:
        return bool(self.raw)

    def __float__(self) -> float:
        return float(self.raw)

    def __int__(self) -> int:
        return int(self.raw)

    def __index__(self) -> int:
        return operator.index(self.raw)

    def __len__(self) -> int:
        return len(self.raw)

    #: NumPy defers to this class's operators: ``numpy_array * x`` is recorded as multiply
    #: (not run unrecorded on a converted copy), and a ufunc called on it raises.
    __array_ufunc__ = None

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        # A conversion to NumPy leaves the recorded world, as float() does (SciPy's
        # fallback for a namespace it has no native function for runs on NumPy arrays).
        return np.array(self.raw, dtype=dtype, copy=copy)

    def __array_namespace__(self, api_version: str | None = None) -> Any:
        # What array_api_compat.array_namespace(x), SciPy's and scikit-learn's get_namespace
        # ask: the recording namespace, so a library that takes no xp is recorded too.
        return self._recorder.namespace

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            # The raw array's protocols (__torch_function__, __array_interface__,
            # __cuda_array_interface__) would let another library take this for the raw
            # array and compute on it unrecorded, on one side only.
            raise AttributeError(f"a recorded array does not offer {name}")
        value = getattr(self.raw, name)
        if callable(value):
            recorder = self._recorder

            def method(*args: Any, **kwargs: Any) -> Any:
                return recorder.call(name, _method(name), (self, *args), kwargs, "array")

            return method
        return value

    def __repr__(self) -> str:
        return f"Tracked({self.raw!r})"
