"""The one logging set-up: our packages at the configured level, libraries at WARNING."""
import logging
import tomllib

from market.logging import OWN_PACKAGES, configure_logging
from market.settings import PROJECT_ROOT


def test_own_packages_are_the_packages_pyproject_installs() -> None:
    pyproject = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    assert set(OWN_PACKAGES) == {name.rstrip("*") for name in include}


def test_libraries_are_quiet_unless_verbose() -> None:
    root, before = logging.getLogger(), logging.getLogger().level
    try:
        configure_logging("INFO")
        assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)
        assert logging.getLogger("httpx").isEnabledFor(logging.WARNING)
        assert logging.getLogger("pipeline.runner").isEnabledFor(logging.INFO)
        configure_logging("INFO", verbose=True)
        assert logging.getLogger("httpx").isEnabledFor(logging.INFO)
        configure_logging("ERROR")
        assert not logging.getLogger("httpx").isEnabledFor(logging.WARNING)
    finally:
        root.setLevel(before)
        for package in OWN_PACKAGES:
            logging.getLogger(package).setLevel(logging.NOTSET)
