"""Exact output arrays in a report, and the checks that come before any stored byte is used.

Schema v1 stores an output as a JSON list of float32 bit patterns (the reference tool's
layout: about 12 bytes of JSON an element). Schema v2 stores the same exact values as the
base64 of their little-endian bytes, with the element count, the byte count and the SHA-256
of the bytes (1.33 bytes on disk per byte of output). Base64 inside the JSON keeps one report
one file: the create-new, incomplete-first and atomic-rename discipline of the writer covers
it unchanged, and nothing can pair a report with the wrong sidecar.

Decoding trusts nothing: the base64 length must follow from the byte count, the byte count
from the element count, the bytes must be strict base64 and hash to the stored digest, all
checked before an array is made from them.
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt
import pybase64

from ..errors import ReportError
from ..precision import f32_from_bits
from .models import OutputArray, OutputBits

__all__ = ["checked_bytes", "decode_output", "digest_and_text", "encode_output", "encode_outputs"]

_LITTLE_F32 = np.dtype("<f4")
# Below this many elements a thread costs more than it saves.
_PARALLEL_ELEMENTS = 1 << 18


def digest_and_text(data: bytes | memoryview) -> tuple[str, str]:
    """The SHA-256 (lower-case hex) and the standard base64 text of ``data`` (any bytes buffer)."""
    return hashlib.sha256(data).hexdigest(), pybase64.b64encode(data).decode("ascii")


def checked_bytes(
    text: str, nbytes: int, sha256: str, label: str, error: type[ReportError] = ReportError
) -> bytes:
    """The bytes ``text`` holds, once it is shown to hold exactly ``nbytes`` hashing to ``sha256``.

    The length of the text is checked against ``nbytes`` before anything is decoded, the
    decoding is strict, and the digest is checked last. Any failure raises ``error`` (one
    line naming ``label``).
    """
    expected_chars = 4 * ((nbytes + 2) // 3)
    if len(text) != expected_chars:
        raise error(
            f"{label}: {nbytes} bytes take {expected_chars} base64 characters, "
            f"not the {len(text)} stored"
        )
    try:
        data = pybase64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as failure:
        raise error(f"{label}: not strict base64 ({failure})") from None
    if len(data) != nbytes:  # padding characters can shorten what the length promised
        raise error(f"{label}: decodes to {len(data)} bytes, not {nbytes}")
    if hashlib.sha256(data).hexdigest() != sha256:
        raise error(f"{label}: the bytes do not match their SHA-256 digest")
    return data


def encode_output(values: npt.ArrayLike) -> OutputArray:
    """The v2 record of ``values`` as exact float32 (row-major, flattened)."""
    # The array's own buffer, not a bytes copy: hashing and base64 read it in place.
    flat = np.ascontiguousarray(values, dtype=_LITTLE_F32).reshape(-1)
    digest, text = digest_and_text(flat.data.cast("B"))
    return OutputArray(
        dtype="float32",
        element_count=flat.size,
        nbytes=flat.nbytes,
        sha256=digest,
        base64=text,
    )


@functools.cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1), thread_name_prefix="encode")


def encode_outputs(*outputs: npt.ArrayLike | None) -> list[OutputArray | None]:
    """:func:`encode_output` of each output (None stays None), large ones in parallel.

    SHA-256 and base64 release the GIL on large buffers, so two outputs of a million
    elements encode in about the time of one.
    """
    arrays = [None if values is None else np.asarray(values) for values in outputs]
    large = [a for a in arrays if a is not None and a.size >= _PARALLEL_ELEMENTS]
    if len(large) < 2 or (os.cpu_count() or 1) < 2:
        return [None if a is None else encode_output(a) for a in arrays]
    futures = [None if a is None else _pool().submit(encode_output, a) for a in arrays]
    return [None if f is None else f.result() for f in futures]


def decode_output(record: OutputBits | OutputArray, label: str) -> npt.NDArray[np.float32]:
    """The float32 values ``record`` stores, after every size and digest check.

    Raises
    ------
    ReportError
        One line naming ``label`` (``result.actual``...) and the first check that failed.
    """
    if isinstance(record, OutputBits):
        return f32_from_bits(record.f32_bits)
    expected_bytes = record.element_count * _LITTLE_F32.itemsize
    if record.nbytes != expected_bytes:
        raise ReportError(
            f"{label}: {record.element_count} float32 elements are {expected_bytes} bytes, "
            f"not the stated {record.nbytes}"
        )
    data = checked_bytes(record.base64, record.nbytes, record.sha256, label)
    return np.frombuffer(data, dtype=_LITTLE_F32).astype(np.float32, copy=False)
