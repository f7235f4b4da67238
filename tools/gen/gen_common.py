"""Helpers shared by the generators in tools/gen."""
import os


def write_if_changed(path, text):
    """Writes `text` to `path` unless it already holds it, so that builds stay incremental."""
    if os.path.exists(path) and open(path).read() == text:
        return
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
