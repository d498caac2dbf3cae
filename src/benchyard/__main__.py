from benchyard.cli.app import main

main()
