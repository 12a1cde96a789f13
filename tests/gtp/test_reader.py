"""The GTP input reader: when a command can start (the later of its line's arrival and the engine asking for it)."""

from __future__ import annotations

import io
import os
import threading
import time

from miai.gtp.reader import InputReader


def _wait_queued(reader: InputReader) -> None:
    deadline = time.monotonic() + 5.0
    while not reader.has_input():
        assert time.monotonic() < deadline, "the reader thread queued nothing"
        time.sleep(0.005)


def test_a_line_queued_behind_a_running_command_starts_when_the_engine_asks_for_it() -> None:
    reader = InputReader(io.StringIO("genmove b\ngenmove w\n"))
    reader.start()
    _wait_queued(reader)
    assert reader.get() == "genmove b"
    time.sleep(0.2)  # the first genmove thinks; the second line waits in the queue
    asked = time.monotonic()
    assert reader.get() == "genmove w"
    assert reader.ready >= asked


def test_a_line_arriving_while_the_engine_is_idle_starts_at_its_arrival() -> None:
    # A server's clock runs from when it sent the line: the reader's stamp, not when the engine's thread woke.
    read_end, write_end = os.pipe()
    sent: list[float] = []

    def controller() -> None:
        time.sleep(0.15)
        sent.append(time.monotonic())
        os.write(write_end, b"genmove b\n")
        os.close(write_end)

    with os.fdopen(read_end) as stream:
        reader = InputReader(stream)
        reader.start()
        thread = threading.Thread(target=controller)
        asked = time.monotonic()
        thread.start()
        assert reader.get() == "genmove b"
        returned = time.monotonic()
        thread.join()
        assert asked < sent[0] <= reader.ready <= returned
        assert reader.get() is None


def test_a_line_arriving_while_a_ponder_search_starts_starts_at_its_arrival() -> None:
    # The session is free for the next line, starts a ponder search (which takes a while on a busy machine), then
    # asks for the line: one that arrived meanwhile could have started when it arrived, as the server counts it.
    reader = InputReader(io.StringIO("genmove b\n"))
    idle_since = time.monotonic()
    reader.start()
    _wait_queued(reader)
    time.sleep(0.05)  # the ponder search starting
    assert reader.get(idle_since=idle_since) == "genmove b"
    assert idle_since <= reader.ready == reader.arrival < time.monotonic() - 0.05
