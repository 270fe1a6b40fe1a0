"""Users and organisation memberships as rows (written inside the caller's transaction).

Who may write them is decided elsewhere (:mod:`evalcore.store.members`,
:mod:`evalcore.store.studies`); these helpers only write.
"""

import sqlite_utils

from evalcore.access.identity import normalise_user_id
from evalcore.io.clock import utc_now_iso


def ensure_user(db: sqlite_utils.Database, user_id: str, display_name: str = "") -> str:
    """Register the user if unknown (inside the caller's transaction); return the canonical id."""
    user = normalise_user_id(user_id)
    db.execute(
        "INSERT INTO users (user_id, display_name, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET display_name = CASE WHEN excluded.display_name = '' "
        "THEN users.display_name ELSE excluded.display_name END",
        [user, display_name, utc_now_iso()],
    )
    return user


def join_organisation(db: sqlite_utils.Database, user: str, org_id: str, granted_by: str) -> bool:
    """Add the membership row (True if new); the caller has authorised it."""
    cursor = db.execute(
        "INSERT OR IGNORE INTO user_organisations (user_id, org_id, granted_by, granted_at) "
        "VALUES (?, ?, ?, ?)",
        [user, org_id, granted_by, utc_now_iso()],
    )
    return cursor.rowcount > 0
