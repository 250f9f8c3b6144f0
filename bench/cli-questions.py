#!/usr/bin/env python3
"""Code questions through the CLI, as a user asks them.

    bench/cli-questions.py TYCHORA WORKSPACE QUESTIONS [LIMIT]

QUESTIONS is a file of lines "question<TAB>acceptable files" (the format
of shared/eval/code/go-dev.tsv and bench/queries/go-purpose.tsv, paths
relative to the indexed tree). Each question is searched with
`tychora search --json --limit LIMIT` (default 10) through the running
owner when there is one, else through the command's own; the rank of a
question is that of its first acceptable file among the distinct files of
the hits, as bench/eval -set code ranks. Prints each question's rank
and the seconds its command took, then success@1, MRR@10 and the median
seconds a command took.
"""
import json
import statistics
import subprocess
import sys
import time


def main():
    tych, ws, tsv = sys.argv[1:4]
    limit = sys.argv[4] if len(sys.argv) > 4 else "10"
    rr, s1, took = [], 0, []
    for line in open(tsv):
        if line.startswith("#") or not line.strip():
            continue
        q, want = line.rstrip("\n").split("\t")
        want = want.split(",")
        t0 = time.monotonic()
        out = subprocess.run([tych, "--workspace", ws, "search", "--json", "--limit", limit, "--", q],
                             capture_output=True, text=True, check=True).stdout
        took.append(time.monotonic() - t0)
        files = []
        for h in json.loads(out).get("hits", []):
            if h["path"] not in files:
                files.append(h["path"])
        rank = next((i + 1 for i, f in enumerate(files[:10]) if f in want), None)
        rr.append(1 / rank if rank else 0)
        s1 += rank == 1
        print(f"{rank or '-':>3}  {took[-1]:5.2f} s  {q}")
    print(f"questions {len(rr)}  success@1 {s1}  MRR@10 {sum(rr) / len(rr):.3f}  median {statistics.median(took):.2f} s a command")


if __name__ == "__main__":
    main()
