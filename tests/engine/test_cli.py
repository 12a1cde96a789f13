"""The `miai` command line, run as a user runs it: a subprocess speaking GTP."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from miai.engine.cli.compose import NO_DEFAULT_NET
from tests.outside import needs_shared, shared

B6 = shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")


def _miai(args: list[str], stdin: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "miai.engine", *args], input=stdin, capture_output=True,
                          text=True, timeout=timeout)


def _responses(stdout: str) -> list[str]:
    return [block.strip() for block in stdout.split("\n\n") if block.strip()]


@pytest.mark.slow
def test_gtp_without_model_plays_on_the_default_net_or_says_there_is_none() -> None:
    from miai.engine.cli.compose import default_net

    done = _miai(["gtp", "--set", "search.max_visits=20"], "boardsize 9\nclear_board\ngenmove b\nquit\n")
    assert done.returncode == 0, done.stderr
    notice = NO_DEFAULT_NET in done.stderr.splitlines()
    assert notice == (default_net() is None)
    answers = _responses(done.stdout)
    assert answers[:2] == ["=", "="]
    assert answers[2].startswith("= ") and answers[2][2:] not in ("", "resign")


def test_the_notice_is_printed_when_no_default_net_is_installed(monkeypatch, tmp_path: Path) -> None:
    from click.testing import CliRunner

    import miai.engine.cli.compose as compose
    from miai.engine.cli.main import main

    monkeypatch.setattr(compose, "DEFAULT_NET_DIR", tmp_path)  # an install without nets/default
    result = CliRunner().invoke(main, ["gtp", "--set", "search.max_visits=5"], input="genmove b\nquit\n")
    assert result.exit_code == 0
    assert NO_DEFAULT_NET in result.output  # CliRunner mixes stderr into output


@pytest.mark.slow
def test_gtp_stdout_is_pure_gtp_with_ids_echoed() -> None:
    done = _miai(["gtp", "--model", "playouts", "--set", "search.max_visits=10"],
                 "1 name\n2 protocol_version\n3 boardsize 7\n4 play b D4\n5 genmove w\nbogus\n6 quit\n")
    answers = _responses(done.stdout)
    assert answers[0] == "=1 miai" and answers[1] == "=2 2"
    assert answers[5].startswith("? ")  # the unknown command
    assert answers[-1] == "=6"
    assert all(a[0] in "=?" for a in answers)


@pytest.mark.slow
def test_bad_model_file_is_a_clear_error() -> None:
    done = _miai(["gtp", "--model", "/nonexistent/net.bin.gz"], "quit\n")
    assert done.returncode != 0
    assert "/nonexistent/net.bin.gz" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_bad_config_override_is_a_clear_error() -> None:
    done = _miai(["gtp", "--set", "search.max_visitz=3"], "quit\n")
    assert done.returncode != 0
    assert "max_visitz" in done.stderr and "Traceback" not in done.stderr


@needs_shared(f"nets/{B6.name}")
@pytest.mark.slow
def test_gtp_with_a_katago_net_plays_and_answers_kata_raw_nn(tmp_path: Path) -> None:
    env_cache = {"XDG_CACHE_HOME": str(tmp_path)}
    import os
    done = subprocess.run(
        [sys.executable, "-m", "miai.engine", "gtp", "--model", str(B6), "--set", "search.max_visits=16"],
        input="boardsize 9\nclear_board\nplay b E5\ngenmove w\nkata-raw-nn 0\nquit\n", capture_output=True,
        text=True, timeout=600, env={**os.environ, **env_cache})
    assert done.returncode == 0, done.stderr
    answers = _responses(done.stdout)
    move = answers[3][2:].strip()
    assert move not in ("pass", "resign", "E5")
    assert answers[4].startswith("= symmetry 0\nwhiteWin ")


def test_playout_model_defaults_to_ucb1_tuned_unless_the_user_chose() -> None:
    from miai.engine.cli.compose import playout_defaults
    from miai.engine.config import Config, apply_overrides
    from miai.nets.evaluator import UniformEvaluator
    from miai.nets.playouts import PlayoutEvaluator

    playouts = PlayoutEvaluator.from_spec("playouts")
    chosen = playout_defaults(Config(), playouts, frozenset())
    assert chosen.search.selection == "ucb1-tuned" and chosen.search.use_lcb is False
    assert chosen.search.rave_equivalence == 1000 and playouts.amaf  # RAVE on, and the evaluator feeds it
    assert chosen.search.batch_size == 1  # sequential: one process gains nothing from a batch under virtual loss
    assert chosen.search.forbid_eye_filling and not Config().search.forbid_eye_filling  # net mode: as KataGo
    assert playout_defaults(Config(), PlayoutEvaluator.from_spec("playouts", workers=2),
                            frozenset()).search.batch_size == Config().search.batch_size  # the workers share a batch
    plain = playout_defaults(apply_overrides(Config(), ["search.rave_equivalence=0"]), playouts,
                             frozenset({"search.rave_equivalence"}))
    assert plain.search.rave_equivalence == 0 and not playouts.amaf  # the user's choice stands
    mine = apply_overrides(Config(), ["search.selection=ucb1"])
    assert playout_defaults(mine, playouts, frozenset({"search.selection"})).search.selection == "ucb1"
    assert playout_defaults(Config(), UniformEvaluator(), frozenset()).search.selection == "puct"


def test_playout_defaults_read_the_keys_not_the_text(tmp_path: Path) -> None:
    """A comment or a value mentioning "selection" is no choice of it; a key in the file is."""
    from miai.engine.cli.compose import playout_defaults
    from miai.engine.katago_config import load_configs
    from miai.nets.playouts import PlayoutEvaluator

    playouts = PlayoutEvaluator.from_spec("playouts")
    commented = tmp_path / "commented.toml"
    commented.write_text('# selection = "puct" was tried\n[search]\nmax_visits = 50\n', encoding="utf-8")
    loaded = load_configs([commented], sets=["gtp.name=selection"])
    config = playout_defaults(loaded.config, playouts, loaded.chosen)
    assert config.search.selection == "ucb1-tuned" and config.search.max_visits == 50
    chosen = tmp_path / "chosen.toml"
    chosen.write_text('[search]\nselection = "puct"\nuse_lcb = true\n', encoding="utf-8")
    loaded = load_configs([chosen])
    config = playout_defaults(loaded.config, playouts, loaded.chosen)
    assert config.search.selection == "puct" and config.search.use_lcb is True
    katago = tmp_path / "katago.cfg"  # KataGo's names count as the user's choice of the options they set
    katago.write_text("useLcbForSelection = true\n", encoding="utf-8")
    loaded = load_configs([katago])
    assert playout_defaults(loaded.config, playouts, loaded.chosen).search.use_lcb is True


@pytest.mark.parametrize("sets, expected", [((), None), (("net.threads=1",), 1), (("net.threads=3",), 3)])
def test_net_threads_reach_onnxruntime(sets: tuple[str, ...], expected: int | None) -> None:
    import os

    from miai.engine.cli.compose import build_evaluator, default_net
    from miai.engine.config import apply_overrides, load_config

    if default_net() is None:
        pytest.skip("no default net committed")
    # onnxruntime's own session options are read below (net.backend=auto may choose OpenVINO on some CPUs).
    config = apply_overrides(load_config(None), ("net.backend=onnxruntime", *sets))
    evaluator = build_evaluator("default", config, progress=False)
    from miai.nets.evaluator import onnx_net

    inner = onnx_net(evaluator, 19)  # behind the evaluation cache and the choice of net by size
    # 0 (the default) means one thread per core, at most four.
    assert inner.config.intra_op_threads == (expected or max(1, min(os.cpu_count() or 1, 4)))
    options = inner.session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


@pytest.mark.slow
def test_gtp_version_and_dash_dash_version_agree_with_the_installed_package() -> None:
    from importlib.metadata import version

    installed = version("miai")
    shown = subprocess.run([sys.executable, "-m", "miai.engine", "--version"], capture_output=True, text=True, timeout=60)
    assert shown.stdout.split()[-1] == installed
    answers = _responses(_miai(["gtp", "--model", "playouts"], "version\nquit\n").stdout)
    assert answers[0] == f"= {installed}"


@pytest.mark.slow
def test_configs_are_found_by_name_from_any_directory(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "miai.engine", "gtp", "--model", "playouts", "--config", "analysis"],
                          input="kata-get-param maxVisits\nquit\n", capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    from miai.engine.config import load_config

    assert _responses(done.stdout)[0] == f"= {load_config('analysis').search.max_visits}"
    (tmp_path / "mine.toml").write_text("[search]\nmax_visits = 33\n")
    done = subprocess.run([sys.executable, "-m", "miai.engine", "gtp", "--model", "playouts", "--config", "mine.toml"],
                          input="kata-get-param maxVisits\nquit\n", capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert _responses(done.stdout)[0] == "= 33"


@pytest.mark.parametrize("args, expected", [
    (["--config", "nope"], "Error: config nope: no such file, and no bundled config has that name (analysis, "
                           "default, fast, selfplay, server, tree)"),
    (["--set", "search.max_visits=abc"], "Error: search.max_visits: cannot read 'abc' as an integer"),
    (["--set", "search.max_visits=-5"], "Error: search.max_visits must be >= 0, got -5"),
])
@pytest.mark.slow
def test_bad_settings_are_one_line_in_the_users_words(tmp_path: Path, args: list[str], expected: str) -> None:
    done = subprocess.run([sys.executable, "-m", "miai.engine", "gtp", *args], input="quit\n", capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert done.returncode != 0 and done.stderr.splitlines() == [expected]


@pytest.mark.slow
def test_gtp_start_settings_come_from_the_config_and_flags_override_them(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('[gtp]\nname = "tester"\nboard_size = 9\nkomi = 5.5\n', encoding="utf-8")
    base = ["gtp", "--model", "playouts", "--config", str(tmp_path / "mine.toml")]
    asks = "name\nprintsgf\nquit\n"
    assert _responses(_miai(base, asks, timeout=60).stdout)[:2] == [
        "= tester", "= (;FF[4]GM[1]CA[UTF-8]AP[miai]SZ[9]KM[5.5]RU[tromp-taylor])"]
    flagged = _miai([*base, "--size", "13", "--name", "other", "--rules", "chinese", "--set", "gtp.komi=0.5"], asks,
                    timeout=60)
    assert _responses(flagged.stdout)[:2] == ["= other", "= (;FF[4]GM[1]CA[UTF-8]AP[miai]SZ[13]KM[0.5]RU[chinese])"]


def test_every_bundled_config_is_installed_as_package_data() -> None:
    import tomllib

    root = Path(__file__).resolve().parents[2]
    with open(root / "pyproject.toml", "rb") as handle:
        package_data = tomllib.load(handle)["tool"]["setuptools"]["package-data"]
    assert "*.toml" in package_data["miai.configs"]
    from miai.engine.config import BUNDLED_CONFIGS, bundled_config_names

    assert BUNDLED_CONFIGS == root / "configs"
    assert {"analysis", "default", "fast", "selfplay", "server", "tree"} <= set(bundled_config_names())


@pytest.mark.slow
def test_match_takes_config_and_set_and_a_bad_key_is_one_line_before_any_engine_starts(tmp_path: Path) -> None:
    never = f"{sys.executable} -c 'raise SystemExit(3)'"
    done = subprocess.run([sys.executable, "-m", "miai.engine", "match", "--black", never, "--white", never,
                           "--config", "fast", "--set", "net.threadz=2"], capture_output=True, text=True, timeout=30,
                          cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr.splitlines() == ["Error: unknown config key 'net.threadz' (did you mean 'net.threads'?)"]


@pytest.mark.slow
def test_match_start_timeout_is_an_option(tmp_path: Path) -> None:
    silent = f"{sys.executable} -c 'import time; time.sleep(60)'"
    done = subprocess.run([sys.executable, "-m", "miai.engine", "match", "--black", silent, "--white", silent,
                           "--start-timeout", "0.5"], capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr.splitlines() == [f"Error: engine A ({silent}) does not start: no answer to 'protocol_version' "
                                        "within 0.5 s (a slow start? see --start-timeout)"]


def test_train_gen_has_no_machine_defaults_and_says_what_it_needs(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from miai.engine.cli.main import main

    runner = CliRunner()
    missing = runner.invoke(main, ["train", "gen"])
    assert missing.exit_code != 0 and "Missing option '--teacher'" in missing.output
    no_games = runner.invoke(main, ["train", "gen", "--teacher", "net.bin.gz", "--source", "kifu"])
    assert no_games.exit_code != 0 and "--source kifu needs --kifu FILE" in no_games.output
    absent = runner.invoke(main, ["train", "gen", "--teacher", str(tmp_path / "net.bin.gz")])
    assert absent.exit_code != 0
    expected = f"Error: cannot load the teacher: {tmp_path / 'net.bin.gz'}: no such file"
    assert absent.output.strip().splitlines()[-1] == expected


def _gtp(args: list[str], commands: str) -> tuple[list[str], str]:
    """``miai gtp`` run with ``args``: its GTP answers (but quit's), and its stderr."""
    done = _miai(["gtp", *args], commands + "quit\n", timeout=120)
    assert done.returncode == 0, done.stderr
    return _responses(done.stdout)[:-1], done.stderr


KATAGO_GTP_CFG = """# as KataGo's gtp_example.cfg writes them
logAllGTPCommunication = false
rules = japanese
allowResignation = true
resignThreshold = -0.90
maxVisits = 400
ponderingEnabled = false
numSearchThreads = 2
defaultBoardSize = 13
"""


@pytest.mark.slow
@pytest.mark.parametrize("flags", [("-model", "-config", "-override-config"),
                                   ("--model", "--config", "--override-config")])
def test_gtp_takes_katagos_command_line(tmp_path: Path, flags: tuple[str, str, str]) -> None:
    model, config, override = flags
    cfg = tmp_path / "gtp.cfg"
    cfg.write_text(KATAGO_GTP_CFG, encoding="utf-8")
    answers, stderr = _gtp([model, "playouts", config, str(cfg), override, "maxVisits=77,lagBuffer=2"],
                           "kata-get-param maxVisits\nkata-get-param search.batch_size\nkata-get-rules\n"
                           "kata-get-param player.resign_threshold\nkata-get-param lagBuffer\n")
    assert answers[0] == "= 77"  # -override-config over the file
    assert answers[1] == "= 2"  # numSearchThreads: leaves per batch
    assert '"scoring": "TERRITORY"' in answers[2]  # rules = japanese
    assert float(answers[3][2:]) == pytest.approx(0.05)  # KataGo's utility -0.90 is a winrate of 5%
    assert answers[4] == "= 2.0"
    assert stderr == ""  # every key of the file is used


@pytest.mark.slow
def test_several_configs_merge_in_order_and_unused_keys_are_named(tmp_path: Path) -> None:
    first, second, toml = tmp_path / "a.cfg", tmp_path / "b.cfg", tmp_path / "c.toml"
    first.write_text("maxVisits = 400\nlagBuffer = 3\nplayoutDoublingAdvantage = 1\nmaxVisit = 5\n")
    second.write_text("maxVisits = 50\nsearchFactorAfterOnePass = 0.5\nfooBar = 1\n")
    toml.write_text("[player]\nlag_buffer = 4.0\n")
    answers, stderr = _gtp(["-model", "playouts", "-config", str(first), "-config", str(second)],
                           "kata-get-param maxVisits\nkata-get-param lagBuffer\n")
    assert answers == ["= 50", "= 3.0"]
    lines = stderr.splitlines()
    assert "miai: config keys miai does not use (no effect): playoutDoublingAdvantage, searchFactorAfterOnePass" \
        in lines
    assert "miai: unknown config key maxVisit, probably a typo of maxVisits" in lines
    assert "miai: unknown config key fooBar" in lines and len(lines) == 3
    answers, _ = _gtp(["--model", "playouts", "--config", str(first), "--config", str(toml),
                       "--set", "search.max_visits=9"], "kata-get-param lagBuffer\nkata-get-param maxVisits\n")
    assert answers == ["= 4.0", "= 9"]  # a TOML file after a KataGo one; --set last


def test_bad_katago_config_values_name_the_file_and_key(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from miai.engine.cli.main import main

    cfg = tmp_path / "gtp.cfg"
    for text, message in [("maxVisits = lots\n", f"config {cfg}: maxVisits: expected a number"),
                          ("rules = nonsense\n", f"config {cfg}: rules:"),
                          ("maxVisits 400\n", f"config {cfg} line 1: expected key = value")]:
        cfg.write_text(text)
        result = CliRunner().invoke(main, ["gtp", "-model", "playouts", "-config", str(cfg)],
                                                    input="quit\n")
        assert result.exit_code == 1 and message in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    result = CliRunner().invoke(main, ["gtp", "-override-config", "maxVisits"], input="quit\n")
    assert result.exit_code == 1 and "-override-config: expected key=value, got 'maxVisits'" in result.stderr


@pytest.mark.parametrize("args, expected", [
    (["match", "--time", "5min"], "Error: Invalid value for '--time': bad time spec '5min': '5min' is not a whole "
                                  "number (expected M, M+B, M+B/S, M+PxB or M+If, whole seconds)"),
    (["match", "--time", "60,0+5x0"], "Error: Invalid value for '--time': bad time spec '0+5x0': byo-yomi needs at "
                                      "least one period of at least 1 s, got 5x0"),
    (["match", "--sprt", "1"], "Error: Invalid value for '--sprt': expected ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA, "
                               "got '1'"),
    (["match", "--sprt", "5,0"], "Error: Invalid value for '--sprt': SPRT needs elo1 > elo0, got 5.0 and 0.0"),
    (["match", "--rules", "foo"], "Error: Invalid value for '--rules': unknown rules: 'foo'"),
    (["gtp", "--rules", "foo"], "Error: Invalid value for '--rules': unknown rules: 'foo'"),
    (["gtp", "--komi", "abc"], "Error: Invalid value for '--komi': 'abc' is not a valid float."),
])
def test_command_line_values_get_clicks_one_line_error(args: list[str], expected: str) -> None:
    from click.testing import CliRunner

    from miai.engine.cli.main import main

    extra = ["--black", "x", "--white", "y"] if args[0] == "match" else []
    result = CliRunner().invoke(main, [*args, *extra], input="quit\n")
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and errors[0].startswith(expected), result.stderr
    assert "invalid literal" not in result.stderr and "Traceback" not in result.stderr


# A process that ends the session as `miai gtp` does, with work behind it that a normal interpreter exit waits for: a
# thread that is not a daemon (as the net's thread finishing a batch the search gave up) and an atexit handler.
_END_AFTER_TEARDOWN_WORK = """
import atexit, logging, sys, threading, time
from miai.engine.cli.logs import set_stderr_level
from miai.engine.cli.main import _end_session
set_stderr_level("warning")
threading.Thread(target=time.sleep, args=(60,)).start()
atexit.register(time.sleep, 60)
logging.getLogger("miai").warning("logged before the end")
sys.stdout.write("=\\n\\n")
_end_session(0)
"""


@pytest.mark.slow
def test_gtp_ends_its_process_without_waiting_for_teardown_after_quit() -> None:
    # After quit is answered the process must end at once, its output flushed: a controller waits for the exit.
    done = subprocess.run([sys.executable, "-c", _END_AFTER_TEARDOWN_WORK],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    assert done.stdout == "=\n\n"
    assert "logged before the end" in done.stderr

