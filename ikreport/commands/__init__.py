"""What the commands do, as library functions: verify, check, compare, supersede, publish, describe."""
