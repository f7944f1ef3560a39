from rankeval.cli import main

main()
