"""``python -m ikreport`` is the ``ikreport`` command."""

from ikreport.cli.main import main

main()
