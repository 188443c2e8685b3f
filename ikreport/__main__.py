"""``python -m ikreport`` is the ``ikreport`` command."""

from ikreport.cli import main

main()
