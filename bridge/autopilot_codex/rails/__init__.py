"""The safety rails: PreToolUse denials while a loop runs (`judge.check`), the rules as records
(`records`), the shell reader they judge (`shell`, `shellwords`, `shellwrap`, `parser`) and the
one definition of a secret file (`secrets`).

Empty on purpose: `secrets` is imported by the diff filter, which must not pay for the rest.
"""
