"""Who a command acts as when ``--actor`` is not given: the OS user (``cli`` if unknown).

Standard library only, so ``evalcore evaluate`` can use it without loading the store.
"""

import getpass


def default_actor() -> str:
    """The OS user name, or ``cli`` when the system cannot tell."""
    try:
        return getpass.getuser() or "cli"
    except (KeyError, OSError):
        return "cli"
