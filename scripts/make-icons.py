#!/usr/bin/env python3
"""Draw the MetaClaw app icon (RGBA PNGs) into icons/ with nothing but the standard library.

The tray-app work replaces these with `tauri icon` output; until then the bundle layout exists.
"""
import math
import struct
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "icons"


def png(size: int) -> bytes:
    rows = []
    c = (size - 1) / 2
    for y in range(size):
        row = bytearray([0])
        for x in range(size):
            dx, dy = x - c, y - c
            r = math.hypot(dx, dy) / (size / 2)
            if r > 0.96:
                row += bytes([0, 0, 0, 0])
                continue
            # Three claw marks across a deep-teal disc.
            marks = any(abs(dx * 0.5 + dy * 0.87 - k * size * 0.2) < size * 0.045 and r < 0.7 for k in (-1, 0, 1))
            row += bytes([250, 236, 214, 255]) if marks else bytes([18, 78, 96, 255])
        rows.append(bytes(row))
    raw = zlib.compress(b"".join(rows), 9)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    for name, size in {"32x32.png": 32, "128x128.png": 128, "128x128@2x.png": 256, "icon.png": 512}.items():
        (OUT / name).write_bytes(png(size))
        print(OUT / name)
