"""The one error hierarchy of farklecam.

Every error a user can cause is one of these, so the CLI and the web service can
turn it into one clear message (exit code 2, or a 4xx response) instead of a
traceback. Each class also subclasses the builtin it refines, so
``except ValueError`` keeps working for callers that do not know farklecam::

    FarkleError
    ├── RulesError
    │   ├── InvalidRulesError(ValueError)      unknown preset, option or value
    │   ├── InvalidDiceError(ValueError)       a 7, eight dice, an empty roll
    │   ├── InvalidActionError(ValueError)     an action text or JSON that is not an action at all
    │   ├── IllegalActionError(ValueError)     an illegal keep, bank below the minimum, out of turn
    │   └── GameOverError                      an action after the game ended
    ├── VisionError
    │   ├── CameraError(OSError)               no camera, unplugged, unreadable video
    │   ├── ModelLoadError(RuntimeError)       missing or broken ONNX model
    │   ├── ImageError(ValueError)             not an image, truncated, empty, too large
    │   ├── TrayError(ValueError)              tray corners that outline no tray
    │   └── ProfileError(ValueError)           a profile name that is invalid or unknown, or a profile unreadable
    └── StorageError(OSError)                  the game database cannot be read or written
"""

from __future__ import annotations

__all__ = [
    "CameraError",
    "FarkleError",
    "GameOverError",
    "IllegalActionError",
    "ImageError",
    "InvalidActionError",
    "InvalidDiceError",
    "InvalidRulesError",
    "ModelLoadError",
    "ProfileError",
    "RulesError",
    "StorageError",
    "VisionError",
]


class FarkleError(Exception):
    """Root of every error farklecam raises on purpose."""


class RulesError(FarkleError):
    """Something about the rules, the dice or a game action is wrong."""


class InvalidRulesError(RulesError, ValueError):
    """An unknown preset, an unknown option, or an option value out of range."""


class InvalidDiceError(RulesError, ValueError):
    """A roll that cannot exist: a face outside 1-6, too many or no dice."""


class InvalidActionError(RulesError, ValueError):
    """A malformed action ("jump", "roll" with no faces): a syntax error, not an illegal move."""


class IllegalActionError(RulesError, ValueError):
    """A game action the rules forbid in the current state (the message says why)."""


class GameOverError(RulesError):
    """An action was attempted on a game that has already ended."""


class VisionError(FarkleError):
    """Something went wrong between the camera and a reading."""


class CameraError(VisionError, OSError):
    """A camera that is not there, was unplugged, or a video that cannot be read."""


class ModelLoadError(VisionError, RuntimeError):
    """An ONNX model file that is missing, corrupt or of the wrong shape."""


class ImageError(VisionError, ValueError):
    """A file that is not an image, is truncated, empty, or too large to read safely."""


class TrayError(VisionError, ValueError):
    """Tray corners that outline no tray: not four points, not finite, or enclosing no area."""


class ProfileError(VisionError, ValueError):
    """A table's profile that cannot be used: a name that is not valid or not known, or a folder that is unreadable."""


class StorageError(FarkleError, OSError):
    """The game database could not be opened, read or written."""
