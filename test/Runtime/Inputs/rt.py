"""rt.py - builds hand-written loom-run artifacts and checks their outputs.

Used by the test/Runtime lit tests while the compiler cannot emit artifacts
yet. Re-implements the manifest's shard rule independently of libloomrt:
rank -> grid coords (row-major), shard index along a dim = row-major
linearisation of the coords on its split axes, slice = index * local size.

  rt.py add-make ART GRID SPLIT     artifact for Inputs/add.c
  rt.py add-check ART OUT [RANKS]   check y/k2 (RANKS: per-rank shards)
  rt.py coll-make ART GRID K        artifact for Inputs/collectives.c
  rt.py coll-check ART OUT          check every rank's collective outputs
  rt.py copy-make ART DTYPE SHAPE   artifact for Inputs/copy.c (+ inputs)
  rt.py edit ART PATH=JSON...       change manifest fields (a.0.b=...)
  rt.py npy FILE DTYPE SHAPE [F]    write a zero .npy (F: Fortran order)
  rt.py compare A B                 two tensor files hold the same tensor
  rt.py roundtrip DIR LOOMRUN COPY.C DTYPE...  format round trips
Each *-make writes ART/cflags, the -D flags to compile the program with.
GRID and SPLIT are JSON, e.g. '[2,2]' '[[0],[1]]'.
"""
import json
import os
import struct
import sys

import numpy as np

ONNX = {np.dtype('float32'): 1, np.dtype('uint8'): 2, np.dtype('int8'): 3,
        np.dtype('uint16'): 4, np.dtype('int16'): 5, np.dtype('int32'): 6,
        np.dtype('int64'): 7, np.dtype('bool'): 9, np.dtype('float16'): 10,
        np.dtype('float64'): 11, np.dtype('uint32'): 12,
        np.dtype('uint64'): 13}
FROM_ONNX = {v: k for k, v in ONNX.items()}
FROM_ONNX[16] = np.dtype('uint16')  # bfloat16 bits


def varint(v):
    out = b''
    v &= (1 << 64) - 1
    while v >= 0x80:
        out += bytes([(v & 0x7f) | 0x80])
        v >>= 7
    return out + bytes([v])


def write_pb(path, a, name='', typed=False):
    """A TensorProto with raw_data, or with typed (packed) fields."""
    a = np.ascontiguousarray(a)
    out = b''
    for d in a.shape:
        out += varint(1 << 3) + varint(d)
    out += varint(2 << 3) + varint(ONNX[a.dtype])
    if name:
        out += varint((8 << 3) | 2) + varint(len(name)) + name.encode()
    if not typed:
        raw = a.astype(a.dtype.newbyteorder('<')).tobytes()
        out += varint((9 << 3) | 2) + varint(len(raw)) + raw
    elif a.dtype == np.float32:
        raw = a.astype('<f4').tobytes()
        out += varint((4 << 3) | 2) + varint(len(raw)) + raw
    elif a.dtype == np.float64:
        raw = a.astype('<f8').tobytes()
        out += varint((10 << 3) | 2) + varint(len(raw)) + raw
    else:
        field = {np.dtype('int64'): 7, np.dtype('uint64'): 11,
                 np.dtype('uint32'): 11}.get(a.dtype, 5)
        vals = a.view(np.uint16) if a.dtype == np.float16 else a
        payload = b''.join(varint(int(v)) for v in vals.reshape(-1))
        out += varint((field << 3) | 2) + varint(len(payload)) + payload
    with open(path, 'wb') as f:
        f.write(out)


def read_pb(path):
    data = open(path, 'rb').read()
    pos, dims, dtype, raw, name = 0, [], None, None, ''

    def rv():
        nonlocal pos
        v, shift = 0, 0
        while True:
            b = data[pos]
            pos += 1
            v |= (b & 0x7f) << shift
            shift += 7
            if not b & 0x80:
                return v
    while pos < len(data):
        key = rv()
        field, wire = key >> 3, key & 7
        if wire == 0:
            v = rv()
            if field == 1:
                dims.append(v)
            elif field == 2:
                dtype = v
        elif wire == 2:
            n = rv()
            chunk = data[pos:pos + n]
            pos += n
            if field == 9:
                raw = chunk
            elif field == 8:
                name = chunk.decode()
        else:
            raise SystemExit('unexpected wire type in ' + path)
    a = np.frombuffer(raw, dtype=FROM_ONNX[dtype]).reshape(dims)
    return a, name


def load(path):
    return np.load(path) if path.endswith('.npy') else read_pb(path)[0]


def coords(rank, grid):
    c = []
    for g in reversed(grid):
        c.append(rank % g)
        rank //= g
    return list(reversed(c))


def shard(a, grid, split, rank):
    c = coords(rank, grid)
    idx = []
    for d, axes in enumerate(split):
        parts, i = 1, 0
        for ax in axes:
            i = i * grid[ax] + c[ax]
            parts *= grid[ax]
        n = a.shape[d] // parts
        idx.append(slice(i * n, (i + 1) * n))
    return a[tuple(idx)]


def members(rank, grid, axes):
    c = coords(rank, grid)
    size = int(np.prod([grid[a] for a in axes])) if axes else 1
    out = []
    for j in range(size):
        cc, rest = list(c), j
        for ax in reversed(axes):
            cc[ax] = rest % grid[ax]
            rest //= grid[ax]
        r = 0
        for d, g in enumerate(grid):
            r = r * g + cc[d]
        out.append(r)
    return out


def tensor(name, a, grid, split, **extra):
    local = list(shard(a, grid, split, 0).shape)
    dt = 'bfloat16' if extra.pop('bf16', False) else str(a.dtype)
    return dict(name=name, dtype=dt, shape=list(a.shape), local_shape=local,
                split=split, **extra)


def manifest(art, grid, inputs, weights, outputs):
    ranks = int(np.prod(grid)) if grid else 1
    m = {"format": "loom-artifact", "version": 1, "backend": "cpu",
         "library": "program.so", "entry": "loom_entry",
         "grid": {"name": "g", "shape": grid} if grid else None,
         "ranks": ranks, "inputs": inputs, "weights": weights,
         "outputs": outputs}
    os.makedirs(art, exist_ok=True)
    with open(os.path.join(art, 'manifest.json'), 'w') as f:
        json.dump(m, f, indent=1)


def add_data():
    x = np.arange(32, dtype=np.float32).reshape(4, 8) * 0.5
    w = np.arange(32, dtype=np.float32).reshape(4, 8) * 100.0
    s = np.array([0.25], dtype=np.float32)
    k = np.arange(32, dtype=np.int64).reshape(4, 8) * 1000003 - 7
    return x, w, s, k


def add_make(art, grid, split):
    x, w, s, k = add_data()
    os.makedirs(art, exist_ok=True)
    # model.bin: 4096 junk bytes, w, 16 junk bytes, s, k.
    blob = b'\xab' * 4096
    offs = {}
    for name, a in (('w', w), ('s', s), ('k', k)):
        offs[name] = len(blob)
        blob += a.tobytes() + b'\xcd' * 16
    with open(os.path.join(art, 'model.bin'), 'wb') as f:
        f.write(blob)
    np.save(os.path.join(art, 'x.npy'), x)
    write_pb(os.path.join(art, 'x.pb'), x, 'x')
    write_pb(os.path.join(art, 'x_typed.pb'), x, 'x', typed=True)
    weights = [tensor('w', w, grid, split, file='model.bin', offset=offs['w'],
                      role='parameter'),
               tensor('s', s, grid, [[]],
                      file=os.path.abspath(os.path.join(art, 'model.bin')),
                      offset=offs['s'], role='parameter'),
               tensor('k', k, grid, split, file='model.bin', offset=offs['k'])]
    manifest(art, grid, [tensor('x', x, grid, split)], weights,
             [tensor('y', x, grid, split), tensor('k2', k, grid, split)])
    cflags(art, '-DNUMEL=%d' % shard(x, grid, split, 0).size)


def add_check(art, out, every_rank):
    m = json.load(open(os.path.join(art, 'manifest.json')))
    grid = m['grid']['shape'] if m['grid'] else []
    x, w, s, k = add_data()
    y, k2 = x + w + s[0], 2 * k
    split = m['outputs'][0]['split']
    for name, want in (('y', y), ('k2', k2)):
        if every_rank:
            for r in range(m['ranks']):
                got = np.load(os.path.join(out, '%s.rank%d.npy' % (name, r)))
                exp = shard(want, grid, split, r)
                assert got.dtype == exp.dtype and got.shape == exp.shape, \
                    (name, r, got.shape, exp.shape)
                assert np.array_equal(got, exp), (name, r, got, exp)
        else:
            got = np.load(os.path.join(out, name + '.npy'))
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got, want), (name, got, want)
    print('add ok')


def coll_data(p, k):
    return (np.arange(p * k, dtype=np.float32) + 1).reshape(p, k)


def coll_make(art, grid, k):
    p = int(np.prod(grid)) if grid else 1
    g0 = grid[0] if grid else 1
    x = coll_data(p, k)
    split = [list(range(len(grid))), []]
    f32, b = np.float32, k // p
    outs = [('ag_all', f32, p * k), ('ag_rev', f32, p * k),
            ('ag_0', f32, g0 * k), ('a2a', f32, k), ('rs', f32, b),
            ('rs_min', np.int32, b), ('ar_max', f32, k),
            ('ar_prod', np.int64, k), ('ar_f16', np.float16, k),
            ('ar_bf16', np.uint16, k), ('ar_bool', np.bool_, k),
            ('ring', f32, k)]
    outputs = [tensor(n, np.zeros([c], dt), grid, [[]],
                      bf16=(n == 'ar_bf16')) for n, dt, c in outs]
    manifest(art, grid, [tensor('x', x, grid, split)], [], outputs)
    np.save(os.path.join(art, 'x.npy'), x)
    cflags(art, '-DNAX=%d -DP=%d -DK=%d -DG0=%d' % (len(grid), p, k, g0))


def bf16(a):
    return (np.asarray(a, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def coll_check(art, out):
    m = json.load(open(os.path.join(art, 'manifest.json')))
    grid = m['grid']['shape'] if m['grid'] else []
    p = m['ranks']
    k = m['inputs'][0]['shape'][1]
    b = k // p
    x = coll_data(p, k)
    allax = list(range(len(grid)))
    rev = [1, 0] if len(grid) == 2 else allax
    for r in range(p):
        def got(name):
            return np.load(os.path.join(out, '%s.rank%d.npy' % (name, r)))
        g_all = members(r, grid, allax)
        me = g_all.index(r)
        exp = {
            'ag_all': np.concatenate([x[q] for q in g_all]),
            'ag_rev': np.concatenate([x[q] for q in members(r, grid, rev)]),
            'ag_0': np.concatenate([x[q] for q in
                                    members(r, grid, allax[:1])]),
            'a2a': np.concatenate([x[q][me * b:(me + 1) * b] for q in g_all]),
            'rs': sum(x[q] for q in g_all)[me * b:(me + 1) * b],
            'rs_min': np.min([x[q].astype(np.int32) -
                              10 * (np.arange(k) // b) for q in g_all],
                             axis=0)[me * b:(me + 1) * b].astype(np.int32),
            'ar_max': np.max([x[q] for q in g_all], axis=0),
            'ar_prod': np.prod([x[q].astype(np.int64) % 3 + 1
                                for q in g_all], axis=0),
            'ar_f16': sum(x[q] / 2 for q in g_all).astype(np.float16),
            'ar_bf16': bf16(np.min([-x[q] for q in g_all], axis=0)),
            'ar_bool': np.any([x[q].astype(np.int64) % 5 == 0
                               for q in g_all], axis=0),
            'ring': x[(r - 1) % p],
        }
        for name, want in exp.items():
            g = got(name)
            assert g.dtype == want.dtype, (r, name, g.dtype, want.dtype)
            assert np.array_equal(g, want), (r, name, g, want)
    print('collectives ok on %d ranks' % p)


def copy_make(art, dtype, shape):
    a = (np.arange(int(np.prod(shape))) % 7 - 3).reshape(shape)
    a = a.astype(np.bool_ if dtype == 'bool' else dtype)
    os.makedirs(art, exist_ok=True)
    np.save(os.path.join(art, 'in.npy'), a)
    write_pb(os.path.join(art, 'in.pb'), a, 'in')
    write_pb(os.path.join(art, 'in_typed.pb'), a, 'in', typed=True)
    rep = [[] for _ in shape]
    manifest(art, [], [tensor('in', a, [], rep)], [],
             [tensor('out', a, [], rep)])
    cflags(art, '-DBYTES=%d' % a.nbytes)


def cflags(art, flags):
    """ART/cflags: the program's -D flags, for `cc @ART/cflags`."""
    with open(os.path.join(art, 'cflags'), 'w') as f:
        f.write(flags + '\n')


def edit(art, assignment):
    """Sets manifest field PATH=JSON (PATH dotted, list indices as ints)."""
    path, value = assignment.split('=', 1)
    mpath = os.path.join(art, 'manifest.json')
    m = json.load(open(mpath))
    keys = path.split('.')
    node = m
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    last = keys[-1]
    if isinstance(node, list):
        node[int(last)] = json.loads(value)
    else:
        node[last] = json.loads(value)
    json.dump(m, open(mpath, 'w'), indent=1)


def npy(path, dtype, shape, order='C'):
    a = np.zeros(shape, dtype=dtype, order=order)
    np.save(path, a)


def compare(a, b):
    x, y = load(a), load(b)
    assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype,
                                                       x.shape, y.shape)
    assert np.array_equal(x, y)
    return 'same'


def roundtrip(root, loom_run, src, dtypes):
    """Per dtype: .npy -> .pb -> .npy and typed .pb -> .npy via copy.c."""
    import subprocess
    for dt in dtypes:
        art = os.path.join(root, dt)
        copy_make(art, dt, [2, 3, 4])
        flags = open(os.path.join(art, 'cflags')).read().split()
        subprocess.check_call(['cc', '-shared', '-fPIC', src] + flags +
                              ['-o', os.path.join(art, 'program.so')])

        def run(i, o):
            subprocess.check_call([loom_run, art, '--quiet', '--inputs',
                                   os.path.join(art, i), '--outputs',
                                   os.path.join(art, o)])
        run('in.npy', 'o.pb')
        run('o.pb', 'o.npy')
        run('in_typed.pb', 't.npy')
        run('in.pb', 'r.pb')
        ref = os.path.join(art, 'in.npy')
        for out in ('o.pb', 'o.npy', 't.npy', 'r.pb'):
            compare(ref, os.path.join(art, out))
        assert read_pb(os.path.join(art, 'o.pb'))[1] == 'out'
        print(dt, 'ok')


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'add-make':
        add_make(args[0], json.loads(args[1]), json.loads(args[2]))
    elif cmd == 'add-check':
        add_check(args[0], args[1], len(args) > 2)
    elif cmd == 'coll-make':
        coll_make(args[0], json.loads(args[1]), int(args[2]))
    elif cmd == 'coll-check':
        coll_check(args[0], args[1])
    elif cmd == 'copy-make':
        copy_make(args[0], args[1], json.loads(args[2]))
    elif cmd == 'edit':
        for assignment in args[1:]:
            edit(args[0], assignment)
    elif cmd == 'npy':
        npy(args[0], args[1], json.loads(args[2]),
            args[3] if len(args) > 3 else 'C')
    elif cmd == 'compare':
        print(compare(args[0], args[1]))
    elif cmd == 'roundtrip':
        roundtrip(args[0], args[1], args[2], args[3:])
    else:
        raise SystemExit('unknown command ' + cmd)
