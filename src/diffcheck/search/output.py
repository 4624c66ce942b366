"""The search's directory: ``bundles/``, ``findings.json`` and ``index.html``, all new files.

The directory must not exist; it is created, and every file in it is created new
(``O_CREAT|O_EXCL|O_NOFOLLOW``), so nothing is ever overwritten or written through a link.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import BundleError, ConfigError
from ..files import create_new
from .bundle import write_bundle
from .findings import FindingsDocument
from .recipes import Example
from .runner import Finding

if TYPE_CHECKING:
    from ..adapters import Adapter

__all__ = ["bundle_name", "describe_example", "write_outputs"]


def bundle_name(index: int, finding: Finding) -> str:
    """``003-linalg.vecdot-value-float32.json``: numbered, so names never collide."""
    stem = f"{index:03d}-{finding.function}-{finding.kind}-{finding.dtype}"
    return re.sub(r"[^A-Za-z0-9_.,-]", "_", stem) + ".json"


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{list(value.shape)} {np.array2string(value, threshold=12)}"
    return repr(value)


def describe_example(example: Example) -> str:
    """The example's inputs in one line: arrays with dtype, shape and values, then options."""
    parts = [_short(a) for a in example.args]
    parts += [_short(p) for p in example.positional]
    parts += [f"{k}={v}" for k, v in example.dtypes.items()]
    parts += [f"{k}={v!r}" for k, v in example.kwargs.items()]
    return ", ".join(parts).replace("\n", " ")


def write_new(path: Path, text: str) -> None:
    """Create ``path`` with ``text``, whole or not at all; never over a file or a link."""
    try:
        create_new(path, text.encode())
    except OSError as error:
        raise BundleError(f"cannot create {path}: {error.strerror}") from None


def write_outputs(
    directory: Path,
    document: FindingsDocument,
    findings: Sequence[Finding],
    reference: Adapter,
    candidate: Adapter,
) -> None:
    """Create ``directory`` and write every bundle, ``findings.json`` and ``index.html``."""
    from .page import render_page
    from .record import bundle_of

    try:
        directory.mkdir(parents=True)
        (directory / "bundles").mkdir()
    except FileExistsError:
        raise ConfigError(f"--out {directory} exists; it must be a new directory") from None
    except OSError as error:
        raise BundleError(f"cannot create {directory}: {error.strerror}") from None
    for entry, finding in zip(document.findings, findings, strict=True):
        write_bundle(directory / entry.bundle, bundle_of(finding, reference, candidate))
    text = json.dumps(document.model_dump(mode="json"), indent=2) + "\n"
    write_new(directory / "findings.json", text)
    write_new(directory / "index.html", render_page(document, findings))
