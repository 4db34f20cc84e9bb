"""The installed package: one import name, the run time only, and imports that flow one way."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]

#: The order data flows in: a package may import those before it, never one after it.
LAYERS = ("farklecam.errors", "farklecam.vision", "farklecam.scoring", "farklecam.service")
#: What only the tooling may import (training and scene generation).
TOOLING_ONLY = ("torch", "torchvision", "ultralytics", "onnx", "onnxslim", "mitsuba", "pybullet", "bpy", "matplotlib")


def _setup() -> ModuleType:
    spec = importlib.util.spec_from_file_location("farklecam_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wheel_modules() -> dict[str, Path]:
    """Every module a wheel installs, by its dotted name, and its source file."""
    setup = _setup()
    out: dict[str, Path] = {}
    for package in setup._packages(with_tooling=False):
        root, _, rest = package.partition(".")
        top = f"{root}.{rest.split('.')[0]}" if rest else root
        folder = ROOT / setup.FOLDERS[top] / Path(*package.split(".")[len(top.split(".")) :])
        for path in folder.glob("*.py"):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            out[name] = path
    return out


def _imports(path: Path, module: str) -> set[str]:
    """The absolute names ``path`` imports, relative imports resolved against ``module``."""
    names: set[str] = set()
    package = module if path.stem == "__init__" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                names.add(f"{base}.{node.module}" if node.module else base)
            elif node.module:
                names.add(node.module)
    return names


def test_a_wheel_holds_only_the_farklecam_run_time() -> None:
    setup = _setup()
    packages = setup._packages(with_tooling=False)
    assert packages and all(p == "farklecam" or p.startswith("farklecam.") for p in packages)
    for tooling in setup.TOOLING:
        assert not any(p == tooling or p.startswith(f"{tooling}.") for p in packages), tooling
    assert set(setup._packages(with_tooling=True)) > set(packages)  # a checkout imports the tooling too


def test_nothing_installed_imports_the_training_stack_or_the_tooling() -> None:
    setup = _setup()
    for module, path in _wheel_modules().items():
        for name in _imports(path, module):
            assert name.split(".")[0] not in TOOLING_ONLY, f"{module} imports {name}"
            assert not any(name == t or name.startswith(f"{t}.") for t in setup.TOOLING), f"{module} imports {name}"
            assert name.split(".")[0] not in ("vision", "scoring", "service", "models", "datasets"), name


def test_imports_flow_one_way() -> None:
    def layer(name: str) -> int | None:
        hits = [i for i, prefix in enumerate(LAYERS) if name == prefix or name.startswith(f"{prefix}.")]
        return hits[0] if hits else None

    for module, path in _wheel_modules().items():
        own = layer(module)
        if own is None:
            continue
        for name in _imports(path, module):
            other = layer(name)
            assert other is None or other <= own, f"{module} imports {name}, which builds on it"


def test_the_models_ship_as_package_data() -> None:
    from farklecam.vision.reader import CLASSIFIER_FILE, DETECTOR_FILE, default_model_dir

    folder = default_model_dir()
    assert (folder / DETECTOR_FILE).is_file() and (folder / CLASSIFIER_FILE).is_file()
    assert "farklecam" in folder.parts or folder == ROOT / "models"
