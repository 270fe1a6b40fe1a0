"""Users and organisation memberships as rows (written inside the caller's transaction).

Who may write them is decided elsewhere (:mod:`evalcore.store.members`,
:mod:`evalcore.store.studies`); these helpers only write.
"""

import sqlite_utils

from evalcore.access.identity import normalise_user_id
from evalcore.access.organisations import OrgRole
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


def join_organisation(db: sqlite_utils.Database, user: str, org_id: str, granted_by: str,
                      role: OrgRole = "member", *, granted_at: str | None = None) -> bool:
    """Add the membership row with ``role`` (True if new); the caller has authorised it.

    The first member of an organisation becomes its owner, whatever ``role`` says: an
    organisation always has an owner once it has a member."""
    cursor = db.execute(
        "INSERT INTO user_organisations (user_id, org_id, granted_by, granted_at, role) "
        "SELECT ?, ?, ?, ?, CASE WHEN EXISTS (SELECT 1 FROM user_organisations WHERE org_id = ?) "
        "THEN ? ELSE 'owner' END WHERE true ON CONFLICT DO NOTHING",
        [user, org_id, granted_by, granted_at or utc_now_iso(), org_id, role],
    )
    return cursor.rowcount > 0


def set_organisation_role(db: sqlite_utils.Database, user: str, org_id: str, role: OrgRole,
                          granted_by: str) -> None:
    """Change a member's role (the caller has authorised it)."""
    db.execute("UPDATE user_organisations SET role = ?, granted_by = ?, granted_at = ? "
               "WHERE user_id = ? AND org_id = ?",
               [role, granted_by, utc_now_iso(), user, org_id])


def leave_organisation(db: sqlite_utils.Database, user: str, org_id: str) -> bool:
    """Remove the membership row (True if there was one); the caller has authorised it."""
    return db.execute("DELETE FROM user_organisations WHERE user_id = ? AND org_id = ?",
                      [user, org_id]).rowcount > 0
