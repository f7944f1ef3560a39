"""Where rankeval meets the tools around it: the GitHub Action's runner (``action``), the
pre-commit hooks (``hooks``)."""

# The commands the action runs: those that append a summary to GITHUB_STEP_SUMMARY (which
# the output-path rule, io/paths.py, then guards; tests/test_paths.py checks the two agree).
COMMANDS = ("score", "compare", "ope", "agree")
