# An empty conftest.py at the root: plain `pytest` then puts this folder on sys.path, so the
# tests import the modules beside it.
