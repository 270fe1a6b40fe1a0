"""User identities: one stable string per person.

In team mode the identity is the OIDC subject or e-mail address the sign-in
returned; e-mail addresses are compared without regard to case (they are
stored lower-cased). In local single-user mode it is whatever name the local
user works under.
"""

#: The name shown for the single local user when no name was chosen.
LOCAL_USER = "local"

MAX_USER_ID = 320


def normalise_user_id(user_id: object) -> str:
    """The canonical form of an identity (stripped; e-mail addresses lower-cased).

    Raises ValueError for an empty, over-long or control-character identity.
    """
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValueError("a user id is required: give the person's e-mail address or sign-in subject")
    value = user_id.strip()
    if len(value) > MAX_USER_ID:
        raise ValueError(f"user id is longer than {MAX_USER_ID} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError(f"user id {value!r} contains control characters")
    return value.lower() if "@" in value else value
