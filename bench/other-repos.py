#!/usr/bin/env python3
"""Code questions over other code bases, through the CLI.

    bench/other-repos.py TYCHORA WORKSPACE QUESTIONS REPO=SOURCE_ID...

QUESTIONS is a file of lines "repo<TAB>question<TAB>acceptable files"
(bench/queries/other-repos.tsv); each REPO=SOURCE_ID names the source a
repo was added as (tychora sources). Every question is searched within
its source (tychora search --json --limit 30 --source ID); the rank of a
question is that of its first acceptable file among the distinct files of
the hits, in order of first appearance, as bench/eval -set code ranks.
Prints each question's rank, the rank of the first hit from a change log
(HISTORY, CHANGES, CHANGELOG, NEWS), its first three files, then
success@1, MRR@10 and how many questions have a change log in their
first two hits, then the same per repository when there are several. bench/README.md ("Other code bases") has the set-up.
"""
import json
import subprocess
import sys


def main():
    tych, ws, tsv = sys.argv[1:4]
    srcs = dict(a.split("=", 1) for a in sys.argv[4:])
    rr, s1, cl12, n = [], 0, 0, 0
    per = {}
    for line in open(tsv):
        if line.startswith("#") or not line.strip():
            continue
        repo, q, want = line.rstrip("\n").split("\t")
        want = want.split(",")
        out = subprocess.run([tych, "--workspace", ws, "search", "--json", "--limit", "30",
                              "--source", srcs[repo], q], capture_output=True, text=True, check=True).stdout
        hits = json.loads(out)["hits"]
        files = []
        for h in hits:
            if h["path"] not in files:
                files.append(h["path"])
        rank = next((i + 1 for i, f in enumerate(files[:10]) if f in want), 0)
        changelog = next((i + 1 for i, h in enumerate(hits)
                          if h["path"].split("/")[-1].split(".")[0].lower() in ("history", "changes", "changelog", "news")), 0)
        n += 1
        rr.append(1 / rank if rank else 0)
        s1 += rank == 1
        cl12 += 0 < changelog <= 2
        per.setdefault(repo, []).append(rank)
        print("%3s %3s  %-8s %s | %s" % (rank or "-", changelog or "-", repo, q, ", ".join(files[:3])))
    print("questions %d  success@1 %d  MRR@10 %.3f  change log in the first two hits: %d" % (n, s1, sum(rr) / n, cl12))
    if len(per) > 1:
        for repo in sorted(per):
            ranks = per[repo]
            print("  %-11s %3d questions  success@1 %3d  MRR@10 %.3f" % (
                repo, len(ranks), sum(r == 1 for r in ranks), sum(1 / r for r in ranks if r) / len(ranks)))


if __name__ == "__main__":
    main()
