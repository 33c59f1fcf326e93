#!/usr/bin/env python3
"""Draw the MetaClaw icons (RGBA PNGs) into icons/ with nothing but the standard library.

- icons/source.png (1024 px): the input of `npx tauri icon icons/source.png -o icons`, which
  writes every size the bundles need (scripts/tray-test.sh runs it; the results are committed);
- icons/tray-<state>.png (64 px): the tray icon per state, a coloured badge on the app icon.
"""
import math
import struct
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "icons"


# Badge colour per tray state; idle has none.
STATES = {
    "idle": None,
    "learning": (66, 133, 244),
    "training": (52, 168, 83),
    "paused": (251, 188, 5),
    "error": (219, 68, 55),
}


def png(size: int, badge=None) -> bytes:
    rows = []
    c = (size - 1) / 2
    for y in range(size):
        row = bytearray([0])
        for x in range(size):
            dx, dy = x - c, y - c
            r = math.hypot(dx, dy) / (size / 2)
            if badge is not None:
                # A dot in the lower right corner with a light rim, readable on dark and light bars.
                bx, by = x - size * 0.74, y - size * 0.74
                br = math.hypot(bx, by) / size
                if br < 0.20:
                    row += bytes([*badge, 255]) if br < 0.16 else bytes([255, 255, 255, 255])
                    continue
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
    (OUT / "source.png").write_bytes(png(1024))
    print(OUT / "source.png")
    for state, colour in STATES.items():
        (OUT / f"tray-{state}.png").write_bytes(png(64, colour))
        print(OUT / f"tray-{state}.png")
