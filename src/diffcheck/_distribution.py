"""The core's name on the package index, which differs from its import package.

The index name ``diffcheck`` belongs to an unrelated project, so the core is distributed as
``diffcheck-numerics`` and imported as ``diffcheck``. Plugins depend on this name.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DISTRIBUTION", "IMPORT_PACKAGE"]

#: What ``pip install`` and a plugin's ``dependencies`` name.
DISTRIBUTION: Final = "diffcheck-numerics"
#: What ``import`` names; entry points into this package are the core's own.
IMPORT_PACKAGE: Final = "diffcheck"
