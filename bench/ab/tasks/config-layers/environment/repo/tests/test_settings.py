from pathlib import Path

from settings import read_file


def test_reads_key_value_lines(tmp_path: Path) -> None:
    conf = tmp_path / "app.conf"
    conf.write_text("# comment\nName = demo\n\nport=8080\n")
    assert read_file(conf) == {"name": "demo", "port": "8080"}
