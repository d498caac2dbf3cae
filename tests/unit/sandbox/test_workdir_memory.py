"""Which directories hold files in RAM (sandbox/workdir_memory.py), from a mount table that is
read once and again only when the mounts change (sandbox/hostview.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from benchyard.sandbox.hostview import MountTable, filesystem_kind
from benchyard.sandbox.workdir_memory import held_in_ram, ram_filesystem

# Run in a mount namespace of its own: mounts a tmpfs over a directory on a disk after the table
# was read, and over that something that is not RAM, then unmounts both, looking each time.
MOUNTED_MID_RUN = """
import subprocess, sys
from pathlib import Path
from benchyard.sandbox.workdir_memory import held_in_ram, ram_filesystem

place = Path(sys.argv[1])
seen = [ram_filesystem(place)]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(place)], check=True)
(place / "held").write_bytes(b"x" * 2 * 1024 * 1024)
seen += [ram_filesystem(place), held_in_ram(place) >= 2 * 1024 * 1024]
subprocess.run(["mount", "-t", "mqueue", "mqueue", str(place)], check=True)
seen.append(ram_filesystem(place))
subprocess.run(["umount", str(place)], check=True)
seen.append(ram_filesystem(place / "held"))
subprocess.run(["umount", str(place)], check=True)
seen.append(ram_filesystem(place))
print(seen)
"""


def test_a_ram_filesystem_is_told_from_a_disk() -> None:
    shm = Path("/dev/shm")
    if filesystem_kind(shm) != "tmpfs":
        pytest.skip("no tmpfs at /dev/shm")
    assert ram_filesystem(shm) == "tmpfs"
    assert ram_filesystem(shm / "not-there") == "tmpfs"
    assert ram_filesystem(Path("/proc")) is None


def test_a_mount_made_during_the_run_is_seen_at_the_next_command(tmp_path: Path) -> None:
    """The table read once must not hide a tmpfs mounted later over a workdir on a disk: its
    files would go uncounted against the memory limit."""
    place = Path(__file__).parent  # a disk in any checkout; only this namespace sees the mounts
    if ram_filesystem(place) is not None or shutil.which("unshare") is None:
        pytest.skip("the source tree is in RAM, or no unshare")
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    # An IPC namespace of its own, where mqueue (not in RAM by its type) may be mounted.
    namespace = ["unshare", *user, "--mount", "--ipc", "--propagation", "private"]
    done = subprocess.run(
        [*namespace, sys.executable, "-c", MOUNTED_MID_RUN, str(place)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 and "unshare" in done.stderr:
        pytest.skip(f"no mount namespace here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[None,", "'tmpfs',", "True,", "None,", "'tmpfs',", "None]"]


def test_a_device_the_table_does_not_name_is_found_by_mount_point() -> None:
    """A btrfs subvolume's files have a device number of their own, in no mount's line."""
    text = (
        "27 1 254:0 / / rw - ext4 /dev/vda rw\n"
        "30 27 0:27 / /dev/shm rw - tmpfs tmpfs rw\n"
        "31 30 0:28 / /dev/shm rw - ramfs ramfs rw\n"
    )
    table = MountTable.parse(text)
    assert table.kinds == {os.makedev(254, 0): "ext4", 0x1B: "tmpfs", 0x1C: "ramfs"}
    assert table.kind_at(Path("/dev/shm/work/1")) == "ramfs"  # the one mounted on top
    assert table.kind_at(Path("/srv")) == "ext4"


def test_files_in_ram_are_counted_once_each(tmp_path: Path) -> None:
    shm = Path("/dev/shm")
    if ram_filesystem(shm) is None or not os.access(shm, os.W_OK):
        pytest.skip("no writable tmpfs at /dev/shm")
    workdir = Path(tempfile.mkdtemp(dir=shm))
    try:
        (workdir / "a").write_bytes(b"x" * 1024 * 1024)
        os.link(workdir / "a", workdir / "b")
        (workdir / "link").symlink_to(tmp_path)
        held = held_in_ram(workdir)
        assert 1024 * 1024 <= held < 2 * 1024 * 1024
    finally:
        shutil.rmtree(workdir)
