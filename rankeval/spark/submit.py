"""The command line under spark-submit, which runs a Python file rather than a module:

    spark-submit --master yarn "$(python -m rankeval.spark.submit)" score --engine spark ...

Run as a module (``python -m``), it prints its own path, for the line above; run as a file,
it is the ``rankeval`` command.
"""

if __name__ == "__main__":
    if __spec__ is None:  # a file, as spark-submit runs it
        from rankeval.cli import main

        main()
    else:
        print(__file__)
