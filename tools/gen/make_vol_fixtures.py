#!/usr/bin/python3
"""Writes the array-reader fixtures of tests/unit/test_volume.c into tests/fixtures/vol/ with
the real writers (nibabel for NIfTI, numpy for npy / npz), plus broken copies, and
expected.txt: one line per array

    FILE MEMBER NDIM DIM... DTYPE INTEGER N VALUE...

(MEMBER '-' when none; DIM fastest-varying first; VALUE as %.17g of what the writer was given,
or for the scaled NIfTI map of raw * scl_slope + scl_inter as nibabel reads them back).
Run: /usr/bin/python3 tools/gen/make_vol_fixtures.py  (deterministic: fixed seed, fixed values)."""
import gzip
import io
import os
import struct
import zipfile

import nibabel as nib
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'fixtures', 'vol')
rng = np.random.default_rng(12)
lines = []


def fmt(x):
    return '%.17g' % x


def expect(name, member, dims, dtype, integer, values):
    vals = [fmt(float(v)) for v in values]
    lines.append(' '.join([name, member or '-', str(len(dims))] + [str(d) for d in dims]
                          + [dtype, str(integer), str(len(vals))] + vals))


def path(name):
    return os.path.join(OUT, name)


def affine():
    a = np.eye(4)
    a[:3, :3] = [[0.9, 0.1, 0.0], [-0.1, 1.1, 0.0], [0.0, 0.0, 2.5]]
    a[:3, 3] = [-90.5, 12.25, 3.0]
    return a


def nifti(name, data, cls=nib.Nifti1Image, header=None, dims=None):
    img = cls(data, affine(), header=header)
    img.set_data_dtype(np.asarray(data).dtype)      # a header given carries its own (float32)
    nib.save(img, path(name))
    flat = np.asarray(data).reshape(-1, order='F')          # NIfTI: first axis fastest
    dt = np.asarray(data).dtype
    expect(name, None, dims or list(data.shape), dt.name, int(dt.kind in 'iu'), flat)


# ---- NIfTI ----------------------------------------------------------------------------------
shape = (3, 4, 5)
f32 = rng.random(shape, dtype=np.float32)
nifti('n1_f32.nii', f32)
nifti('n1_f64.nii.gz', rng.random(shape))
nifti('n2_f32.nii.gz', f32, cls=nib.Nifti2Image)
nifti('n2_i16.nii', np.arange(-30, 30, dtype=np.int16).reshape(shape), cls=nib.Nifti2Image)
nifti('n1_u8.nii.gz', rng.integers(0, 5, shape).astype(np.uint8))
nifti('n1_be_f32.nii', f32, header=nib.Nifti1Header(endianness='>'))
nifti('n1_be_i16.nii.gz', np.arange(-30, 30, dtype=np.int16).reshape(shape),
      header=nib.Nifti1Header(endianness='>'))
c4 = rng.random((3, 4, 5, 2), dtype=np.float32)
nifti('n1_4d.nii.gz', c4)
nifti('n1_5d.nii.gz', c4.reshape(3, 4, 5, 1, 2), dims=[3, 4, 5, 2])   # MONAI's (X, Y, Z, 1, C)

# an int16 map with scaling, as nibabel writes float data into an int16 file
fl = rng.random(shape) * 7.0 - 2.0
img = nib.Nifti1Image(fl, affine())
img.set_data_dtype(np.int16)
nib.save(img, path('n1_i16_scl.nii.gz'))
back = nib.load(path('n1_i16_scl.nii.gz'))
raw = np.asarray(back.dataobj.get_unscaled()).astype(np.float64)
slope, inter = float(back.dataobj.slope), float(back.dataobj.inter)   # the header's float32s
assert np.isfinite(slope) and slope not in (0.0, 1.0) and inter != 0.0, (slope, inter)
expect('n1_i16_scl.nii.gz', None, list(shape), 'int16', 0,
       (raw * slope + inter).reshape(-1, order='F'))

# qform only (sform_code 0): the affine comes from the quaternion
img = nib.Nifti1Image(f32, None)
img.set_qform(affine(), code=1)
img.set_sform(None, code=0)
nib.save(img, path('n1_qform.nii'))
with open(path('n1_qform.affine'), 'w') as f:
    q = nib.load(path('n1_qform.nii')).header.get_qform()
    f.write(' '.join(fmt(x) for x in q[:3].reshape(-1)) + '\n')

nib.save(nib.Nifti1Image(np.zeros((2, 2, 2), np.complex64), affine()), path('n1_complex.nii'))
rgb = np.zeros((2, 2, 2), dtype=[('R', 'u1'), ('G', 'u1'), ('B', 'u1')])
nib.save(nib.Nifti1Image(rgb, affine()), path('n1_rgb.nii'))

# broken NIfTI: cut inside the data; a flipped byte inside the deflate stream (zlib decodes
# 32 KiB ahead, so in a small file that is found on opening); a bigger map (64,000 voxels that
# compress to a few hundred bytes) cut short and with a wrong CRC, found by the reads
plain = open(path('n1_f32.nii'), 'rb').read()
open(path('trunc.nii'), 'wb').write(plain[:len(plain) - 40])                      # 10 values short
gzd = open(path('n1_f64.nii.gz'), 'rb').read()
bad = bytearray(gzd)
bad[len(bad) - 30] ^= 0xff
open(path('corrupt.nii.gz'), 'wb').write(bytes(bad))
i, j, k = np.meshgrid(np.arange(40), np.arange(40), np.arange(40), indexing='ij')
nib.save(nib.Nifti1Image(((i // 10 + j // 10 + k // 10) % 5).astype(np.uint8), affine()), path('big.nii.gz'))
big = open(path('big.nii.gz'), 'rb').read()
cut = big[:len(big) * 2 // 3]
open(path('trunc.nii.gz'), 'wb').write(cut)
import zlib
got = len(zlib.decompressobj(31).decompress(cut)) - 352     # what a reader can decode
with open(path('trunc.nii.gz.count'), 'w') as f:
    f.write('%d\n' % got)
bad = bytearray(big)
bad[-8] ^= 0x01                                              # the gzip trailer's CRC32
open(path('crc.nii.gz'), 'wb').write(bytes(bad))
open(path('notnifti.nii'), 'wb').write(b'hello, this is not a NIfTI header' + bytes(400))


# NIfTI headers that lie about sizes: valid files with one field patched (the field's offset in
# the NIfTI-1 / NIfTI-2 layout, in the file's byte order). calscope refuses them before
# nifti_clib sees them (a NIfTI-2 dim[0] of 2^40 overflowed nifti_clib's stack).
def patched(src, dst, edits, gz=False):
    raw = open(path(src), 'rb').read()
    raw = bytearray(gzip.decompress(raw) if gz else raw)
    for off, fmt_, value in edits:
        struct.pack_into(fmt_, raw, off, value)
    data = gzip.compress(bytes(raw), mtime=0) if gz else bytes(raw)
    open(path(dst), 'wb').write(data)
    return len(data)


patched('n2_i16.nii', 'n2_dim0_huge.nii', [(16, '<q', 1 << 40)])
patched('n2_f32.nii.gz', 'n2_dim0_neg.nii.gz', [(16, '<q', -5)], gz=True)
patched('n1_be_f32.nii', 'n1_be_dim0.nii', [(40, '>h', 8)])
patched('n1_f32.nii', 'n1_dim_neg.nii', [(44, '<h', -4)])
patched('n2_f32.nii.gz', 'n2_dims_huge.nii.gz', [(24, '<q', 1 << 20), (32, '<q', 1 << 20), (40, '<q', 1 << 20)],
        gz=True)
size = patched('n1_f64.nii.gz', 'n1_dims_gz.nii.gz', [(44, '<h', 30000)], gz=True)
assert 352 + 3 * 30000 * 5 * 8 > 1032 * size, size     # more than deflate can expand the file to
patched('n1_f32.nii', 'n1_voxoff_low.nii', [(108, '<f', 100.0)])
patched('n1_f32.nii', 'n1_voxoff_frac.nii', [(108, '<f', 352.5)])
patched('n2_i16.nii', 'n2_voxoff_far.nii', [(168, '<q', 1000000)])
patched('n1_f32.nii', 'n1_dtype_unknown.nii', [(70, '<h', 77)])
patched('n1_f32.nii', 'n1_bitpix.nii', [(72, '<h', 16)])
patched('n1_f32.nii', 'n1_magic.nii', [(344, '4s', b'ni1')])
open(path('n1_short.nii'), 'wb').write(plain[:200])

# the same NIfTI through other gzip writers (the reader inflates with ISA-L): Python's gzip at
# levels 1 and 9, ISA-L's own igzip, and three concatenated members (one split inside the header)
def same_values(src, dst):
    line = next(x for x in lines if x.startswith(src + ' '))
    lines.append(dst + line[len(src):])


raw64 = gzip.decompress(open(path('n1_f64.nii.gz'), 'rb').read())
for level in (1, 9):
    open(path('n1_gz%d.nii.gz' % level), 'wb').write(gzip.compress(raw64, compresslevel=level, mtime=0))
    same_values('n1_f64.nii.gz', 'n1_gz%d.nii.gz' % level)
import subprocess
open(path('n1_igzip.nii.gz'), 'wb').write(
    subprocess.run(['igzip', '-c', '-n'], input=raw64, stdout=subprocess.PIPE, check=True).stdout)
same_values('n1_f64.nii.gz', 'n1_igzip.nii.gz')
open(path('n1_members.nii.gz'), 'wb').write(b''.join(
    gzip.compress(raw64[a:b], mtime=0) for a, b in [(0, 100), (100, 400), (400, len(raw64))]))
same_values('n1_f64.nii.gz', 'n1_members.nii.gz')
# a flipped byte deep in the deflate stream of incompressible data (found by the reads)
noise = nib.Nifti1Image(np.random.default_rng(5).random((24, 24, 24), dtype=np.float32), affine())
nib.save(noise, path('noise.nii.gz'))
bad = bytearray(open(path('noise.nii.gz'), 'rb').read())
os.remove(path('noise.nii.gz'))
bad[len(bad) * 3 // 4] ^= 0x10
open(path('flip.nii.gz'), 'wb').write(bytes(bad))

# ---- npy --------------------------------------------------------------------------------------
descrs = ['<f2', '<f4', '<f8', '|u1', '|i1', '<i2', '<u2', '<i4', '<u4', '<i8', '<u8', '|b1',
          '>f4', '>i2', '>f8']
special = {
    'f2': [0.0, -0.0, 0.25, 0.5, 2.0 ** -24, -(2.0 ** -14), 65504.0, 1.0 / 3.0, 0.1, -7.5, 1.0, 0.999],
    'i1': [-128, 127], 'u1': [0, 255], 'i2': [-32768, 32767], 'u2': [65535, 0],
    'i4': [-2 ** 31, 2 ** 31 - 1], 'u4': [2 ** 32 - 1, 0], 'i8': [-2 ** 62, 2 ** 53],
    'u8': [2 ** 63, 2 ** 53 + 2], 'b1': [True, False],
}
for d in descrs:
    dt = np.dtype(d)
    key = d[1:]
    if dt.kind == 'f':
        a = (rng.random(24) * 4 - 2).astype(dt)
    elif dt.kind == 'b':
        a = rng.integers(0, 2, 24).astype(dt)
    else:
        info = np.iinfo(dt)
        a = rng.integers(max(info.min, -1000), min(info.max, 1000), 24).astype(dt)
    sp = special.get(key, [])
    a[:len(sp)] = np.array(sp, dtype=dt)
    a = a.reshape(2, 3, 4)
    name = 'a_%s%s.npy' % ({'<': 'le', '>': 'be', '|': ''}[d[0]], key)
    np.save(path(name), a)
    assert open(path(name), 'rb').read(128).find(repr(d).encode()) > 0, d
    expect(name, None, [4, 3, 2], 'bool' if dt.kind == 'b' else dt.name.replace('bool', 'bool'),
           int(dt.kind in 'iub'), a.reshape(-1).astype(np.float64))

fo = np.asfortranarray(rng.random((3, 4, 2), dtype=np.float32))
np.save(path('fortran_f4.npy'), fo)
expect('fortran_f4.npy', None, [3, 4, 2], 'float32', 0, fo.reshape(-1, order='F'))
np.save(path('scalar_f8.npy'), np.float64(0.125))
expect('scalar_f8.npy', None, [1], 'float64', 0, [0.125])
v1 = rng.random(7)
np.save(path('vec_f8.npy'), v1)
expect('vec_f8.npy', None, [7], 'float64', 0, v1)
for ver in [(2, 0), (3, 0)]:
    name = 'v%d_f4.npy' % ver[0]
    with open(path(name), 'wb') as f:
        np.lib.format.write_array(f, f32.reshape(12, 5), version=ver)
    assert open(path(name), 'rb').read(8)[6] == ver[0]
    expect(name, None, [5, 12], 'float32', 0, f32.reshape(-1))

# broken npy
good = open(path('a_lef4.npy'), 'rb').read()
open(path('badmagic.npy'), 'wb').write(b'\x93NUMPX' + good[6:])
open(path('trunc.npy'), 'wb').write(good[:len(good) - 10])          # 2.5 values short: 21 of 24
open(path('badver.npy'), 'wb').write(good[:6] + b'\x04' + good[7:])
open(path('badkey.npy'), 'wb').write(good.replace(b"'descr'", b"'descX'"))
np.save(path('complex.npy'), np.zeros(3, np.complex64))
np.save(path('struct.npy'), np.zeros(3, dtype=[('a', '<f4'), ('b', '<i2')]))
np.save(path('unicode.npy'), np.array(['ab', 'c']))

# ---- npz --------------------------------------------------------------------------------------
probs = rng.random((2, 3, 4, 5), dtype=np.float32)           # nnU-Net: (C, z, y, x)
other = np.arange(6, dtype=np.int64)
np.savez(path('stored.npz'), probabilities=probs, other=other)
expect('stored.npz', 'probabilities.npy', [5, 4, 3, 2], 'float32', 0, probs.reshape(-1))
expect('stored.npz', 'other.npy', [6], 'int64', 1, other)
h16 = np.array(special['f2'] * 5, dtype=np.float16).reshape(5, 12)
np.savez_compressed(path('deflated_f16.npz'), softmax=h16, seg=other)     # nnU-Net v1
expect('deflated_f16.npz', 'softmax.npy', [12, 5], 'float16', 0, h16.reshape(-1).astype(np.float64))
np.savez_compressed(path('single.npz'), x=fo)
expect('single.npz', 'x.npy', [3, 4, 2], 'float32', 0, fo.reshape(-1, order='F'))
np.savez(path('two.npz'), a=other, b=other)


class Pipe(io.RawIOBase):
    """A write-only stream that cannot seek, as a pipe: zipfile then writes data descriptors."""
    def __init__(self):
        self.buf = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.buf += b
        return len(b)

    def seek(self, *a):
        raise OSError('not seekable')

    def tell(self):
        raise OSError('not seekable')


for name, fn in [('dd_stored.npz', np.savez), ('dd_deflated.npz', np.savez_compressed)]:
    p = Pipe()
    fn(p, probabilities=probs)
    open(path(name), 'wb').write(bytes(p.buf))
    with zipfile.ZipFile(path(name)) as z:
        assert all(i.flag_bits & 8 for i in z.infolist()), name
    expect(name, 'probabilities.npy', [5, 4, 3, 2], 'float32', 0, probs.reshape(-1))

# zip64: numpy forces zip64 extra fields on every member; check they are there
for name in ['stored.npz', 'deflated_f16.npz', 'dd_deflated.npz']:
    raw = open(path(name), 'rb').read()
    assert raw[26:28] != b'\0\0' and struct.unpack('<H', raw[28:30])[0] >= 20, name  # extra field
    assert b'\x01\x00' in raw[30 + struct.unpack('<H', raw[26:28])[0]:][:4], name     # zip64 tag

# broken npz: cut short; a flipped data byte in a stored member (CRC); in a deflated one
st = open(path('stored.npz'), 'rb').read()
open(path('trunc.npz'), 'wb').write(st[:len(st) // 2])
inf = zipfile.ZipFile(path('stored.npz')).getinfo('probabilities.npy')
hdr_extra = struct.unpack('<H', st[inf.header_offset + 28:inf.header_offset + 30])[0]
data_off = inf.header_offset + 30 + struct.unpack('<H', st[inf.header_offset + 26:inf.header_offset + 28])[0] + hdr_extra
bad = bytearray(st)
bad[data_off + 200] ^= 0x01
open(path('crc.npz'), 'wb').write(bytes(bad))
dz = open(path('dd_deflated.npz'), 'rb').read()
inf = zipfile.ZipFile(path('dd_deflated.npz')).getinfo('probabilities.npy')
start = inf.header_offset + 30 + sum(struct.unpack('<HH', dz[inf.header_offset + 26:inf.header_offset + 30]))
bad = bytearray(dz)
bad[start + inf.compress_size - 50] ^= 0xff                   # late in the deflate stream: the data
open(path('corrupt.npz'), 'wb').write(bytes(bad))
# a consistent archive whose member holds fewer values than its npy header says (CRC fine)
buf = io.BytesIO()
np.save(buf, np.arange(100, dtype=np.float64))
with zipfile.ZipFile(path('short.npz'), 'w', zipfile.ZIP_DEFLATED) as z:
    zi = zipfile.ZipInfo('probabilities.npy')                          # 1980 date: same bytes each run
    zi.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(zi, buf.getvalue()[:-400])                               # 50 of 100 values
open(path('notzip.npz'), 'wb').write(b'\x93NUMPY this is an npy, not a zip' + bytes(40))
np.savez(path('empty.npz'))                                      # no arrays: the end record alone
# headers asking for 4e9 values of a few bytes: refused at the open, before anything is allocated
huge = {'descr': '|u1', 'fortran_order': False, 'shape': (2000, 2000, 1000)}
buf = io.BytesIO()
np.lib.format.write_array_header_1_0(buf, huge)
open(path('huge.npy'), 'wb').write(buf.getvalue() + bytes(17))
for name, method in [('huge_stored.npz', zipfile.ZIP_STORED), ('huge_deflated.npz', zipfile.ZIP_DEFLATED)]:
    with zipfile.ZipFile(path(name), 'w', method) as z:
        zi = zipfile.ZipInfo('probabilities.npy')                      # 1980 date: same bytes each run
        zi.compress_type = method
        z.writestr(zi, buf.getvalue() + bytes(17))
# a deflated member whose CRC-32 (local header and central directory) is off by one bit
dz = bytearray(open(path('deflated_f16.npz'), 'rb').read())
inf = zipfile.ZipFile(path('deflated_f16.npz')).getinfo('softmax.npy')
cd = dz.index(b'PK\x01\x02')
assert struct.unpack_from('<I', dz, inf.header_offset + 14)[0] == inf.CRC == struct.unpack_from('<I', dz, cd + 16)[0]
for off in (inf.header_offset + 14, cd + 16):
    struct.pack_into('<I', dz, off, inf.CRC ^ 1)
open(path('crc_deflated.npz'), 'wb').write(bytes(dz))
# members compressed with what numpy never writes: zipfile's bzip2 and lzma
for name, method in [('bzip2.npz', zipfile.ZIP_BZIP2), ('lzma.npz', zipfile.ZIP_LZMA)]:
    with zipfile.ZipFile(path(name), 'w', method) as z:
        zi = zipfile.ZipInfo('probabilities.npy')
        zi.compress_type = method
        buf = io.BytesIO()
        np.save(buf, probs)
        z.writestr(zi, buf.getvalue())
open(path('noext.dat'), 'wb').write(b'x')
for name in ['dir.nii.gz', 'dir.npz']:             # directories named like array files
    os.makedirs(path(name), exist_ok=True)
    open(os.path.join(path(name), '.keep'), 'w').close()

with open(path('expected.txt'), 'w') as f:
    f.write('\n'.join(lines) + '\n')
