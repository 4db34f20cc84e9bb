"""farklecam: a camera-based Farkle dice scorer.

This small package holds what every other package shares: the version and the
error hierarchy (:mod:`farklecam.errors`). The work itself lives in the
sibling packages, in the order data flows through them::

    vision (camera -> detection -> faces -> tray -> settle) -> scoring -> service / overlay
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("farklecam")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
