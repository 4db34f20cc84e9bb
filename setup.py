"""Which packages a build holds; everything else about the build is in pyproject.toml.

The design card's top-level folders (``vision/``, ``scoring/``, ``service/``,
``models/``, ``datasets/``) are mapped into the one import name ``farklecam``.
A wheel carries the run time only: the reader, the scoring engine, the service
and the shipped models. An editable (developer) install also maps the tooling
that builds and judges those models (``datasets/``: scene generators and the real
photos; ``models/``' subpackages: training, threshold fitting, evaluation), so a
checkout imports every module under the same name.
"""

import sys

from setuptools import find_packages, setup

FOLDERS = {
    "farklecam": "farklecam",
    **{f"farklecam.{name}": name for name in ("vision", "scoring", "service", "models", "datasets")},
}
TOOLING = (
    "farklecam.datasets",
    "farklecam.models.bank",
    "farklecam.models.evaluate",
    "farklecam.models.thresholds",
    "farklecam.models.training",
)


def _packages(with_tooling: bool) -> list[str]:
    found = []
    for package, folder in FOLDERS.items():
        found.append(package)
        found += [f"{package}.{sub}" for sub in find_packages(folder)]
    return sorted(p for p in found if with_tooling or not any(p == t or p.startswith(f"{t}.") for t in TOOLING))


if __name__ == "__main__":  # as setuptools runs it; the packaging test imports the lists above
    # Package data is only what pyproject.toml lists, so a tooling folder never rides along as data.
    setup(
        packages=_packages(with_tooling="editable_wheel" in sys.argv), package_dir=FOLDERS, include_package_data=False
    )
