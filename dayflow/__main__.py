from dayflow.cli import main

main()
