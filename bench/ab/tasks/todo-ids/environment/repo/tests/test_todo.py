import json
from pathlib import Path

from todo import main, read


def test_add_gives_ids(tmp_path: Path) -> None:
    path = tmp_path / "todo.json"
    assert main(["add", "milk"], path) == 0
    assert main(["add", "bread"], path) == 0
    assert [(i["id"], i["text"], i["done"]) for i in read(path)] == [
        (1, "milk", False),
        (2, "bread", False),
    ]


def test_old_files_get_ids(tmp_path: Path) -> None:
    path = tmp_path / "todo.json"
    path.write_text(json.dumps([{"text": "a"}, {"text": "b"}]))
    assert [i["id"] for i in read(path)] == [1, 2]
