"""OpenVINO sessions used from several threads: each thread's first run goes alone.

OpenVINO's Python bindings set up numpy's C API for the process on the first read of a tensor's data, in a
function-local static whose initialiser lets go of the GIL; a second thread reading tensor data meanwhile waits for
that static while holding the GIL, and every Python thread of the process stops. gdb on a frozen ``miai analysis``
(two analysis threads beginning their first searches at once) showed one thread in ``__cxa_guard_acquire`` and the
other in pybind11's ``gil_safe_call_once_and_store<npy_api>`` waiting for the GIL. That race is inside OpenVINO and
cannot be forced from a test, so these tests pin what rules it out: while one thread's first run is inside OpenVINO,
no other thread's first run enters it; later runs still overlap (the search's thread and the net's own thread run
batches side by side).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pytest

from miai.nets.backends import BackendError, OpenVinoSession, open_openvino
from miai.nets.bundled import BUNDLED_DIR

NETS = sorted(BUNDLED_DIR.glob("*.onnx"))


class GatedModel:
    """Stands in for the compiled model: its requests note which threads are inside ``infer`` and keep each call
    there until that call's gate, (thread name, how many calls that thread made before), is opened."""

    def __init__(self, outputs: list[str]) -> None:
        self.outputs = outputs
        self.changed = threading.Condition()
        self.inside: set[str] = set()
        self.events: list[str] = []
        self._calls: dict[str, int] = {}
        self._gates: dict[tuple[str, int], threading.Event] = {}

    def gate(self, thread: str, call: int) -> threading.Event:
        with self.changed:
            return self._gates.setdefault((thread, call), threading.Event())

    def create_infer_request(self) -> GatedModel:
        return self

    def infer(self, feeds: Mapping[str, Any]) -> dict[str, np.ndarray]:
        name = threading.current_thread().name
        with self.changed:
            call = self._calls.get(name, 0)
            self._calls[name] = call + 1
            self.inside.add(name)
            self.events.append(f"{name} enters")
            self.changed.notify_all()
        assert self.gate(name, call).wait(20)
        with self.changed:
            self.inside.discard(name)
            self.events.append(f"{name} leaves")
            self.changed.notify_all()
        return {output: np.zeros(1, np.float32) for output in self.outputs}

    def within(self, seconds: float, test: Callable[[], bool]) -> bool:
        with self.changed:
            return self.changed.wait_for(test, timeout=seconds)


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> tuple[OpenVinoSession, GatedModel]:
    if not NETS:
        pytest.skip("no bundled net")
    try:
        real = open_openvino(str(NETS[0]), "fp32", 1)
    except BackendError as exc:
        pytest.skip(str(exc))
    model = GatedModel([t.name for t in real.get_outputs()])
    monkeypatch.setattr(real, "_compiled", model)
    return real, model


def runs(session: OpenVinoSession, name: str, count: int) -> threading.Thread:
    def body() -> None:
        for _ in range(count):
            session.run(None, {})

    thread = threading.Thread(target=body, name=name, daemon=True)
    thread.start()
    return thread


def test_a_first_run_waits_for_another_threads_first_run(session: tuple[OpenVinoSession, GatedModel]) -> None:
    net, model = session
    model.gate("b", 0).set()
    a = runs(net, "a", 1)
    assert model.within(10, lambda: model.inside == {"a"})
    b = runs(net, "b", 1)
    assert not model.within(0.5, lambda: "b" in model.inside)  # b's first run waits outside OpenVINO
    model.gate("a", 0).set()
    a.join(10)
    b.join(10)
    assert model.events == ["a enters", "a leaves", "b enters", "b leaves"]


def test_later_runs_of_two_threads_overlap(session: tuple[OpenVinoSession, GatedModel]) -> None:
    net, model = session
    for name in ("a", "b"):
        model.gate(name, 0).set()
    a, b = runs(net, "a", 2), runs(net, "b", 2)
    # Both first runs done, each thread's second run is inside OpenVINO at the same time as the other's.
    assert model.within(10, lambda: model.inside == {"a", "b"})
    model.gate("a", 1).set()
    model.gate("b", 1).set()
    a.join(10)
    b.join(10)
    assert not a.is_alive() and not b.is_alive()
