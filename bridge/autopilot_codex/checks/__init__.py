"""The user's evidence commands: specs and results (records), how one runs (proc), the
tree they ran on (tree), what they changed (watch), the loop's use of them (run, evidence)
and the commands a project suggests (detect). Kept empty so importing a record stays light."""
