"""Shared fixtures: a fresh directory per test, and the test doubles importable by name."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import settings

# The test doubles live beside the tests; make them importable as ``fakes`` under
# pytest's importlib import mode.
sys.path.insert(0, str(Path(__file__).parent))

# Property tests keep no example database: a test run leaves nothing in the tree.
settings.register_profile("diffcheck", database=None)
# In CI the draws are derandomized: a submission's run is repeatable, and new random
# exploration happens on developers' machines, where a failure is shrunk and kept as a test.
settings.register_profile("ci", database=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "diffcheck")
