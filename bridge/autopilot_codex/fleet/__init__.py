"""Many runs on many machines: `submit` puts a run on a queue in the shared database, and every
`worker` takes runs from it (docs/scaling.md). A run is one DBOS workflow (`workflow.py`): clone
into the worker's workspace, drive the lanes there, push the branches. Nothing here is on a
hook's path."""
