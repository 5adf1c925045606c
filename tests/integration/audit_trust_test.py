"""Integration tests of the daemon's refusal to extend an audit log it cannot vouch for: a row
appended after a clean stop, an edited row, a head of another key and a record whose time goes
backwards each stop the start with the first bad sequence number; kimictl audit verify reports
the same; kimictl audit witness hands heads to an auditor and verify --head checks them. Real
daemon on a loopback port 0, Python standard library only (sqlite3 and hashlib forge rows the
way someone with file access would).
"""
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from audit_test import WAIT_S, audit_config  # noqa: E402
from daemon_harness import DAEMON, KIMICTL, Daemon, request, run_to_exit, write_config  # noqa: E402


def json_string(s):
    """A string as the appliance's canonical JSON writes it (audit/canonical_json.cc)."""
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in "\b\f\n\r\t":
            out.append({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif c < 0x20:
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def leaf_hash(row):
    """The writer's leaf hash of a record row (canonical bytes as in audit/record.cc)."""
    v = row["v"]
    keys = ["action", "actor", "completion_tokens", "content_sha256", "detail", "http_status", "model",
            "model_digest", "outcome", "policy", "prompt_tokens", "request_id", "request_sha256", "response_sha256",
            "role", "seq", "source", "target", "time_ms", "total_us", "ttft_us", "v"]
    if v >= 2:
        keys += ["attempts", "backend", "route_decision"]
    if v >= 3:
        keys += ["client_request_id"]
    if v >= 4:
        keys += ["start_seq"]
    parts = []
    for k in sorted(keys):
        value = row[k]
        if k == "policy":
            text = value  # stored in its canonical form
        elif isinstance(value, int):
            text = str(value)
        else:
            text = json_string(value)
        parts.append(json_string(k) + ":" + text)
    return hashlib.sha256(b"\x00" + ("{" + ",".join(parts) + "}").encode()).digest()


def tree_root(leaves):
    """RFC 9162 Merkle tree hash."""
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + tree_root(leaves[:k]) + tree_root(leaves[k:])).digest()


def compact_edge(leaves):
    """The writer's stored tree: roots of the perfect subtrees, largest first."""
    edge, start = b"", 0
    for bit in reversed(range(64)):
        if len(leaves) & (1 << bit):
            edge += tree_root(leaves[start:start + (1 << bit)])
            start += 1 << bit
    return edge


def forge_row(data_dir, seq, **fields):
    """Writes the last record again as row `seq` with `fields` changed and its right leaf hash,
    then rewrites the writer's stored tree to match."""
    db = sqlite3.connect(os.path.join(data_dir, "audit.db"))
    db.row_factory = sqlite3.Row
    try:
        last = dict(db.execute("SELECT * FROM audit_records ORDER BY seq DESC LIMIT 1").fetchone())
        row = dict(last, seq=seq, request_id="forged", **fields)
        row["leaf_hash"] = leaf_hash(row)
        db.execute("DELETE FROM audit_records WHERE seq = ?", (seq,))
        columns = ", ".join(row)
        db.execute("INSERT INTO audit_records(%s) VALUES(%s)" % (columns, ", ".join("?" * len(row))),
                   list(row.values()))
        leaves = [r[0] for r in db.execute("SELECT leaf_hash FROM audit_records ORDER BY seq")]
        db.execute("UPDATE audit_tree SET size = ?, edge = ? WHERE id = 1", (len(leaves), compact_edge(leaves)))
        db.commit()
    finally:
        db.close()


def query(data_dir, sql, *args):
    db = sqlite3.connect(os.path.join(data_dir, "audit.db"))
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def execute(data_dir, sql, *args):
    db = sqlite3.connect(os.path.join(data_dir, "audit.db"))
    try:
        db.execute(sql, args)
        db.commit()
    finally:
        db.close()


def read_lines(path):
    with open(path) as f:
        return f.read().splitlines()


def kimictl_audit(data_dir, *args):
    return run_to_exit([KIMICTL, "audit", *args, "--data-dir", data_dir])


class AuditTrustTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="kimi-audit-trust-")
        self.data_dir = os.path.join(self.tmp.name, "data")

    def tearDown(self):
        self.tmp.cleanup()

    def run_and_stop(self, data_dir=None, **audit):
        daemon = Daemon(config=audit_config(data_dir or self.data_dir, **audit))
        try:
            self.assertEqual(request(daemon, "GET", "/v1/models").status, 200)
            self.assertEqual(daemon.stop(), 0)
        finally:
            daemon.close()

    def assert_start_refused(self, seq, *fragments):
        """The daemon exits at start, its log naming seq, and signs no head over the log."""
        heads = query(self.data_dir, "SELECT count(*) FROM audit_heads")[0][0]
        with tempfile.TemporaryDirectory(prefix="kimi-audit-trust-") as d:
            code, _, err = run_to_exit([DAEMON, "--config", write_config(d, audit_config(self.data_dir))])
        self.assertNotEqual(code, 0, err)
        failure = [l for l in err.splitlines() if "cannot open the audit log" in l]
        self.assertEqual(len(failure), 1, err)
        self.assertIn("fails verification at seq %d " % seq, failure[0])
        for f in fragments:
            self.assertIn(f, failure[0])
        self.assertEqual(query(self.data_dir, "SELECT count(*) FROM audit_heads")[0][0], heads)

    def assert_verify_fails(self, seq, *fragments):
        code, out, err = kimictl_audit(self.data_dir, "verify")
        self.assertEqual(code, 1, out + err)
        self.assertIn("first bad sequence number %d" % seq, out)
        for f in fragments:
            self.assertIn(f, out)

    def test_a_row_appended_after_a_clean_stop_stops_the_start(self):
        self.run_and_stop()
        rows = query(self.data_dir, "SELECT count(*), max(time_ms) FROM audit_records")[0]
        forge_row(self.data_dir, rows[0], time_ms=rows[1] + 1)
        self.assert_verify_fails(rows[0], "not written by this appliance")
        self.assert_start_refused(rows[0], "not written by this appliance")

    def test_an_edited_row_stops_the_start(self):
        self.run_and_stop()
        execute(self.data_dir, "UPDATE audit_records SET outcome = 'denied' WHERE seq = 1")
        self.assert_start_refused(1)

    def test_an_edited_row_below_the_checkpoint_is_found_after_start(self):
        self.run_and_stop()
        self.run_and_stop()  # this start verified the first run's rows: they are its checkpoint
        execute(self.data_dir, "UPDATE audit_records SET outcome = 'denied' WHERE seq = 1")
        daemon = Daemon(config=audit_config(self.data_dir, sign_interval_ms=100))
        try:
            def audit_detail():
                component = request(daemon, "GET", "/readyz").json()["components"]["audit"]
                return None if component["ready"] else component["detail"]
            deadline = time.monotonic() + WAIT_S
            while audit_detail() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertIn("audit log fails verification: seq 1 ", audit_detail() or "")
            heads = query(self.data_dir, "SELECT count(*) FROM audit_heads")[0][0]
            self.assertEqual(request(daemon, "GET", "/v1/models").status, 200)
            self.assertNotEqual(daemon.stop(), 0, "no clean stop is signed over a log that fails")
            self.assertEqual(query(self.data_dir, "SELECT count(*) FROM audit_heads")[0][0], heads)
        finally:
            daemon.close()
        self.assert_start_refused(1)  # and the next start checks from seq 0 again

    def test_a_log_that_cannot_be_read_fails_verify_and_the_writer_stops_signing(self):
        # A damaged page (as a truncated WAL leaves): the verify route answered 500 and the
        # writer went on signing heads; now a failed verification, and audit not ready.
        daemon = Daemon(config=audit_config(self.data_dir))
        try:
            for _ in range(20):
                self.assertEqual(request(daemon, "GET", "/v1/models").status, 200)
            # The leftmost leaf of the records' table: old rows, which appends do not touch.
            db = os.path.join(self.data_dir, "audit.db")
            execute(self.data_dir, "PRAGMA wal_checkpoint(TRUNCATE)")
            conn = sqlite3.connect(db)
            try:
                page_size = conn.execute("PRAGMA page_size").fetchone()[0]
                leaf = conn.execute("SELECT min(pageno) FROM dbstat WHERE name = 'audit_records' AND "
                                    "pagetype = 'leaf'").fetchone()[0]
            finally:
                conn.close()
            with open(db, "r+b") as f:
                f.seek((leaf - 1) * page_size + 8)
                f.write(b"\xff" * (page_size - 8))
            reply = request(daemon, "GET", "/admin/v1/audit/verify")
            self.assertEqual(reply.status, 200, reply.body)
            report = reply.json()
            self.assertFalse(report["ok"], report)
            self.assertIn("the log cannot be read", report["problems"][0])
            audit = request(daemon, "GET", "/readyz").json()["components"]["audit"]
            self.assertFalse(audit["ready"], audit)
        finally:
            daemon.stop()
            daemon.close()

    def test_a_head_signed_by_another_key_stops_the_start(self):
        self.run_and_stop()
        other = os.path.join(self.tmp.name, "other")
        self.run_and_stop(other)
        # The other appliance's last head (its own key) replaces this one's.
        key_id, signature = query(other, "SELECT key_id, signature FROM audit_heads ORDER BY id DESC LIMIT 1")[0]
        execute(self.data_dir, "UPDATE audit_heads SET key_id = ?, signature = ? "
                "WHERE id = (SELECT max(id) FROM audit_heads)", key_id, signature)
        self.assert_start_refused(0, "forged")

    def test_a_record_whose_time_goes_backwards_fails_verify_and_the_start(self):
        # No head after the start's, then kill -9: the rows past it are the crashed run's own,
        # so a forged one among them is caught only by its time.
        daemon = Daemon(config=audit_config(self.data_dir, sign_interval_ms=3600000))
        try:
            for _ in range(3):
                self.assertEqual(request(daemon, "GET", "/v1/models").status, 200)
            daemon.proc.send_signal(signal.SIGKILL)
            daemon.wait_exit()
        finally:
            daemon.close()
        last, first_time = query(self.data_dir, "SELECT max(seq), min(time_ms) FROM audit_records")[0]
        forge_row(self.data_dir, last, time_ms=first_time - 5000)
        self.assert_verify_fails(last, "goes backwards")
        self.assert_start_refused(last, "goes backwards")

    def test_witnessed_heads_round_trip_and_catch_a_rollback(self):
        witness = os.path.join(self.tmp.name, "witness.jsonl")
        early = os.path.join(self.tmp.name, "early.db")
        daemon = Daemon(config=audit_config(self.data_dir, sign_interval_ms=100))
        try:
            def witnessed():
                return kimictl_audit(self.data_dir, "witness", "--append", witness)[0] == 0
            deadline = time.monotonic() + WAIT_S
            while not witnessed() and time.monotonic() < deadline:
                time.sleep(0.1)  # until the first head is signed
            self.assertTrue(os.path.exists(witness), "no head was witnessed")
            # The host's copy of the log as it is now, for the rollback below.
            src = sqlite3.connect(os.path.join(self.data_dir, "audit.db"))
            dst = sqlite3.connect(early)
            src.backup(dst)
            src.close()
            dst.close()
            size_then = json.loads(read_lines(witness)[-1])["tree_size"]
            for _ in range(3):
                self.assertEqual(request(daemon, "GET", "/v1/models").status, 200)
            deadline = time.monotonic() + WAIT_S
            while time.monotonic() < deadline:
                self.assertTrue(witnessed())
                if json.loads(read_lines(witness)[-1])["tree_size"] > size_then:
                    break
                time.sleep(0.1)
            self.assertEqual(daemon.stop(), 0)
        finally:
            daemon.close()
        lines = read_lines(witness)
        self.assertGreaterEqual(len(lines), 2)
        code, out, err = kimictl_audit(self.data_dir, "verify", "--head", witness)
        self.assertEqual(code, 0, out + err)
        self.assertIn("(%d kept)" % len(lines), out)

        # The earlier copy put back: consistent on its own, not with the witnessed heads.
        for suffix in ("-wal", "-shm"):
            if os.path.exists(os.path.join(self.data_dir, "audit.db" + suffix)):
                os.remove(os.path.join(self.data_dir, "audit.db" + suffix))
        shutil.copyfile(early, os.path.join(self.data_dir, "audit.db"))
        code, out, err = kimictl_audit(self.data_dir, "verify")
        self.assertEqual(code, 0, out + err)
        code, out, err = kimictl_audit(self.data_dir, "verify", "--head", witness)
        self.assertEqual(code, 1, out + err)
        self.assertIn("covers more records than the database holds", out)
        code, _, err = kimictl_audit(self.data_dir, "witness", "--append", witness)
        self.assertEqual(code, 1, err)
        self.assertEqual(len(read_lines(witness)), len(lines), "nothing witnessed")


if __name__ == "__main__":
    unittest.main()
