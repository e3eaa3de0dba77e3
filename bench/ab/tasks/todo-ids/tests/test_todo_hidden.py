import json
from pathlib import Path

import pytest
from todo import main, read


def test_next_id_follows_the_largest(tmp_path: Path) -> None:
    path = tmp_path / "todo.json"
    path.write_text(json.dumps([{"id": 7, "text": "a", "done": False}]))
    main(["add", "b"], path)
    assert [i["id"] for i in read(path)] == [7, 8]


def test_add_to_an_old_file(tmp_path: Path) -> None:
    path = tmp_path / "todo.json"
    path.write_text(json.dumps([{"text": "a"}, {"text": "b"}]))
    main(["add", "c"], path)
    assert [(i["id"], i["done"]) for i in read(path)] == [(1, False), (2, False), (3, False)]


def test_done_and_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "todo.json"
    for text in ("milk", "bread", "eggs"):
        main(["add", text], path)
    assert main(["done", "2"], path) == 0
    capsys.readouterr()
    main(["list"], path)
    assert capsys.readouterr().out == "1. milk\n3. eggs\n"
    main(["list", "--all"], path)
    assert capsys.readouterr().out == "1. milk\n2. [x] bread\n3. eggs\n"


def test_done_on_an_old_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "todo.json"
    path.write_text(json.dumps([{"text": "a"}, {"text": "b"}]))
    assert main(["done", "1"], path) == 0
    main(["list"], path)
    assert capsys.readouterr().out == "2. b\n"


def test_unknown_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "todo.json"
    main(["add", "milk"], path)
    assert main(["done", "9"], path) == 2
    assert "no item 9" in capsys.readouterr().err
