"""The command line: click commands that parse options, call one library function and print."""
