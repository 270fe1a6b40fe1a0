"""Archives that cannot be forged undetectably without the organisation's key (issue 28,
item 5).

The attack: a label's gain rewritten 1 -> 4 and an audit row forged (another user,
channel ``app``, dated 2020), every member hash and row count of the manifest recomputed.
With the organisation's signing key the forgery is refused and nothing is written;
without one it is accepted with a plain warning that the archive's origin is unverified,
which the audit log records.
"""

import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from access_fixtures import LEAD, REVIEWER, team_store
from click.testing import CliRunner
from store_fixtures import table_snapshot

from evalcore.cli import main
from evalcore.io.study_archive import ADDED_IN, KEY_MIN_BYTES, key_id
from evalcore.store.connection import open_store

KEY = b"k" * 40
OTHER_KEY = b"o" * 40
FORGED_AUDIT = {"created_at": "2020-01-01T00:00:00Z", "actor": REVIEWER,
                "action": "labels.adjudicate", "detail_json": "{\"gain\": 4}",
                "channel": "app", "os_user": ""}


def _key_file(path: Path, key: bytes = KEY, mode: int = 0o600) -> Path:
    path.write_bytes(key + b"\n")
    path.chmod(mode)
    return path


def _cli(*args: object, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


@pytest.fixture
def source(tmp_path: Path, store_target) -> Path:
    team_store(store_target)[0].conn.close()
    return store_target


def _export(source: Path, out: Path, *key: object) -> Path:
    result = _cli("export", "study", "--db", source, "--study", "s", "--out", out,
                  "--actor", LEAD, *key)
    assert result.exit_code == 0, result.output
    return out


def _forge(archive: Path, out: Path, *, keep_signature: bool = True) -> Path:
    """Gain 1 -> 4 and a forged audit row, the manifest recomputed (as issue 28 did)."""
    with zipfile.ZipFile(archive) as z:
        members = {n: z.read(n) for n in z.namelist()}
    labels = members["label_events.jsonl"]
    assert b'"gain":1,' in labels
    members["label_events.jsonl"] = labels.replace(b'"gain":1,', b'"gain":4,', 1)
    members["audit.jsonl"] += (json.dumps(FORGED_AUDIT, separators=(",", ":")) + "\n").encode()
    manifest = json.loads(members["manifest.json"])
    for name in ("label_events.jsonl", "audit.jsonl"):
        data = members[name]
        manifest["members"][name] = {"rows": data.count(b"\n"), "bytes": len(data),
                                     "sha256": hashlib.sha256(data).hexdigest()}
    members["manifest.json"] = (json.dumps(manifest, indent=2) + "\n").encode()
    if not keep_signature:
        members.pop("signature.json", None)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out


def _target(new_store_target, name: str = "target.db") -> Path:
    path = new_store_target(name)
    open_store(path).conn.close()
    return path


def _import(target: Path, archive: Path, *extra: object, env: dict[str, str] | None = None):
    return _cli("import", "study", "--db", target, "--in", archive, "--actor", LEAD, *extra,
                env=env)


def _import_audit(target: Path) -> dict:
    db = open_store(target)
    row = db.execute("SELECT detail_json FROM audit_log WHERE action = 'study.import'"
                     ).fetchone()
    return json.loads(row[0])


def test_attack_a_forged_archive_is_refused_when_signed(source: Path, tmp_path: Path, new_store_target) -> None:
    key = _key_file(tmp_path / "org.key")
    signed = _export(source, tmp_path / "signed.zip", "--signing-key", key)
    target = _target(new_store_target)
    before = table_snapshot(open_store(target))
    forged = _forge(signed, tmp_path / "forged.zip")
    result = _import(target, forged, "--signing-key", key)
    assert result.exit_code == 2 and "signature does not match its manifest: it was altered " \
        "after it was signed; nothing was written" in result.output, result.output
    stripped = _forge(signed, tmp_path / "stripped.zip", keep_signature=False)
    result = _import(target, stripped, "--signing-key", key)
    assert result.exit_code == 2 and "the archive is not signed, and a signing key" in \
        result.output and "--accept-unsigned" in result.output
    assert "Traceback" not in result.output
    assert table_snapshot(open_store(target)) == before


def test_attack_a_forged_unsigned_archive_is_accepted_as_unverified(source: Path,
                                                                    tmp_path: Path, new_store_target) -> None:
    forged = _forge(_export(source, tmp_path / "plain.zip"), tmp_path / "forged.zip")
    target = _target(new_store_target)
    result = _import(target, forged)
    assert result.exit_code == 0, result.output
    assert "warning: the archive is not signed, and no signing key is configured to verify " \
        "it: its origin is unverified" in result.output
    assert "recorded in the audit log" in result.output
    assert _import_audit(target)["origin"] == {"verified": False, "signed": False,
                                               "key_id": None}
    db = open_store(target)  # what was forged went in, and the log says it is unverified
    assert db.execute("SELECT count(*) FROM audit_log WHERE created_at = '2020-01-01T00:00:00Z'"
                      ).fetchone() == (1,)


def test_a_signed_archive_is_verified_with_the_key(source: Path, tmp_path: Path, new_store_target) -> None:
    key = _key_file(tmp_path / "org.key")
    signed = _export(source, tmp_path / "signed.zip", "--signing-key", key)
    with zipfile.ZipFile(signed) as z:
        signature = json.loads(z.read("signature.json"))
    assert signature["algorithm"] == "HMAC-SHA256" and signature["key_id"] == key_id(KEY)
    assert KEY.decode() not in signed.read_bytes().decode("latin-1")
    target = _target(new_store_target)
    result = _import(target, signed, env={"RELEVANCE_LEDGER_ARCHIVE_KEY_FILE": str(key)})
    assert result.exit_code == 0, result.output
    assert f"origin is verified: signed with key {key_id(KEY)}" in result.output
    assert _import_audit(target)["origin"] == {"verified": True, "signed": True,
                                               "key_id": key_id(KEY)}


def test_a_signed_archive_without_a_key_is_unverified_and_with_another_key_refused(
        source: Path, tmp_path: Path, new_store_target) -> None:
    signed = _export(source, tmp_path / "signed.zip", "--signing-key",
                     _key_file(tmp_path / "org.key"))
    result = _import(_target(new_store_target), signed)
    assert result.exit_code == 0 and f"signed with key {key_id(KEY)}, but no signing key is " \
        "configured" in result.output
    (tmp_path / "other").mkdir()
    result = _import(_target(new_store_target, "other/target.db"), signed, "--signing-key",
                     _key_file(tmp_path / "other.key", OTHER_KEY))
    assert result.exit_code == 2 and f"signed with key {key_id(KEY)}, not with the configured " \
        f"key {key_id(OTHER_KEY)}" in result.output


def test_an_unsigned_archive_with_a_key_only_when_accepted(source: Path, tmp_path: Path, new_store_target) -> None:
    plain = _export(source, tmp_path / "plain.zip")
    target = _target(new_store_target)
    key = _key_file(tmp_path / "org.key")
    assert _import(target, plain, "--signing-key", key).exit_code == 2
    result = _import(target, plain, "--signing-key", key, "--accept-unsigned")
    assert result.exit_code == 0 and "accepted unsigned, as asked" in result.output
    assert _import_audit(target)["origin"]["verified"] is False


@pytest.mark.parametrize(("content", "mode", "message"), [
    (KEY, 0o644, "may be read by others (mode 644)"),
    (KEY, 0o640, "chmod 600"),
    (b"short", 0o600, f"give at least {KEY_MIN_BYTES}"),
])
def test_a_weak_or_exposed_key_file_is_refused(source: Path, tmp_path: Path, content: bytes,
                                               mode: int, message: str) -> None:
    key = _key_file(tmp_path / "weak.key", content, mode)
    out = tmp_path / "never.zip"
    result = _cli("export", "study", "--db", source, "--study", "s", "--out", out,
                  "--actor", LEAD, "--signing-key", key)
    assert result.exit_code == 2 and message in result.output and not out.exists()
    missing = _cli("export", "study", "--db", source, "--study", "s", "--out", out,
                   "--actor", LEAD, env={"RELEVANCE_LEDGER_ARCHIVE_KEY_FILE": str(
                       tmp_path / "nope.key")})
    assert missing.exit_code == 2 and "cannot read the signing key file" in missing.output


def test_a_format_1_archive_still_imports(source: Path, tmp_path: Path, new_store_target) -> None:
    """Archives written before organisation roles and signatures (format version 1)."""
    with zipfile.ZipFile(_export(source, tmp_path / "v2.zip")) as z:
        members = {n: z.read(n) for n in z.namelist()}
    rows = [json.loads(line) for line in members["organisation_members.jsonl"].splitlines()]
    old = "".join(json.dumps({k: r[k] for k in ("user_id", "granted_by", "granted_at")},
                             separators=(",", ":")) + "\n" for r in rows).encode()
    manifest = json.loads(members["manifest.json"])
    manifest["format_version"] = 1
    del manifest["withheld"]
    for name in ADDED_IN:  # members of later format versions
        del manifest["members"][name]
        del members[name]
    manifest["members"]["organisation_members.jsonl"] = {
        "rows": len(rows), "bytes": len(old), "sha256": hashlib.sha256(old).hexdigest()}
    members.update({"organisation_members.jsonl": old,
                    "manifest.json": json.dumps(manifest).encode()})
    v1 = tmp_path / "v1.zip"
    with zipfile.ZipFile(v1, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    target = _target(new_store_target)
    result = _import(target, v1)
    assert result.exit_code == 0, result.output
    roles = dict(open_store(target).execute(
        "SELECT user_id, role FROM user_organisations WHERE org_id = 'acme'").fetchall())
    assert roles[LEAD] == "owner" and set(roles.values()) == {"owner", "member"}
