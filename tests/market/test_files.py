"""Files written whole (market/files.py): two writers at once and a reader beside them."""

import threading
from pathlib import Path

import pytest

from market.files import write_whole


def test_two_writers_at_once_leave_one_whole_file_and_a_reader_never_sees_half(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "file.bin"
    contents = [bytes([65]) * 4_000_000, bytes([66]) * 3_000_000]  # two runs' versions of one file
    write_whole(path, contents[0])

    def write(data: bytes) -> None:
        for _ in range(15):
            write_whole(path, data)

    writers = [threading.Thread(target=write, args=(data,)) for data in contents]
    for writer in writers:
        writer.start()
    seen = []
    while any(w.is_alive() for w in writers):
        seen.append(path.read_bytes())
    for writer in writers:
        writer.join()
    assert seen and all(read in contents for read in seen)
    assert path.read_bytes() in contents
    assert [p.name for p in path.parent.iterdir()] == ["file.bin"]  # no temporary file left


def test_a_writer_stopped_half_way_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch) -> None:
    import os

    path = write_whole(tmp_path / "file.bin", b"whole")

    def stopped(*args) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", stopped)
    with pytest.raises(KeyboardInterrupt):  # stopped at the rename, after the bytes were written
        write_whole(path, b"new and longer")
    assert path.read_bytes() == b"whole"
    assert [p.name for p in tmp_path.iterdir()] == ["file.bin"]
