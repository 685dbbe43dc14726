"""A campaign killed with ``kill -9`` leaves its folder in the temporary directory (a copy of the
knowledge and the rounds its workers journal, about 650 KB): the next campaign removes it, and only
the folders of processes that are gone."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from diagkg.evaluation import pool


def _dead_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_only_the_folders_of_processes_that_are_gone_are_swept(tmp_path):
    dead, mine = _dead_pid(), os.getpid()
    gone = f"{pool.FOLDER}{pool.owner(dead)}-ab12"
    space = pool.owner().split("-")[0]
    folders = {name: tmp_path / name for name in (gone, f"{pool.FOLDER}{pool.owner(mine)}-cd34", f"{pool.FOLDER}x7y8",
                                                   f"{pool.FOLDER}{dead}-ab12",          # (the name before namespaces)
                                                   f"{pool.FOLDER}{int(space) + 1}-{dead}-ef56",   # another namespace's
                                                   f"{pool.FOLDER}{pool.owner(dead)}", "other-folder")}
    for folder in folders.values():
        (folder / "rounds").mkdir(parents=True)
        (folder / "knowledge.nq").write_text("")
    removed = pool.sweep_stale(str(tmp_path))
    assert removed == [str(folders[gone])]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(set(folders) - {gone})


def test_a_campaign_starts_by_sweeping_and_keeps_its_own_folder_named_by_its_process(tmp_path, monkeypatch):
    dead = tmp_path / f"{pool.FOLDER}{pool.owner(_dead_pid())}-ef56"
    (dead / "rounds").mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with ExitStack() as stack:          # (a pool starts its processes at its first task: none here)
        lanes = pool.LocalPool(stack, 1, b"")
        assert not dead.exists()
        own = Path(lanes.journal).parent
        assert own.parent == tmp_path and own.name.startswith(f"{pool.FOLDER}{pool.owner()}-")
    assert not own.exists()
