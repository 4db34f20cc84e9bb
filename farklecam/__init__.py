"""farklecam: a camera-based Farkle dice scorer.

One import name holds the whole product, in the order data flows through it::

    farklecam.vision (camera -> detection -> faces -> tray -> settle)
        -> farklecam.scoring -> farklecam.service (web page, CLI, live window)

:mod:`farklecam.errors` is the error hierarchy every part raises from, and
:mod:`farklecam.models` holds the shipped ONNX models as package data.
"""

import pkgutil
from importlib.metadata import PackageNotFoundError, version

# A source checkout keeps vision/, scoring/, service/, models/ and datasets/ beside this folder
# and maps them into the package (setup.py). Where this folder is found on sys.path ahead of
# an editable install's link tree (Python started in the checkout), join the two.
__path__ = pkgutil.extend_path(__path__, __name__)

try:
    __version__ = version("farklecam")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
