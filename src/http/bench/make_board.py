#!/usr/bin/env python3
"""make_board.py DIR N: a board of N tickets (~20 events each, 1 in 10 awaiting approval) for
load tests of the HTTP API. Writes the logs directly (the format of spec/storage.md)."""
import json, os, sys, uuid

def main():
    root, n = sys.argv[1], int(sys.argv[2])
    os.makedirs(os.path.join(root, "tickets"), exist_ok=True)
    with open(os.path.join(root, "board.yaml"), "w") as f:
        f.write("prefix: PROJ\n")
    for i in range(1, n + 1):
        tid = f"PROJ-{i}"
        d = os.path.join(root, "tickets", tid)
        os.makedirs(d, exist_ok=True)
        lines = []
        seq = 1
        created = {"v": 1, "seq": seq, "id": uuid.uuid4().hex, "at": "2026-11-23T10:00:00.000Z",
                   "by": "human:gen", "type": "created", "ticket": tid,
                   "title": f"Generated ticket {i}", "description": "x" * 200,
                   "ticket_type": "task", "priority": i % 5, "labels": ["gen"], "parent": "",
                   "blocked_by": []}
        if i % 10 == 0:
            created["awaiting"] = "approval"
        lines.append(created)
        for k in range(19):
            seq += 1
            lines.append({"v": 1, "seq": seq, "id": uuid.uuid4().hex,
                          "at": "2026-11-23T10:00:%02d.000Z" % (k + 1), "by": "human:gen",
                          "type": "note", "text": f"note {k} of ticket {i}"})
        with open(os.path.join(d, "events.jsonl"), "w") as f:
            for e in lines:
                f.write(json.dumps(e, separators=(",", ":")) + "\n")

if __name__ == "__main__":
    main()
