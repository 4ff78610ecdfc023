#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layers of lib/, bottom to top, and the check that none reaches up.

Each folder under lib/ is one layer (its subfolders belong to it).  A file may
include the private headers of its own layer and of the layers below it, and
any public header (include/: "topocoll.h", "topocoll/..."), which is the
library's surface and belongs to no layer.  Given the library's object files,
the check also follows calls: an object of one layer may not use a symbol
defined by an object of a layer above it (a public tc_ function included:
a call through the public surface is still a call up).

It prints every include or call that reaches up and every circle between
folders, and fails on any reach up that ALLOWED does not name.  A circle
between folders always contains a reach up, so it fails unless each of its
reaches up is allowed.  Given the objects too, it also fails on an ALLOWED
entry that no longer occurs, so that the list only shrinks.

Usage: check_layers.py LIB_DIR [OBJECT_DIR]
"""
import os
import re
import subprocess
import sys

# Bottom to top.
LAYERS = [
    'base',       # error codes and messages
    'topo',       # topology graphs, routes, embeddings
    'model',      # parameters, clocks, closed forms, bounds
    'fibre',      # fibres and the run queue that schedules them
    'core',       # channels, park/wake, the team object, emulated sleeps
    'p2p',        # messages, progress, the watchdog
    'run',        # starting and joining ranks, attach/detach
    'sched',      # the schedule IR, simulation, plans
    'coll',       # entry path, registry, selection, cache, generators
    'calibrate',  # measuring, fitting, the calibrated prediction
    'mpi',        # teams over MPI processes (libtopocoll-mpi)
]
RANK = {name: i for i, name in enumerate(LAYERS)}

# Known reaches up, each to be removed: ('include', file, header) or
# ('call', object's folder, symbol's folder, symbol).
ALLOWED = set()

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path, lib):
    rel = os.path.relpath(path, lib)
    return rel.split(os.sep)[0]


def includes(lib):
    """(file relative to lib, its folder, header, header's folder or None)"""
    for root, _, files in os.walk(lib):
        for name in sorted(files):
            if not name.endswith(('.c', '.h', '.def', '.S')):
                continue
            path = os.path.join(root, name)
            folder = layer_of(path, lib)
            with open(path, encoding='utf-8') as f:
                for line in f:
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    hdr = m.group(1)
                    if hdr == 'topocoll.h' or hdr.startswith('topocoll/'):
                        hfolder = None          # public
                    elif '/' in hdr:
                        hfolder = hdr.split('/')[0]
                    else:
                        hfolder = folder        # beside the file
                    yield os.path.relpath(path, lib), folder, hdr, hfolder


def symbols(lib, objdir):
    """(object's folder, defined symbols, used symbols) per object file"""
    # meson names the object of lib/<folder>/<file> lib_<folder>_<file>.o;
    # only those of today's sources count (a build folder keeps the objects
    # of files since moved or deleted).
    want = {}
    for root, _, files in os.walk(lib):
        for name in files:
            if name.endswith(('.c', '.S')):
                rel = os.path.relpath(os.path.join(root, name), lib)
                want['lib_' + rel.replace(os.sep, '_') + '.o'] = layer_of(
                    os.path.join(root, name), lib)
    objs = [o for o in sorted(os.listdir(objdir)) if o in want]
    if not objs:
        return
    # One nm for every object (-A: each line starts with "object: ").
    out = subprocess.run(['nm', '-P', '-A'] + objs, cwd=objdir,
                         check=True, capture_output=True, text=True).stdout
    syms = {o: (set(), set()) for o in objs}
    for line in out.splitlines():
        o, _, rest = line.partition(': ')
        f = rest.split()
        if o not in syms or len(f) < 2:
            continue
        defined, used = syms[o]
        if f[1] == 'U':
            used.add(f[0])
        elif f[1] in 'TDBRVWGS':
            defined.add(f[0])
    for o in objs:
        yield want[o], syms[o][0], syms[o][1]


def circles(edges):
    """Strongly connected sets of more than one folder (Tarjan)."""
    nodes = sorted({a for a, _ in edges} | {b for _, b in edges})
    succ = {n: sorted({b for a, b in edges if a == n}) for n in nodes}
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp, key=lambda n: RANK.get(n, -1)))

    for n in nodes:
        if n not in index:
            visit(n)
    return out


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    lib = sys.argv[1]
    bad, seen, edges = [], set(), set()

    for f, folder, hdr, hfolder in includes(lib):
        for name in (folder, hfolder):
            if name is not None and name not in RANK:
                bad.append('%s: folder lib/%s/ has no place in LAYERS' % (f, name))
        if hfolder is None or hfolder == folder:
            continue
        edges.add((folder, hfolder))
        if RANK.get(hfolder, -1) > RANK.get(folder, -1):
            key = ('include', f, hdr)
            seen.add(key)
            msg = 'lib/%s (%s) includes "%s" (%s, above)' % (f, folder, hdr, hfolder)
            print(('allowed: ' if key in ALLOWED else 'VIOLATION: ') + msg)
            if key not in ALLOWED:
                bad.append(msg)

    if len(sys.argv) == 3:
        objdir = sys.argv[2]
        if not os.path.isdir(objdir):
            print('no object folder %s' % objdir, file=sys.stderr)
            return 2
        objs = list(symbols(lib, objdir))
        if not objs:
            print('no lib_*.o objects in %s' % objdir, file=sys.stderr)
            return 2
        home = {}
        for folder, defined, _ in objs:
            for s in defined:
                home.setdefault(s, folder)
        calls = set()
        for folder, _, used in objs:
            for s in used:
                to = home.get(s)
                if to is None or to == folder:
                    continue
                edges.add((folder, to))
                if RANK.get(to, -1) > RANK.get(folder, -1):
                    calls.add((folder, to, s))
        for folder, to, s in sorted(calls, key=lambda c: (RANK.get(c[0], -1), c[1], c[2])):
            key = ('call', folder, to, s)
            seen.add(key)
            msg = 'lib/%s/ calls %s of lib/%s/ (above)' % (folder, s, to)
            print(('allowed: ' if key in ALLOWED else 'VIOLATION: ') + msg)
            if key not in ALLOWED:
                bad.append(msg)

    for c in circles(edges):   # reported; each contains a reach up
        print('circle between folders: %s' % ' <-> '.join(c))
    # Stale entries only on the whole check: includes alone do not see calls.
    for key in sorted(ALLOWED - seen) if len(sys.argv) == 3 else []:
        bad.append('ALLOWED names %s, which no longer occurs: remove it' % (key,))

    for msg in bad:
        print('not ok: ' + msg, file=sys.stderr)
    print('%d reach(es) up not allowed' % len(bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
