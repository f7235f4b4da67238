#!/usr/bin/env python3
"""Writes the cudart fuzzer's seed corpus (tests/fuzz/cudart_seeds): well-formed requests of the
cudart table and near misses, built from src/plugins/cudart/common/cudart_calls.txt and the
records of the wire formats it names (memcpy_wire.h, module_wire.h, shared_host_wire.h).

usage: make_cudart_seeds.py OUT_DIR
Each seed: calls, each a u16 function id, a u32 length and the payload (cudart_fuzzer.cpp)."""
import os
import struct
import sys

# Function ids of cudart_calls.txt (never reused, so they are stable).
GET_DEVICE_COUNT, MALLOC, FREE, MEMCPY, MEMSET = 1, 7, 8, 9, 10
STREAM_CREATE, STREAM_DESTROY, STREAM_SYNC = 20, 23, 24
EVENT_CREATE, EVENT_RECORD, EVENT_DESTROY = 27, 29, 33
GET_LAST_ERROR, PEEK_LAST_ERROR = 38, 39
MEMCPY_ASYNC = 48  # sent ahead or waited for: the frame says
MODULE_LOAD, KERNEL_RESOLVE, VAR_RESOLVE, LAUNCH = 52, 53, 54, 55
MEMCPY_2D, DEVICE_RESET, POOL_TRIM, MEMSET_3D = 62, 4, 79, 88
HOST_REGISTER_SHARED, HOST_UNREGISTER_SHARED, MEMCPY_SHARED = 93, 94, 95
MALLOC_ARRAY, FREE_ARRAY, FREE_MIPMAPPED, MIPMAP_LEVEL, ARRAY_PLANE = 150, 153, 154, 155, 156
TO_ARRAY, TO_ARRAY_ASYNC, FROM_ARRAY, FROM_ARRAY_ASYNC = 165, 166, 167, 168
CREATE_TEXTURE, DESTROY_TEXTURE, TEXTURE_RESOURCE, CREATE_SURFACE = 169, 170, 171, 174
MEMCPY_3D, MEMCPY_3D_ASYNC, MEMCPY_3D_PEER = 177, 178, 179
GRAPH_CREATE, GRAPH_DESTROY, GRAPH_GET_NODES = 203, 210, 212
ADD_EMPTY, ADD_DEPENDENCIES, GET_EDGES, NODE_TYPE, NODE_DEPENDENCIES = 221, 222, 224, 225, 226
DESTROY_NODE, ADD_KERNEL_NODE, ADD_MEMSET_NODE, ADD_MEMCPY_NODE, ADD_MEMCPY_1D = 228, 232, 237, 241, 242
ADD_EVENT_RECORD, CHILD_GRAPH_GET, ADD_NODE, NODE_SET_PARAMS = 248, 257, 263, 264

H2D, D2H, D2D, DEFAULT = 1, 2, 3, 4
HEAP = 0x5555_5555_0000  # an address a worker's heap could have


def call(fn, payload=b""):
    return struct.pack("<HI", fn, len(payload)) + payload


def u64(*values):
    return struct.pack("<" + "Q" * len(values), *values)


def blob(data):
    return u64(len(data)) + data


def output(value_format, value=0):
    return b"\x01" + struct.pack("<" + value_format, value)


def memcpy(dst, src, count, kind, data=b"", stream=0):
    """MemcpyRequest (memcpy_wire.h), then the data: the synchronous row's stream is null."""
    return u64(dst, src, count) + struct.pack("<i", kind) + u64(stream) + data


def array_copy(array, w, h, linear, pitch, width, height, kind, one_d=0, data=b"", stream=0):
    """ArrayCopyRequest (array_wire.h), then the data."""
    return (u64(array, w, h, linear, pitch, width, height) + struct.pack("<Ii", one_d, kind)
            + u64(stream) + data)


def copy_3d(src, dst, extent, host_row, kind, data=b"", stream=0):
    """Memcpy3DRequest (array_wire.h): each side (array, x, y, z, ptr, pitch, xsize, ysize,
    device), the extent, the host side's row bytes, the kind and the stream; then the data."""
    side = lambda s: u64(*s[:8]) + struct.pack("<i", s[8])
    return (side(src) + side(dst) + u64(*extent) + u64(host_row) + struct.pack("<i", kind)
            + u64(stream) + data)


def node_head(graph, *dependencies):
    """An "add" request's head (graph_node_wire.h): the graph, then its dependencies."""
    return u64(graph) + struct.pack("<I", len(dependencies)) + u64(*dependencies)


def copy_side(ptr, pitch, xsize, ysize, x=0, y=0, z=0):
    return u64(ptr, pitch, xsize, ysize, x, y, z)


def resource_desc(res_type, first, second=0, third=0):
    """cudaResourceDesc's 144 bytes: the type, then the union's first words."""
    return (struct.pack("<i", res_type) + b"\0" * 4 + u64(first, second, third)
            + b"\0" * (128 - 24) + b"\0" * 8)


SEEDS = {
    "queries": call(GET_DEVICE_COUNT, output("i")) + call(GET_LAST_ERROR) + call(PEEK_LAST_ERROR),
    "streams_events": call(STREAM_CREATE, output("Q")) + call(EVENT_CREATE, output("Q"))
    + call(EVENT_RECORD, u64(0xdead0, 0)) + call(STREAM_SYNC, u64(0x1))
    + call(STREAM_DESTROY, u64(0xbeef0)) + call(EVENT_DESTROY, u64(0)) + call(GET_LAST_ERROR),
    "alloc_copy_free": call(MALLOC, output("Q") + u64(4096))
    + call(MEMCPY, memcpy(0x7f0000000000, 0, 16, H2D, b"x" * 16))
    + call(MEMCPY, memcpy(0, 0x7f0000000000, 16, D2H))
    + call(MEMSET, u64(0x7f0000000000) + struct.pack("<i", 7) + u64(64))
    + call(FREE, u64(0x7f0000000000)),
    "copies_into_the_worker": call(MEMCPY, memcpy(HEAP, HEAP + 64, 64, DEFAULT))
    + call(MEMCPY, memcpy(HEAP, 0, 8, H2D, b"y" * 8))
    + call(MEMCPY, memcpy(0, 2**64 - 8, 64, D2H)),
    "async_copies": call(MEMCPY_ASYNC, memcpy(0x7f0000000000, 0, 8, H2D, b"z" * 8, 0))
    + call(MEMCPY_ASYNC, memcpy(0, 0x7f0000000000, 8, D2H, stream=0x2)),
    "copy_2d": call(MEMCPY_2D, u64(0x7f0000000000, 512, 0, 16, 16, 4) + struct.pack("<i", H2D)
                    + u64(0) + b"r" * 64),
    "memset_3d_and_pool": call(MEMSET_3D, u64(0x7f0000000000, 512, 128, 4) + struct.pack("<i", 0)
                               + u64(128, 4, 2))
    + call(POOL_TRIM, u64(0x12340, 0)) + call(DEVICE_RESET),
    "module": call(MODULE_LOAD, u64(1, 16, 0) + blob(b"\x50\xed\x55\xba" + b"\0" * 12))
    + call(KERNEL_RESOLVE, u64(1, 7) + blob(b"kernel") + struct.pack("<III", 16, 1, 0)
           + struct.pack("<I", 8))
    + call(VAR_RESOLVE, u64(1) + blob(b"symbol"))
    + call(LAUNCH, u64(7) + struct.pack("<IIIIII", 1, 1, 1, 32, 1, 1) + u64(0, 0)
           + blob(b"\0" * 16)),
    # A module announced at the session's 2 GiB limit whose bytes never come: the worker must
    # hold only what arrived (libFuzzer's malloc limit fails a reservation of the claimed size).
    "module_claims_2_gib": call(MODULE_LOAD, u64(2, 2 << 30, 0) + blob(b"\x50\xed\x55\xba"))
    + call(MODULE_LOAD, u64(3, 1 << 20, 0) + blob(b"\0" * 8)),
    "shared_memory": call(HOST_REGISTER_SHARED, u64(0, 8192) + struct.pack("<I", 2))
    + call(MEMCPY_SHARED, u64(0x7f0000000000, 0, 4096) + struct.pack("<i", H2D) + u64(0))
    + call(MEMCPY_SHARED, u64(HEAP, 4096, 4096) + struct.pack("<i", H2D) + u64(0))
    + call(HOST_UNREGISTER_SHARED, u64(0)),
    "arrays": call(MALLOC_ARRAY, output("Q") + b"\x01" + struct.pack("<iiiii", 32, 0, 0, 0, 2)
                   + u64(64, 32) + struct.pack("<I", 0))
    + call(TO_ARRAY, array_copy(0xa770, 0, 0, 0, 16, 16, 4, H2D, data=b"a" * 64))
    + call(FROM_ARRAY, array_copy(0xa770, 4, 1, 0, 16, 16, 2, D2H))
    + call(TO_ARRAY_ASYNC, array_copy(0xa770, 0, 0, 0x7f0000000000, 512, 16, 4, D2D, stream=0x2))
    + call(FROM_ARRAY_ASYNC, array_copy(0xa770, 0, 0, 0, 100, 100, 1, D2H, one_d=1))
    + call(TO_ARRAY, array_copy(0xa770, 0, 0, HEAP, 16, 16, 1, H2D))
    + call(MIPMAP_LEVEL, u64(0xb00) + struct.pack("<I", 1))
    + call(ARRAY_PLANE, u64(0xa770) + struct.pack("<I", 0))
    + call(FREE_MIPMAPPED, u64(0xb00)) + call(FREE_ARRAY, u64(0xa770)),
    "textures": call(CREATE_TEXTURE, struct.pack("<I", 0) + resource_desc(0, 0xa770)
                     + b"\0" * 72)
    + call(CREATE_TEXTURE, struct.pack("<I", 1) + resource_desc(3, 0x7f0000000000, 0, 2**63)
           + b"\0" * 72 + b"\0" * 112)
    + call(CREATE_SURFACE, resource_desc(2, HEAP, 0, 4096))
    + call(TEXTURE_RESOURCE, u64(1)) + call(DESTROY_TEXTURE, u64(1)),
    "copies_3d": call(MEMCPY_3D, copy_3d((0, 0, 0, 0, 0, 16, 16, 4, -1),
                                         (0xa770, 1, 1, 0, 0, 0, 0, 0, -1), (4, 4, 2), 16, H2D,
                                         data=b"c" * 128))
    + call(MEMCPY_3D, copy_3d((0, 0, 0, 0, HEAP, 64, 64, 64, -1),
                              (0, 0, 0, 0, 0x7f0000000000, 64, 64, 64, -1), (64, 4, 4), 0, 5))
    + call(MEMCPY_3D_ASYNC, copy_3d((0xa770, 0, 0, 0, 0, 0, 0, 0, -1),
                                    (0, 0, 0, 0, 0, 16, 16, 4, -1), (4, 4, 1), 16, D2H,
                                    stream=0x2))
    + call(MEMCPY_3D_PEER, copy_3d((0, 0, 0, 0, 0x7f0000000000, 2**62, 2**62, 2**62, 0),
                                   (0, 0, 0, 0, 0x7f0000001000, 512, 4, 4, 1), (512, 4, 4), 0,
                                   D2D)),
    # Graphs built node by node (graph_node_wire.h): made-up graphs, nodes and events, a memset
    # and copies into the worker's own memory, extents wrapping around, an unresolved kernel.
    "graph_nodes": call(GRAPH_CREATE, output("Q") + struct.pack("<I", 0))
    + call(ADD_EMPTY, node_head(0x6a0, 0xe0de))
    + call(ADD_DEPENDENCIES, u64(0x6a0) + struct.pack("<I", 1) + u64(0xe0de, 0xe0df) + b"\0")
    + call(GET_EDGES, u64(0x6a0) + b"\x07" + u64(4))
    + call(NODE_TYPE, u64(0xe0de)) + call(NODE_DEPENDENCIES, u64(0xe0de) + b"\x07" + u64(2))
    + call(ADD_MEMSET_NODE, node_head(0) + u64(HEAP, 0) + struct.pack("<II", 0, 4) + u64(16, 1))
    + call(ADD_MEMSET_NODE, node_head(0) + u64(0x7f0000000000, 2**63)
           + struct.pack("<II", 0, 4) + u64(16, 4))
    + call(ADD_MEMCPY_1D, node_head(0) + u64(0x7f0000000000, HEAP, 64) + struct.pack("<i", D2D))
    + call(ADD_MEMCPY_NODE, node_head(0) + copy_side(HEAP, 64, 64, 4)
           + copy_side(0x7f0000000000, 2**62, 64, 2**62, 0, 1, 1) + u64(64, 4, 4)
           + struct.pack("<i", D2D))
    + call(ADD_EVENT_RECORD, node_head(0) + u64(0xdead0))
    + call(CHILD_GRAPH_GET, u64(0xe0de)) + call(DESTROY_NODE, u64(0xe0de))
    + call(GRAPH_GET_NODES, u64(0x6a0) + b"\x03" + u64(8)) + call(GRAPH_DESTROY, u64(0x6a0))
    + call(ADD_KERNEL_NODE, node_head(0) + u64(7) + struct.pack("<IIIIIII", 1, 1, 1, 32, 1, 1, 0)
           + blob(b"\0" * 16))
    # The generic forms: a child graph moved (ownership 1) and a node type never remoted (host).
    + call(ADD_NODE, node_head(0x6a0, 0xe0de) + b"\x01" + b"\0" * 8 + struct.pack("<i", 4)
           + u64(0x6a1) + struct.pack("<I", 1))
    + call(NODE_SET_PARAMS, u64(0xe0de) + struct.pack("<i", 2) + u64(HEAP, 0)
           + struct.pack("<II", 0, 4) + u64(16, 1))
    + call(ADD_NODE, node_head(0) + b"\0" + struct.pack("<i", 3)),
}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(sys.argv[1], name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
