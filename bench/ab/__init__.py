"""The paired A/B benchmark: the same tasks through the host alone and through each loop style,
same implementer, same model, same money; resolved by hidden tests the implementer never sees.

`python -m bench.ab run` runs the trials, `python -m bench.ab report RUN_DIR` summarises them
(docs/benchmarks.md).
"""
