"""The core's name on the package index, which differs from its import package.

The index name ``diffcheck`` belongs to an unrelated project, so the core is distributed as
``diffcheck-numerics`` and imported as ``diffcheck``. Plugins depend on this name.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Final

__all__ = ["DISTRIBUTION", "IMPORT_PACKAGE", "__version__"]

#: What ``pip install`` and a plugin's ``dependencies`` name.
DISTRIBUTION: Final = "diffcheck-numerics"
#: What ``import`` names; entry points into this package are the core's own.
IMPORT_PACKAGE: Final = "diffcheck"


def _installed_version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0+unknown"


#: The installed core's version (``diffcheck.__version__``), written into every report.
__version__: Final = _installed_version()
