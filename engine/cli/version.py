"""``miai version``: what this install is and what it runs on, as ``katago version`` names its build and backend.

It prints miai's version, Python's, the versions of the libraries the engine runs on (numpy, onnxruntime, and
OpenVINO and numba when installed), whether the search's modules run compiled by mypyc (miai.go.native), the CPU and its vector extensions, and the backend and precision that
``net.backend=auto`` picks for the default net on this machine: the measurement ``auto`` keeps in the cache directory
(``miai.nets.backends``), or a new one, kept for every later start, when there is none yet.
"""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import click

from miai.go import native

# The vector extensions that decide how fast a net runs on a CPU, in /proc/cpuinfo's names (oldest first).
VECTOR_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw", "avx512vl",
                "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_int8", "amx_bf16", "amx_fp16")
LIBRARIES = ("numpy", "onnxruntime", "openvino", "numba")


def library_versions() -> dict[str, str | None]:
    """Each library's installed version, None when it is not installed."""
    found: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def vector_extensions(flags: frozenset[str]) -> list[str]:
    """The CPU's vector extensions among ``flags``, as /proc/cpuinfo names them, oldest first."""
    return [flag for flag in VECTOR_FLAGS if flag in flags]


def net_line(net: Path | None) -> str:
    """What ``net.backend=auto`` runs ``net`` on here, with how the others compared."""
    from miai.engine.cli.compose import net_options
    from miai.engine.config import Config
    from miai.nets.evaluator import EvaluatorError
    from miai.nets.loading import auto_choice

    if net is None:
        return "default net: none installed (miai plays with random playouts unless given --model)"
    options = net_options(Config())
    threads = {"intra_op_threads": options["intra_op_threads"]}
    try:
        choice = auto_choice(net, backend=options["backend"], precision=options["precision"], options=threads)
    except EvaluatorError as exc:
        return f"default net: {net.name}: {exc}"
    if not choice.rates:  # only one candidate: nothing was measured
        others = "; ".join(f"{pair} {why}" for pair, why in choice.rejected.items())
        return f"default net: {net.name} on {choice.backend} {choice.precision} (the only choice here; {others})"
    return f"default net: {net.name} on " + choice.describe().removeprefix("net: ")


@click.command("version")
@click.option("--no-net", is_flag=True, help="Leave out the default net's backend (which may measure it once).")
def version_command(no_net: bool) -> None:
    """Print miai's version, the libraries, the CPU and what net.backend=auto runs the default net on."""
    from miai.engine.cli.compose import default_net
    from miai.nets.backends import cpu_flags, cpu_model

    click.echo(f"miai {version('miai')}")
    click.echo(f"python {platform.python_version()} ({platform.machine()}, {platform.system()})")
    click.echo(", ".join(f"{name} {found or 'not installed'}" for name, found in library_versions().items()))
    click.echo(f"search modules: {native.running()}")
    extensions = vector_extensions(cpu_flags())
    click.echo(f"cpu: {cpu_model() or 'unknown'}; vector extensions: {' '.join(extensions) or 'none found'}")
    if not no_net:
        click.echo(net_line(default_net()))
