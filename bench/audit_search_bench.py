"""What one page of the auditors' search costs over a large audit log (issue 28).

Makes an audit.db with kimi-bench-audit (the real schema and writer), fills it to --records
rows of synthetic requests (500 keys, five actions) with SQLite directly, then times the SELECTs
AuditStore::ScanSql builds for a page: no filter, a key name (three key ids as one json_each
parameter), a partial match that finds nothing in one kAuditContainsWindow (20,000 seqs) and, for
comparison, over the whole log, which the window avoids. Prints the best of five runs; asserts
nothing. Uses the system's SQLite (/usr/bin/python3), as the daemon does.

  /usr/bin/python3 bench/audit_search_bench.py --bench-audit build/appliance/audit/kimi-bench-audit
"""
import argparse
import json
import random
import sqlite3
import subprocess
import tempfile
import time

WINDOW = 20000  # admin/audit_query.h kAuditContainsWindow
MAX = 2**63 - 1
ACTIONS = ["http.chat_completions", "http.models", "auth.login", "policy.update", "http.admin_audit"]
BASE = ("SELECT r.*, c.prompt, c.completion FROM audit_records r LEFT JOIN audit_content c ON c.seq = r.seq "
        "WHERE r.seq >= ?1 AND r.seq < ?2 AND r.time_ms >= ?3 AND r.time_ms < ?4")
LIKE = " AND (" + " OR ".join("%s LIKE ?5 ESCAPE '\\'" % c for c in
                              ("r.actor", "r.request_id", "r.target", "r.client_request_id")) + \
       " OR r.actor IN (SELECT value FROM json_each(?6)))"


def fill(con, records):
    cols = [r[1] for r in con.execute("PRAGMA table_info(audit_records)")]
    row = dict(zip(cols, con.execute("SELECT * FROM audit_records ORDER BY seq DESC LIMIT 1").fetchone()))
    rows = []
    for seq in range(row["seq"] + 1, records):
        r = dict(row, seq=seq, time_ms=row["time_ms"] + seq, actor="key_%024x" % (seq % 500),
                 request_id="%024x" % random.getrandbits(96), action=ACTIONS[seq % 5], target="",
                 client_request_id="client-%d" % seq)
        rows.append(tuple(r[c] for c in cols))
    con.executemany("INSERT INTO audit_records(%s) VALUES(%s)" % (",".join(cols), ",".join("?" * len(cols))), rows)
    con.commit()


def timed(con, name, sql, params):
    best, found = None, 0
    for _ in range(5):
        start = time.perf_counter()
        found = len(con.execute(sql, params).fetchall())
        ms = (time.perf_counter() - start) * 1000
        best = ms if best is None else min(best, ms)
    print("%-58s %5d rows %8.1f ms" % (name, found, best))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench-audit", required=True, help="path of kimi-bench-audit")
    parser.add_argument("--records", type=int, default=100000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kimi-audit-search-") as tmp:
        subprocess.run([args.bench_audit, "--dir", tmp, "--seconds", "0.2", "--producers", "1", "--work-us", "0"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        con = sqlite3.connect(tmp + "/audit.db")
        fill(con, args.records)
        count, top = con.execute("SELECT count(*), max(seq) FROM audit_records").fetchone()
        print("records: %d, SQLite %s" % (count, sqlite3.sqlite_version))
        keys = json.dumps(["key_%024x" % k for k in (7, 9, 11)])
        timed(con, "newest page, no filter", BASE + " ORDER BY r.seq DESC LIMIT 101", (0, MAX, -MAX, MAX))
        timed(con, "key name (3 key ids), newest page",
              BASE + " AND r.actor IN (SELECT value FROM json_each(?5)) ORDER BY r.seq DESC LIMIT 101",
              (0, MAX, -MAX, MAX, keys))
        timed(con, "q matching nothing, one window (a page)", BASE + LIKE + " ORDER BY r.seq DESC LIMIT 101",
              (top + 1 - WINDOW, top + 1, -MAX, MAX, "%no-such-text%", "[]"))
        timed(con, "q matching nothing, whole log (not done)", BASE + LIKE + " ORDER BY r.seq DESC LIMIT 101",
              (0, MAX, -MAX, MAX, "%no-such-text%", "[]"))
        timed(con, "q matching one record in five, one window", BASE + LIKE + " ORDER BY r.seq DESC LIMIT 101",
              (top + 1 - WINDOW, top + 1, -MAX, MAX, "%5%", "[]"))
        start, actions, after = time.perf_counter(), [], ""
        while True:
            action = con.execute("SELECT min(action) FROM audit_records WHERE action > ?", (after,)).fetchone()[0]
            if action is None:
                break
            actions.append(action)
            after = action
        print("%-58s %5d rows %8.1f ms" % ("distinct actions", len(actions), (time.perf_counter() - start) * 1000))


if __name__ == "__main__":
    main()
