"""TensorFlow's V2 checkpoint format (the "tensor bundle"): ``<prefix>.index`` and
``<prefix>.data-00000-of-00001``, written and read without TensorFlow.

The index is a LevelDB table (SSTable), as tensorflow/core/lib/io/table_builder.cc writes it:

- data blocks of entries ``varint shared | varint non_shared | varint value_len | key[shared:] | value``
  (keys prefix-compressed against the previous key, a full key every ``RESTART_INTERVAL`` entries), then the
  restart offsets (uint32 each) and their count (uint32);
- every block is followed by a 5-byte trailer: compression type (0 = none; the bundle never compresses) and the
  masked CRC32C of block + type byte;
- a metaindex block (empty), an index block (key >= every key of a data block -> its handle ``varint offset |
  varint size``), and a 48-byte footer: the metaindex and index handles, zero padding to 40 bytes, and the magic
  ``0xdb4775248b80fb57`` (little-endian).

Its entries: ``""`` -> ``BundleHeaderProto(num_shards=1, endianness=LITTLE, version{producer: 1})``, then each
tensor name in sorted order -> ``BundleEntryProto(dtype, shape, shard_id=0, offset, size, crc32c)`` where the
checksum is the masked CRC32C of the tensor's bytes. The data file is the tensors' raw little-endian bytes, one
after another. String tensors are read (TF's layout: every element's varint64 length, the masked CRC32C of the
lengths as little-endian uint32s, then the elements' bytes; the entry's checksum runs over those uint32 lengths,
the 4 checksum bytes and the elements) but not written; sliced (partitioned) variables are refused.
"""
from __future__ import annotations

import os
import struct
from typing import Dict, Iterator, List, Mapping, Tuple

import google_crc32c
import numpy as np

from tfevents.proto import tensor_bundle_pb2, types_pb2

from tfevents.summaries.atomic import atomic_write
from tfevents.summaries.record import masked_crc32c
from ...framework.errors import DataLossError, NotFoundError

__all__ = ["MAGIC", "FOOTER_SIZE", "RESTART_INTERVAL", "build_table", "parse_table", "data_path", "index_path",
           "write_bundle", "BundleReader"]

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
RESTART_INTERVAL = 16
BLOCK_SIZE = 256 * 1024          # TF's table::Options().block_size
BLOCK_TRAILER_SIZE = 5
_u32 = struct.Struct("<I")
_footer_magic = struct.Struct("<Q")

_DTYPES = {
    types_pb2.DT_FLOAT: np.float32, types_pb2.DT_DOUBLE: np.float64, types_pb2.DT_HALF: np.float16,
    types_pb2.DT_INT8: np.int8, types_pb2.DT_INT16: np.int16, types_pb2.DT_INT32: np.int32,
    types_pb2.DT_INT64: np.int64, types_pb2.DT_UINT8: np.uint8, types_pb2.DT_UINT16: np.uint16,
    types_pb2.DT_UINT32: np.uint32, types_pb2.DT_UINT64: np.uint64, types_pb2.DT_BOOL: np.bool_,
    types_pb2.DT_COMPLEX64: np.complex64, types_pb2.DT_COMPLEX128: np.complex128,
}
_ENUMS = {np.dtype(v): k for k, v in _DTYPES.items()}


def _mask(crc: int) -> int:
    """TF's crc32c::Mask of a raw CRC32C value (what ``masked_crc32c`` applies to a whole buffer's CRC)."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def data_path(prefix: str) -> str:
    """The single data shard of checkpoint ``prefix``."""
    return prefix + ".data-00000-of-00001"


def index_path(prefix: str) -> str:
    """The index table of checkpoint ``prefix``."""
    return prefix + ".index"


# ---------------------------------------------------------------------------------------------------------
# varints and the SSTable


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_varint(buf: bytes, pos: int, end: int) -> Tuple[int, int]:
    result = shift = 0
    while pos < end and shift <= 63:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    raise ValueError("bad varint at offset %d" % pos)


class _BlockBuilder:
    def __init__(self, restart_interval: int):
        self.buf = bytearray()
        self.restarts = [0]
        self.count = 0
        self.last = b""
        self.interval = restart_interval

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self.count < self.interval:
            limit = min(len(key), len(self.last))
            while shared < limit and key[shared] == self.last[shared]:
                shared += 1
        else:
            self.restarts.append(len(self.buf))
            self.count = 0
        self.buf += _varint(shared) + _varint(len(key) - shared) + _varint(len(value))
        self.buf += key[shared:] + value
        self.last = key
        self.count += 1

    def size(self) -> int:
        return len(self.buf) + 4 * (len(self.restarts) + 1)

    def finish(self) -> bytes:
        return bytes(self.buf) + b"".join(_u32.pack(r) for r in self.restarts) + _u32.pack(len(self.restarts))


def _short_successor(key: bytes) -> bytes:
    """leveldb's BytewiseComparator::FindShortSuccessor: a short key >= ``key``."""
    for i, c in enumerate(key):
        if c != 0xFF:
            return key[:i] + bytes([c + 1])
    return key


def build_table(entries: List[Tuple[bytes, bytes]], block_size: int = BLOCK_SIZE) -> bytes:
    """The bytes of a LevelDB table holding ``entries`` (``(key, value)``, keys strictly increasing)."""
    out = bytearray()
    index: List[Tuple[bytes, bytes]] = []

    def emit(contents: bytes) -> bytes:
        handle = _varint(len(out)) + _varint(len(contents))
        out.extend(contents)
        out.extend(b"\x00" + _u32.pack(masked_crc32c(contents + b"\x00")))
        return handle

    block, prev = _BlockBuilder(RESTART_INTERVAL), None
    for key, value in entries:
        if prev is not None and key <= prev:
            raise ValueError("table keys must be strictly increasing: %r after %r" % (key, prev))
        block.add(key, value)
        prev = key
        if block.size() >= block_size:
            index.append((key, emit(block.finish())))
            block = _BlockBuilder(RESTART_INTERVAL)
    if block.count or not index:
        index.append((_short_successor(prev or b""), emit(block.finish())))
    meta_handle = emit(_BlockBuilder(RESTART_INTERVAL).finish())
    index_block = _BlockBuilder(1)
    for key, handle in index:
        index_block.add(key, handle)
    index_handle = emit(index_block.finish())
    footer = meta_handle + index_handle
    out.extend(footer + b"\x00" * (FOOTER_SIZE - 8 - len(footer)) + _footer_magic.pack(MAGIC))
    return bytes(out)


def _block(buf: bytes, handle: bytes, pos: int) -> Tuple[bytes, int]:
    """The checked contents of the block whose handle starts at ``handle[pos:]``, and the position after it."""
    offset, pos = _read_varint(handle, pos, len(handle))
    size, pos = _read_varint(handle, pos, len(handle))
    end = offset + size
    if end + BLOCK_TRAILER_SIZE > len(buf):
        raise ValueError("block at offset %d (%d bytes) runs past the end of the file" % (offset, size))
    contents, kind = buf[offset:end], buf[end]
    if _u32.unpack_from(buf, end + 1)[0] != masked_crc32c(buf[offset:end + 1]):
        raise ValueError("block checksum mismatch at offset %d" % offset)
    if kind != 0:
        raise ValueError("block at offset %d is compressed (type %d); only uncompressed tables are read"
                         % (offset, kind))
    return contents, pos


def _block_entries(block: bytes) -> Iterator[Tuple[bytes, bytes]]:
    if len(block) < 4:
        raise ValueError("block too short")
    n_restarts = _u32.unpack_from(block, len(block) - 4)[0]
    end = len(block) - 4 - 4 * n_restarts
    if end < 0:
        raise ValueError("bad restart count %d" % n_restarts)
    pos, key = 0, b""
    while pos < end:
        shared, pos = _read_varint(block, pos, end)
        non_shared, pos = _read_varint(block, pos, end)
        value_len, pos = _read_varint(block, pos, end)
        if shared > len(key) or pos + non_shared + value_len > end:
            raise ValueError("bad block entry")
        key = key[:shared] + block[pos:pos + non_shared]
        pos += non_shared
        yield key, block[pos:pos + value_len]
        pos += value_len


def parse_table(data: bytes, path: str = "<bytes>") -> List[Tuple[bytes, bytes]]:
    """Every ``(key, value)`` of a LevelDB table's bytes, in order; DataLossError naming ``path`` when the
    footer, a checksum or an entry is bad."""
    try:
        if len(data) < FOOTER_SIZE:
            raise ValueError("file is too short (%d bytes) to be an sstable" % len(data))
        if _footer_magic.unpack_from(data, len(data) - 8)[0] != MAGIC:
            raise ValueError("not an sstable (bad magic number)")
        footer = bytes(data[len(data) - FOOTER_SIZE:len(data) - 8])
        _, pos = _block(data, footer, 0)            # the metaindex block: checked, unused
        index, _ = _block(data, footer, pos)
        out: List[Tuple[bytes, bytes]] = []
        for _, handle in _block_entries(index):
            contents, _ = _block(data, handle, 0)
            out.extend(_block_entries(contents))
        return out
    except ValueError as e:
        raise DataLossError(None, "Unable to read checkpoint index %s: corrupted sstable: %s" % (path, e)) from None


# ---------------------------------------------------------------------------------------------------------
# the bundle


def write_bundle(prefix: str, values: Mapping[str, np.ndarray], block_size: int = BLOCK_SIZE) -> None:
    """Write ``{name: array}`` as TF V2 checkpoint ``prefix``: the data file, then the index (each replaced
    atomically; ``block_size`` is the index table's data block size)."""
    entries: List[Tuple[bytes, bytes]] = []
    header = tensor_bundle_pb2.BundleHeaderProto(num_shards=1, endianness=tensor_bundle_pb2.BundleHeaderProto.LITTLE)
    header.version.producer = 1
    entries.append((b"", header.SerializeToString()))
    chunks, offset = [], 0
    for name in sorted(values):
        arr = np.asarray(values[name])
        enum = _ENUMS.get(arr.dtype.newbyteorder("=") if arr.dtype.byteorder == ">" else arr.dtype)
        if enum is None:
            raise TypeError("Cannot save %r in a TF checkpoint: dtype %s is not supported (numeric and bool only)"
                            % (name, arr.dtype))
        raw = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
        entry = tensor_bundle_pb2.BundleEntryProto(dtype=enum, shard_id=0, offset=offset, size=len(raw),
                                                   crc32c=masked_crc32c(raw))
        entry.shape.SetInParent()
        for d in arr.shape:
            entry.shape.dim.add(size=d)
        entries.append((name.encode("utf-8"), entry.SerializeToString()))
        chunks.append(raw)
        offset += len(raw)

    def write_data(f):
        for c in chunks:
            f.write(c)
    atomic_write(data_path(prefix), write_data)
    atomic_write(index_path(prefix), build_table(entries, block_size))


class BundleReader:
    """The index of TF V2 checkpoint ``prefix``: names, dtypes, shapes, and each tensor's checked bytes."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        path = index_path(prefix)
        try:
            with open(path, "rb") as f:
                table = parse_table(f.read(), path)
        except FileNotFoundError:
            raise NotFoundError(None, "Unsuccessful TensorSliceReader constructor: Failed to find any matching "
                                      "files for %s" % prefix) from None
        if not table or table[0][0] != b"":
            raise DataLossError(None, "Unable to read checkpoint index %s: no bundle header" % path)
        try:
            self.header = tensor_bundle_pb2.BundleHeaderProto.FromString(table[0][1])
            self.entries: Dict[str, tensor_bundle_pb2.BundleEntryProto] = {
                k.decode("utf-8"): tensor_bundle_pb2.BundleEntryProto.FromString(v) for k, v in table[1:]}
        except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and bad UTF-8 alike
            raise DataLossError(None, "Unable to read checkpoint index %s: bad entry: %s" % (path, e)) from None
        if self.header.endianness != tensor_bundle_pb2.BundleHeaderProto.LITTLE:
            raise DataLossError(None, "Checkpoint %s is big-endian; only little-endian bundles are read" % path)
        if self.header.num_shards != 1:
            raise DataLossError(None, "Checkpoint %s has %d data shards; only single-shard bundles are read"
                                % (path, self.header.num_shards))

    def shape(self, name: str) -> List[int]:
        return [d.size for d in self._entry(name).shape.dim]

    def dtype_enum(self, name: str) -> int:
        """The tensor's DataType enum (types.proto)."""
        return self._entry(name).dtype

    def dtype(self, name: str) -> np.dtype:
        """The numpy dtype ``read`` returns (object, holding bytes, for DT_STRING)."""
        entry = self._entry(name)
        if entry.dtype == types_pb2.DT_STRING:
            return np.dtype(object)
        if entry.dtype not in _DTYPES:
            raise NotImplementedError("Checkpoint %s: tensor %s has dtype %s, which is not supported here"
                                      % (self.prefix, name, types_pb2.DataType.Name(entry.dtype)))
        return np.dtype(_DTYPES[entry.dtype])

    def _entry(self, name: str) -> tensor_bundle_pb2.BundleEntryProto:
        try:
            return self.entries[name]
        except KeyError:
            raise NotFoundError(None, "Key %s not found in checkpoint %s (it has: %s)"
                                % (name, self.prefix, ", ".join(sorted(self.entries)) or "no tensors")) from None

    def read(self, name: str) -> np.ndarray:
        """The tensor ``name`` as a new numpy array; DataLossError naming the data file on a bad checksum."""
        entry = self._entry(name)
        if entry.slices:
            raise NotImplementedError("Checkpoint %s: %s is a partitioned variable; slices are not supported"
                                      % (self.prefix, name))
        dtype, shape = self.dtype(name), self.shape(name)
        path = data_path(self.prefix)
        try:
            with open(path, "rb") as f:                  # one tensor at a time: memory stays one tensor's size
                f.seek(entry.offset)
                raw = f.read(entry.size)
        except FileNotFoundError:
            raise NotFoundError(None, "Checkpoint %s has an index but no data file %s" % (self.prefix, path)) from None
        count = int(np.prod(shape, dtype=np.int64))
        expected = entry.size if entry.dtype == types_pb2.DT_STRING else dtype.itemsize * count
        if len(raw) != entry.size or entry.size != expected:
            raise DataLossError(None, "Checkpoint data %s is truncated or inconsistent for %s: %d bytes at offset "
                                      "%d, expected %d" % (path, name, len(raw), entry.offset, entry.size))
        if entry.dtype == types_pb2.DT_STRING:
            return self._strings(raw, count, entry.crc32c, name, path).reshape(shape)
        if masked_crc32c(raw) != entry.crc32c:
            raise DataLossError(None, "Checksum does not match: stored %d vs. calculated on the restored bytes %d "
                                      "for %s in checkpoint data %s" % (entry.crc32c, masked_crc32c(raw), name, path))
        return np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype).reshape(shape)

    def _strings(self, raw: bytes, count: int, stored_crc: int, name: str, path: str) -> np.ndarray:
        out = np.empty(count, dtype=object)
        try:
            pos, lengths, crc = 0, [], 0
            for _ in range(count):
                n, pos = _read_varint(raw, pos, len(raw))
                lengths.append(n)
                crc = google_crc32c.extend(crc, struct.pack("<I" if n <= 0xFFFFFFFF else "<Q", n))
            if pos + 4 > len(raw) or _u32.unpack_from(raw, pos)[0] != _mask(crc):
                raise ValueError("the element lengths' checksum does not match")
            crc = google_crc32c.extend(crc, raw[pos:pos + 4])
            pos += 4
            for i, n in enumerate(lengths):
                if pos + n > len(raw):
                    raise ValueError("element %d runs past the tensor's bytes" % i)
                out[i] = bytes(raw[pos:pos + n])
                crc = google_crc32c.extend(crc, out[i])
                pos += n
            if _mask(crc) != stored_crc:
                raise ValueError("checksum does not match")
        except ValueError as e:
            raise DataLossError(None, "Bad string tensor %s in checkpoint data %s: %s" % (name, path, e)) from None
        return out


def bundle_exists(prefix: str) -> bool:
    """Whether ``prefix.index`` exists (TF's V2 ``checkpoint_exists`` test)."""
    return os.path.isfile(index_path(prefix))
