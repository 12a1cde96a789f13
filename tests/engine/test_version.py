"""``miai version``: miai's version, the libraries, the CPU and what net.backend=auto runs the default net on."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest
from click.testing import CliRunner

from miai.engine.cli.main import main
from miai.engine.cli.version import vector_extensions
from miai.go import native
from miai.nets import backends, precision


def test_version_names_miai_the_libraries_and_the_cpu() -> None:
    result = CliRunner().invoke(main, ["version", "--no-net"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"miai {version('miai')}"
    assert lines[1].startswith("python 3.")
    assert f"numpy {version('numpy')}" in lines[2] and f"onnxruntime {version('onnxruntime')}" in lines[2]
    assert "openvino " in lines[2] and "numba " in lines[2]  # a version, or "not installed"
    assert lines[3] == f"search modules: {native.running()}"
    if native.pure_python():
        assert lines[3] == "search modules: Python"
    assert lines[4].startswith("cpu: ") and "vector extensions: " in lines[4]
    if "avx2" in backends.cpu_flags():
        assert " avx2" in lines[4]
    assert len(lines) == 5


def test_vector_extensions_oldest_first() -> None:
    assert vector_extensions(frozenset({"avx512f", "avx2", "sse4_2", "fpu", "amx_bf16"})) == [
        "sse4_2", "avx2", "avx512f", "amx_bf16"]
    assert vector_extensions(frozenset()) == []


def test_version_reads_autos_kept_choice_and_does_not_measure_again(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from miai.engine.cli.compose import default_net, net_threads
    from miai.engine.config import Config
    from miai.nets import convert
    from miai.nets.cachedir import private_dir

    net = default_net()
    if net is None:
        pytest.skip("no bundled net installed")
    pairs, _ = backends.candidates("auto", "auto")
    if len(pairs) < 2:
        pytest.skip("one backend here: auto has nothing to choose")
    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path))
    where = backends.choice_path(convert._file_digest(net), net_threads(Config()), convert.default_cache_dir())
    private_dir(where.parent)
    backends.write_choice(where, backends.Choice("onnxruntime", "fp32", {"onnxruntime fp32": 100.0,
                                                                         "openvino fp32": 50.0}, {}))

    def measure(*_args: object, **_kwargs: object) -> backends.Choice:
        raise AssertionError("measured again although a choice was kept")

    monkeypatch.setattr(precision, "choose", measure)
    result = CliRunner().invoke(main, ["version"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        f"default net: {net.name} on onnxruntime fp32 (net.backend=auto; openvino fp32 0.50x)")
