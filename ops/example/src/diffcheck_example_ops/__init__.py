"""diffcheck-example-ops: a third-party op for diffcheck, in one module (:mod:`.gelu`).

Nothing is imported here: diffcheck loads :mod:`diffcheck_example_ops.gelu` through the
``diffcheck.ops`` entry point the first time it looks an op up.
"""

__version__ = "0.1.0"
