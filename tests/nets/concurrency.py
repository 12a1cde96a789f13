"""Running a test body in several threads at once."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_in_threads(work: Callable[[int], None], count: int) -> list[BaseException]:
    """Run ``work(0)`` .. ``work(count - 1)`` in threads at once; return what they raised (an assertion
    failing in a thread would otherwise only print a warning)."""
    errors: list[BaseException] = []

    def guarded(k: int) -> None:
        try:
            work(k)
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors
