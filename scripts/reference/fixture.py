"""Reading and writing nmt's test fixture files (tests/fixtures/*.bin).

A fixture is a list of named tensors that a C test loads and compares against.
The format is deliberately trivial so the C reader is a few dozen lines:

    8 bytes   magic "NMTFIX01"
    int32     record count
    records, each:
        int32   name_len
        bytes   name (name_len bytes, no NUL)
        int32   dtype (0 = float32, 1 = int32)
        int32   ndim
        int32   dims[ndim]
        data    prod(dims) elements of dtype, row-major (C order)

Every integer and float is little-endian. Scalars are stored with shape (1,).

    from fixture import write_fixture, read_fixture
    write_fixture("x.bin", [("dims", np.array([3, 5], np.int32)), ...])
    tensors = read_fixture("x.bin")      # dict name -> numpy array, file order
"""

import os
import struct
import sys

import numpy as np

MAGIC = b"NMTFIX01"
DTYPE_FLOAT32 = 0
DTYPE_INT32 = 1

# dtype code <-> little-endian numpy dtype
_CODE_TO_NP = {DTYPE_FLOAT32: np.dtype("<f4"), DTYPE_INT32: np.dtype("<i4")}


def _dtype_code(array):
    if array.dtype == np.float32:
        return DTYPE_FLOAT32
    if array.dtype == np.int32:
        return DTYPE_INT32
    raise TypeError(f"fixture: unsupported dtype {array.dtype}; use float32 or int32")


def write_fixture(path, records):
    """Write records, an iterable of (name, array-like) pairs, in that order.

    Arrays must already be float32 or int32 (no silent conversions: a float64
    array sneaking in is a bug in the caller). 0-d arrays are stored as shape (1,).
    Returns the number of bytes written.
    """
    records = [(name, np.asarray(a)) for name, a in records]
    names = [name for name, _ in records]
    if len(set(names)) != len(names):
        raise ValueError("fixture: duplicate record names")
    out = bytearray(MAGIC)
    out += struct.pack("<i", len(records))
    for name, a in records:
        code = _dtype_code(a)
        if a.ndim == 0:
            a = a.reshape(1)
        encoded = name.encode("utf-8")
        out += struct.pack("<i", len(encoded)) + encoded
        out += struct.pack("<ii", code, a.ndim)
        out += struct.pack(f"<{a.ndim}i", *a.shape)
        out += np.ascontiguousarray(a, dtype=_CODE_TO_NP[code]).tobytes()
    with open(path, "wb") as f:
        f.write(out)
    return len(out)


def read_fixture(path):
    """Read a fixture into a dict name -> numpy array (float32 or int32), in file order."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != MAGIC:
        raise ValueError(f"fixture: {path}: bad magic {data[:8]!r}")
    pos = 8

    def take(fmt):
        nonlocal pos
        values = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return values

    (count,) = take("<i")
    tensors = {}
    for _ in range(count):
        (name_len,) = take("<i")
        name = data[pos:pos + name_len].decode("utf-8")
        pos += name_len
        code, ndim = take("<ii")
        dims = take(f"<{ndim}i")
        dtype = _CODE_TO_NP[code]
        n = int(np.prod(dims, dtype=np.int64))
        end = pos + n * dtype.itemsize
        if end > len(data):
            raise ValueError(f"fixture: {path}: record {name!r} runs past end of file")
        tensors[name] = np.frombuffer(data[pos:end], dtype=dtype).reshape(dims).copy()
        pos = end
    if pos != len(data):
        raise ValueError(f"fixture: {path}: {len(data) - pos} trailing bytes")
    return tensors


def write_fixtures(out_dir, prefix, built):
    """Write each (name, records) of built as OUT_DIR/PREFIX_NAME.bin and read it back:
    True when every file holds exactly its records, else False (said on stderr)."""
    os.makedirs(out_dir, exist_ok=True)
    for name, records in built:
        path = os.path.join(out_dir, f"{prefix}_{name}.bin")
        size = write_fixture(path, records)
        back = read_fixture(path)
        if list(back) != [n for n, _ in records] or not all(
                np.array_equal(back[n], r) for n, r in records):
            print(f"{path}: does not read back identically", file=sys.stderr)
            return False
        print(f"wrote {path} ({size} bytes, {len(records)} records)")
    return True
