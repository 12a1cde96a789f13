"""Benchmark: KataGo -> ONNX conversion time and onnxruntime evaluations per second.

Usage (from the repository root):
    python scripts/bench_nets.py                      # KataGo's b6c96 net in the current directory
    python scripts/bench_nets.py --net 1.9.3          # a KaTrain net (downloaded once)
    python scripts/bench_nets.py --sizes 19 9 --batches 1 8 32 --threads 1 2 --seconds 3

For each board size the net is converted with the size fixed, then a plain onnxruntime CPU
session runs random (plausible) inputs at each batch size and thread count for a fixed time.
evals/s counts positions, so a batch of 8 evaluated 10 times is 80 evals. Each cell shows wall-clock
evals/s and, in brackets, evals per CPU-second of this process: on a shared, busy machine the
latter stays close to what an idle machine would give with one thread (with two threads it
measures efficiency, not speed).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from miai.nets.convert import convert_model
from miai.nets.katrain_nets import KATRAIN_NETS, fetch_katrain_net

# KataGo's g170 b6c96 net (katagotraining.org), expected in the current directory unless --net says otherwise.
DEFAULT_NET = Path("g170-b6c96-s175395328-d26788732.bin.gz")


def resolve_net(text: str | None) -> Path:
    if text is None:
        return DEFAULT_NET
    if text in KATRAIN_NETS:
        return fetch_katrain_net(text)
    return Path(text)


def inputs(size: int, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    spatial = np.zeros((batch, 22, size, size), np.float32)
    spatial[:, 0] = 1.0
    stones = rng.integers(0, 3, size=(batch, size, size))
    spatial[:, 1] = stones == 1
    spatial[:, 2] = stones == 2
    glob = np.zeros((batch, 19), np.float32)
    glob[:, 5] = -0.375
    return {"input_spatial": spatial, "input_global": glob}


def evals_per_second(path: Path, size: int, batch: int, threads: int, seconds: float) -> tuple[float, float]:
    """(evals per wall-clock second, evals per CPU second)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    feed = inputs(size, batch, np.random.default_rng(0))
    for _ in range(2):  # warm-up: first runs allocate and pick kernels
        sess.run(None, feed)
    runs, start, cpu_start = 0, time.perf_counter(), time.process_time()
    while True:
        sess.run(None, feed)
        runs += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and runs >= 3:
            cpu = max(time.process_time() - cpu_start, 1e-9)
            return runs * batch / elapsed, runs * batch / cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--net", help="model file, or a KaTrain version (1.9.3, 1.14.0, 1.20.0)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[19, 9])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seconds", type=float, default=3.0, help="measuring time per cell")
    args = parser.parse_args(argv)
    net = resolve_net(args.net)
    print(f"net: {net.name}  onnxruntime {ort.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            dst = Path(tmp) / f"net{size}.onnx"
            start = time.perf_counter()
            result = convert_model(net, dst, board_size=size)
            took = time.perf_counter() - start
            megabytes = result.bytes_written / 1e6
            print(f"\n{size}x{size}: conversion {took:.2f} s, {megabytes:.1f} MB (model v{result.model_version})")
            print("  batch " + "".join(f"  threads={t:<2} evals/s (per CPU-s)" for t in args.threads))
            for batch in args.batches:
                cells = [evals_per_second(dst, size, batch, t, args.seconds) for t in args.threads]
                print(f"  {batch:5d} " + "".join(f"  {wall:16.1f} ({cpu:7.1f})   " for wall, cpu in cells))
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
