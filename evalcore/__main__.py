"""``python -m evalcore``: the same command line as the ``evalcore`` script."""

from evalcore.cli import main

if __name__ == "__main__":
    main()
