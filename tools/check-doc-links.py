#!/usr/bin/env python3
"""Checks the relative links of the project's markdown files: every [text](path#anchor) must name
a file (or folder) that exists, and an anchor must be a heading of that file (GitHub's slug
rule). Links to http(s) and mailto are not followed.

    tools/check-doc-links.py [--allow-missing PATH]... [FILE.md]...

Without FILEs: README.md, docs/*.md, samples/README.md and tests/fixtures/README.md. Prints one
line per broken link (FILE:LINE: target: reason) and exits 1 if there is any."""
import glob
import os
import re
import sys

LINK = re.compile(r'(?<!!)\[[^\]]*\]\(([^)\s]+)\)')
FENCE = re.compile(r'^\s*(```|~~~)')


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    s = heading.strip().lower()
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


def anchors(path):
    found, seen, fenced = set(), {}, False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = None if fenced else re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
            if m:
                base = slug(m.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f'{base}-{n}')
    return found


def links(path):
    fenced = False
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if fenced:
                continue
            for m in LINK.finditer(line):
                yield number, m.group(1)


def main(argv):
    allowed, files = set(), []
    it = iter(argv)
    for a in it:
        if a == '--allow-missing':
            allowed.add(os.path.normpath(next(it)))
        else:
            files.append(a)
    if not files:
        files = ['README.md'] + sorted(glob.glob('docs/*.md')) + \
                [p for p in ('samples/README.md', 'tests/fixtures/README.md') if os.path.exists(p)]
    bad = 0
    for md in files:
        for number, target in links(md):
            if re.match(r'^(https?:|mailto:)', target):
                continue
            path, _, anchor = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            if dest in allowed:
                continue
            if not os.path.exists(dest):
                print(f'{md}:{number}: {target}: no such file {dest}')
                bad += 1
            elif anchor and dest.endswith('.md') and anchor not in anchors(dest):
                print(f'{md}:{number}: {target}: no heading #{anchor} in {dest}')
                bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
