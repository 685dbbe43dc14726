"""The tests' commands are forked by a starter that imported diagkg once (tests/support/cli_zygote.py): each
still ends as ``python -c …`` running ``diagkg.cli`` ends: same status, same output, its own environment, folder
and memory cap, and its exit functions run."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest

from ..support import cli
from ..support.paths import THREE_CUBES


def _both(*args: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    warm = cli.run_cli(*args, env=env)
    cli.COLD = True
    try:
        cold = cli.run_cli(*args, env=env)
    finally:
        cli.COLD = False
    return warm, cold


@pytest.mark.parametrize("args", [("--version",), ("no-such-command",), ("query", "--help"),
                                  ("validate", "no/such/file.ttl")], ids=["version", "unknown", "help", "missing"])
def test_a_forked_command_ends_as_a_fresh_one(args: tuple[str, ...]) -> None:
    warm, cold = _both(*args)
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)


def test_its_store_folder_and_environment_are_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mine.ttl").write_bytes(THREE_CUBES.read_bytes())
    monkeypatch.chdir(tmp_path)                        # a path relative to the test's folder, a store named by the environment
    warm = cli.run_cli("load", "mine.ttl", env={"DIAGKG_STORE": str(tmp_path / "warm")})
    cli.COLD = True
    try:
        cold = cli.run_cli("load", "mine.ttl", env={"DIAGKG_STORE": str(tmp_path / "cold")})
    finally:
        cli.COLD = False
    assert warm.returncode == cold.returncode == 0, warm.stderr + cold.stderr
    assert (warm.stdout.replace("warm", "cold"), warm.stderr.replace("warm", "cold")) == (cold.stdout, cold.stderr)
    assert (tmp_path / "warm").is_dir() and (tmp_path / "cold").is_dir()
    assert str(tmp_path / "warm") in warm.stdout + warm.stderr


def test_commands_at_once_each_get_their_own_status(tmp_path: Path) -> None:
    results: dict[int, subprocess.CompletedProcess] = {}

    def one(i: int) -> None:
        results[i] = cli.run_cli("--store", str(tmp_path / f"missing-{i}"), "graphs") if i % 2 else cli.run_cli("--version")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, r in results.items():
        if i % 2:
            assert r.returncode != 0 and f"missing-{i}" in r.stderr
        else:
            assert r.returncode == 0 and r.stdout.startswith("diagkg")
