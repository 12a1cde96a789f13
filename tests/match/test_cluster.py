"""`miai match --cluster` on a real Dask cluster started inside the test: a scheduler and three worker "nodes" on
this machine, each node its own process group (nanny, worker and the engines it starts), so that killing a node
kills everything on it, as a lost machine would. Real games between scripted GTP engines.

The cluster is secured as docs/match.md says: TLS with certificates made in the test by that page's openssl
commands, every peer holding one signed by the cluster's authority; a client without one is refused."""

from __future__ import annotations

import io
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("distributed", reason="needs Dask distributed, the [cluster] extra (pip install -e '.[cluster]')")

from miai.engine.cli.main import main  # noqa: E402
from miai.go.sgf import load_sgf  # noqa: E402
from miai.match.cluster import ClusterSecurity, ClusterStats, run_cluster_match  # noqa: E402
from miai.match.results import RESULTS_NAME  # noqa: E402
from miai.match.runner import MatchConfig, MatchError, run_match  # noqa: E402
from miai.match.summary import GameRecord, MatchSummary, ProgressPrinter  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SCRIPTED = Path(__file__).parents[1] / "engine" / "scripted_engines" / "scripted.py"


def scripted(*args: str) -> str:
    return shlex.join([sys.executable, str(SCRIPTED), *args])


def certificates(folder: Path, name: str) -> ClusterSecurity:
    """A certificate authority and one certificate signed by it, made by docs/match.md's openssl commands."""
    folder.mkdir()

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *curve, "-days", "30", "-subj", f"/CN={name}-ca", "-keyout", "ca.key", "-out", "ca.pem")
    openssl("req", *curve, "-subj", f"/CN={name}", "-keyout", "cluster.key", "-out", "cluster.csr")
    openssl("x509", "-req", "-in", "cluster.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "30",
            "-out", "cluster.pem")
    return ClusterSecurity(str(folder / "ca.pem"), str(folder / "cluster.pem"), str(folder / "cluster.key"))


class LocalCluster:
    """A Dask scheduler and `nodes` single-thread workers on 127.0.0.1 with TLS (docs/match.md's commands), each node
    in its own process group."""

    def __init__(self, folder: Path, nodes: int, security: ClusterSecurity) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.address = f"tls://127.0.0.1:{port}"
        self.folder = folder
        self.security = security
        tls = ["--tls-ca-file", security.ca_file, "--tls-cert", security.cert_file, "--tls-key",
               str(security.key_file)]
        self.scheduler = self._start("scheduler", ["distributed.cli.dask_scheduler", "--protocol", "tls", "--host",
                                                   "127.0.0.1", "--port", str(port), *tls, "--no-dashboard"])
        self.nodes = {f"node{k}": self._start(f"node{k}", ["distributed.cli.dask_worker", self.address, *tls,
                                                             "--host", "127.0.0.1", "--name", f"node{k}",
                                                             "--nthreads", "1", "--nworkers", "1", "--no-dashboard"])
                      for k in range(1, nodes + 1)}
        from distributed import Client

        with Client(self.address, timeout=60, security=self.dask_security()) as client:
            client.wait_for_workers(nodes, timeout=60)

    def dask_security(self) -> object:
        from distributed import Security

        return Security(tls_ca_file=self.security.ca_file, tls_client_cert=self.security.cert_file,
                        tls_client_key=self.security.key_file, require_encryption=True)

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        log = (self.folder / f"{name}.log").open("wb")
        return subprocess.Popen([sys.executable, "-m", *args], stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=self.folder)

    def kill(self, node: str) -> None:
        """Kill the node's whole process group at once (its nanny cannot restart the worker)."""
        os.killpg(self.nodes[node].pid, signal.SIGKILL)
        self.nodes[node].wait()

    def close(self) -> None:
        for process in [*self.nodes.values(), self.scheduler]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in [*self.nodes.values(), self.scheduler]:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    (tmp_path / "cluster").mkdir()
    local = LocalCluster(tmp_path / "cluster", nodes=3, security=certificates(tmp_path / "tls", "miai-cluster"))
    try:
        yield local
    finally:
        local.close()


def quiet() -> ProgressPrinter:
    return ProgressPrinter(io.StringIO())


def test_a_node_killed_mid_game_loses_no_game_and_counts_none_twice(cluster: LocalCluster, tmp_path: Path) -> None:
    """12 games of about a second on three nodes; node1 is killed while it plays a game. That game is played
    again on another node: all 12 games end, each once, none forfeited, node1 finishing none after its death."""
    sgf = tmp_path / "games"
    killed: dict[str, int] = {}
    stats = ClusterStats()
    lock = threading.Lock()

    def on_running(running: dict[str, int]) -> None:
        with lock:
            if not killed and running.get("node1") and len(stats.game) >= 2:
                killed["finished_before"] = stats.by_node["node1"]
                cluster.kill("node1")

    config = MatchConfig(games=12, size=5, komi=0.5, sgf_dir=str(sgf))
    summary = run_cluster_match(scripted("--random", "1", "--slow", "0.05"), scripted("--random", "2"), config,
                                cluster.address, progress=quiet(), on_running=on_running, stats=stats,
                                security=cluster.security)
    assert killed, "node1 was never seen running a game"
    assert [g.number for g in summary.games] == list(range(1, 13))
    assert not any(g.culprit for g in summary.games)  # the lost worker made nobody lose
    assert summary.elo.games == 12
    assert stats.by_node["node1"] == killed["finished_before"]
    assert stats.by_node["node2"] + stats.by_node["node3"] == 12 - killed["finished_before"]
    lines = [json.loads(line) for line in (sgf / RESULTS_NAME).read_text().splitlines()[1:]]
    assert sorted(line["game"]["number"] for line in lines) == list(range(1, 13))
    assert len(list(sgf.glob("game-*.sgf"))) == 12


def test_the_cluster_plays_the_schedule_of_concurrent_games_on_one_machine(cluster: LocalCluster,
                                                                           tmp_path: Path) -> None:
    """Seeded engines that start every game afresh play the same games whatever process or node plays them:
    the cluster's records equal --concurrency 2's (numbers, colours, openings, moves, results)."""
    openings = tmp_path / "openings.txt"
    openings.write_text("C3 C4\nB2 D4\nD2 B4\nB4 D2\n")
    black, white = scripted("--random", "1", "--fresh-games"), scripted("--random", "2", "--fresh-games")
    local = run_match(black, white, MatchConfig(games=8, size=5, komi=0.5, openings=str(openings),
                                                sgf_dir=str(tmp_path / "local"), concurrency=2), progress=quiet())
    remote = run_cluster_match(black, white, MatchConfig(games=8, size=5, komi=0.5, openings=str(openings),
                                                         sgf_dir=str(tmp_path / "remote")),
                               cluster.address, progress=quiet(), security=cluster.security)

    def games(summary: MatchSummary) -> list[tuple[int, str, str, list[tuple[object, int]]]]:
        return [(g.number, g.black, g.result, load_sgf(Path(g.sgf_path or "").read_text()).moves)
                for g in summary.games]

    assert len(games(remote)) == 8 and games(remote) == games(local)
    assert len({str(g[3]) for g in games(local)}) > 1  # the openings and seeds make different games


def test_engine_crashes_still_lose_and_a_rerun_resumes(cluster: LocalCluster, tmp_path: Path) -> None:
    """A crashing engine forfeits on a worker as on one machine; a second run of the same command plays nothing
    that is already in the results file."""
    sgf = tmp_path / "games"
    config = MatchConfig(games=4, size=5, komi=0.5, sgf_dir=str(sgf))
    crasher, steady = scripted("--crash-at", "3"), scripted("--random", "2")
    summary = run_cluster_match(crasher, steady, config, cluster.address, progress=quiet(), security=cluster.security)
    assert [(g.culprit, g.method, g.winner_label) for g in summary.games] == [("A", "crash", "B")] * 4
    played: list[int] = []

    def progress(record: GameRecord, summary: MatchSummary) -> None:
        played.append(record.number)

    longer = run_cluster_match(crasher, steady, MatchConfig(games=6, size=5, komi=0.5, sgf_dir=str(sgf)),
                               cluster.address, progress=progress, security=cluster.security)
    assert sorted(played) == [5, 6] and [g.number for g in longer.games] == list(range(1, 7))


def test_an_engine_that_does_not_start_on_a_worker_stops_the_match(cluster: LocalCluster) -> None:
    with pytest.raises(MatchError, match=r"engine A \(/nonexistent/engine\) does not start on node"):
        run_cluster_match("/nonexistent/engine", scripted(), MatchConfig(games=2, size=5), cluster.address,
                          progress=quiet(), security=cluster.security)


def test_the_command_line_plays_on_the_cluster(cluster: LocalCluster, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [
        "match", "--black", scripted("--random", "1"), "--white", scripted("--random", "2"), "--games", "4",
        "--size", "5", "--komi", "0.5", "--cluster", cluster.address, "--sprt", "0,30", "--cluster-security",
        ",".join([cluster.security.ca_file, cluster.security.cert_file, str(cluster.security.key_file)]),
        "--json", str(tmp_path / "summary.json")])
    assert result.exit_code == 0, result.output
    assert "cluster: 4 games" in result.output and "(pentanomial): LLR" in result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["games_played"] == 4 and sum(summary["pentanomial"]) == 2
    assert summary["sprt"]["model"] == "pentanomial"


def test_no_scheduler_is_a_one_line_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(MatchError, match="no Dask scheduler answers at tcp://127.0.0.1"):
        run_cluster_match(scripted(), scripted(), MatchConfig(games=2, size=5), f"tcp://127.0.0.1:{port}",
                          progress=quiet(), connect_timeout=2.0, insecure=True)
    assert time.monotonic() - started < 30


def test_a_client_without_the_clusters_certificate_is_refused(cluster: LocalCluster, tmp_path: Path) -> None:
    """The attack: a stranger who reaches the scheduler's port, with a certificate of their own or none, gets no
    connection (so runs nothing on the workers); the driver with the cluster's certificate plays on it."""
    import ssl

    from distributed import Client, Security

    stranger = certificates(tmp_path / "stranger", "stranger")
    # A self-made authority and certificate: the scheduler's TLS refuses the handshake.
    with pytest.raises((OSError, TimeoutError)):
        Client(cluster.address, timeout=5, security=Security(
            tls_ca_file=cluster.security.ca_file, tls_client_cert=stranger.cert_file,
            tls_client_key=stranger.key_file, require_encryption=True), set_as_default=False)
    with pytest.raises(MatchError, match=f"no Dask scheduler answers at {cluster.address}"):
        run_cluster_match(scripted(), scripted(), MatchConfig(games=2, size=5), cluster.address, progress=quiet(),
                          connect_timeout=5.0, security=ClusterSecurity(cluster.security.ca_file, stranger.cert_file,
                                                                        stranger.key_file))
    # No certificate at all (a bare TLS client): the handshake fails, nothing is read.
    host, port = cluster.address.removeprefix("tls://").split(":")
    context = ssl.create_default_context(cafile=cluster.security.ca_file)
    context.check_hostname = False
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with pytest.raises((ssl.SSLError, ConnectionError)):
            with context.wrap_socket(raw) as tls:
                tls.sendall(b"x")
                assert tls.recv(1) != b""  # TLS 1.3 reports the refused certificate at the first read
    # Plain TCP on the TLS port: no Dask conversation either.
    with pytest.raises((OSError, TimeoutError)):
        Client(cluster.address.replace("tls://", "tcp://"), timeout=5, set_as_default=False)
    summary = run_cluster_match(scripted("--random", "1"), scripted("--random", "2"), MatchConfig(games=2, size=5),
                                cluster.address, progress=quiet(), security=cluster.security)
    assert summary.elo.games == 2


def test_an_unencrypted_scheduler_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    with socket.socket() as listener:  # a port that would accept: the driver must not even connect
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(MatchError, match=f"refusing the unencrypted scheduler {address}: anyone who can reach "
                                             "it runs code on every worker.*--cluster-insecure"):
            run_cluster_match(scripted(), scripted(), MatchConfig(games=2, size=5, sgf_dir=str(tmp_path / "g")),
                              address, progress=quiet())
        with pytest.raises(TimeoutError):
            listener.accept()
    assert not (tmp_path / "g").exists()  # nothing written


def test_tls_without_certificates_and_auto_without_a_configured_scheduler_are_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import dask.config

    with dask.config.set({"scheduler-address": None, "distributed.comm.tls.ca-file": None,
                          "distributed.comm.tls.client.cert": None}):
        with pytest.raises(MatchError, match="--cluster auto: Dask's configuration names no scheduler"):
            run_cluster_match(scripted(), scripted(), MatchConfig(games=2, size=5), "auto", progress=quiet())
        with pytest.raises(MatchError, match="tls://127.0.0.1:1: a tls:// scheduler needs this driver's "
                                             "certificates: --cluster-security"):
            run_cluster_match(scripted(), scripted(), MatchConfig(games=2, size=5), "tls://127.0.0.1:1",
                              progress=quiet())


def test_auto_takes_the_scheduler_and_the_certificates_from_dasks_configuration(cluster: LocalCluster) -> None:
    import dask.config

    with dask.config.set({"scheduler-address": cluster.address,
                          "distributed.comm.tls.ca-file": cluster.security.ca_file,
                          "distributed.comm.tls.client.cert": cluster.security.cert_file,
                          "distributed.comm.tls.client.key": cluster.security.key_file}):
        summary = run_cluster_match(scripted("--random", "3"), scripted("--random", "4"),
                                    MatchConfig(games=2, size=5), "auto", progress=quiet())
    assert summary.elo.games == 2
