"""Where rankeval meets the tools around it: the GitHub Action's runner (``action``), the
pre-commit hooks (``hooks``)."""
