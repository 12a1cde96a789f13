"""Suite-wide rules: tests marked ``download`` run only when asked (see tests/outside.py)."""

from __future__ import annotations

import pytest

from tests.outside import DOWNLOAD_REASON, downloads_allowed


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip every ``download`` test, before it can start a download, unless MIAI_DOWNLOAD_NETS=1."""
    if downloads_allowed():
        return
    skip = pytest.mark.skip(reason=DOWNLOAD_REASON)
    for item in items:
        if item.get_closest_marker("download") is not None:
            item.add_marker(skip)
