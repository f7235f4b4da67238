#!/usr/bin/env python3
"""Writes the session fuzzer's seed corpus (tests/fuzz/seeds): well-formed sessions and near
misses, built from the wire format in src/common/frame.h and src/protocol/handshake.h.

usage: make_seeds.py OUT_DIR
Each seed: a mode byte (1 = the backend requires authentication), then messages as u32
little-endian length + bytes (tests/fuzz/session_fuzzer.cpp)."""
import os
import struct
import sys

MAGIC, VERSION = 0x54525647, 4
REQUEST, REPLY, ASYNC, ERROR = 1, 2, 4, 8
HELLO, PING, SINK, WAIT, STATUS, AUTH, OPEN_PLUGIN, OUTPUT = 0, 1, 2, 3, 4, 5, 6, 9


def frame(call, payload=b"", flags=REQUEST, thread=1, request=1, version=VERSION):
    return struct.pack("<IHHIIQII", MAGIC, version, flags, call, thread, request, 0,
                       len(payload)) + payload


def blob(data):
    return struct.pack("<Q", len(data)) + data


def hello(plugins=((0, b"core", 0),), version=VERSION, visible=b""):
    body = struct.pack("<H", version) + blob(b"fuzz") + struct.pack("<III", 1, 0, len(plugins))
    for pid, name, table in plugins:
        body += struct.pack("<H", pid) + blob(name) + struct.pack("<Q", table)
    return frame(HELLO, body + bytes(range(32)) + blob(visible))


def open_plugin(pid, name, table=0, version=0, request=2):
    body = struct.pack("<H", pid) + blob(name) + struct.pack("<QI", table, version)
    return frame(OPEN_PLUGIN, body, request=request)


def seed(mode, *messages):
    return bytes([mode]) + b"".join(struct.pack("<I", len(m)) + m for m in messages)


SEEDS = {
    "ping": seed(0, hello(()), frame(PING, b"hello"), frame(PING, b"", thread=2, request=2)),
    "async_threads": seed(0, hello(()), *[frame(SINK, b"x" * 100, flags=REQUEST | ASYNC,
                                               thread=t, request=t) for t in range(1, 9)],
                          frame(PING, b"end", request=99)),
    "unknown_calls": seed(0, hello(()), frame(999), frame((55 << 16) | 1), frame(PING)),
    "wait_and_bad_wait": seed(0, hello(()), frame(WAIT, struct.pack("<I", 1)),
                              frame(WAIT, struct.pack("<Q", 1), thread=3)),
    "bad_hash": seed(0, hello(((0, b"core", 99),))),
    "bad_version": seed(0, hello((), version=1)),
    "visible_devices": seed(0, hello(visible=b"1, 0"), frame(PING, b"x", request=2)),
    "bad_visible_devices": seed(0, hello(visible=b"0,0,x")),
    "no_hello": seed(0, frame(PING, b"first")),
    "auth_wrong_proof": seed(1, hello(()), frame(AUTH, b"\x00" + bytes(32))),
    "auth_no_secret": seed(1, hello(()), frame(AUTH, b"\x01")),
    "auth_skipped": seed(1, hello(()), frame(PING, b"sneak")),
    "reply_frame": seed(0, hello(()), frame(PING, flags=REPLY)),
    "hello_twice": seed(0, hello(()), hello(())),
    "output_from_client": seed(0, hello(()), frame(OUTPUT, b"printed", request=2),
                               frame(OUTPUT, b"x", flags=REPLY, request=0)),
    "auth_after_hello": seed(0, hello(()), frame(AUTH, b"\x00" + bytes(32))),
    "status": seed(0, hello(()), frame(STATUS), frame(STATUS, b"junk", request=2)),
    "open_plugin": seed(0, hello(()), open_plugin(0, b"core"), open_plugin(9, b"nosuch", 1, 2, 3),
                        open_plugin(1, b"cudart", 5, request=4), frame(PING, b"after", request=5),
                        frame(OPEN_PLUGIN, struct.pack("<H", 1) + blob(b"x" * 300), request=6)),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "seeds")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
