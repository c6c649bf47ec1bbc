"""Counts a PNG's pixels near each of the given colours, so a test can tell what a screenshot shows.

Usage: png_colors.py FILE RRGGBB [RRGGBB ...]   prints "RRGGBB COUNT" per colour
Reads 8-bit RGB or RGBA, non-interlaced (what Chromium writes), with the standard library only.
"""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    offset, chunks, header = 8, [], None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        sys.exit(f"{path}: only 8-bit RGB or RGBA, non-interlaced")
    size = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * size
    previous = bytearray(stride)
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - size] if i >= size else 0
            up = previous[i]
            corner = previous[i - size] if i >= size else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        for i in range(0, stride, size):
            yield line[i], line[i + 1], line[i + 2]
        previous = line


wanted = [(name, int(name[0:2], 16), int(name[2:4], 16), int(name[4:6], 16)) for name in sys.argv[2:]]
counts = {name: 0 for name, *_ in wanted}
for r, g, b in pixels(sys.argv[1]):
    for name, wr, wg, wb in wanted:
        if abs(r - wr) <= 12 and abs(g - wg) <= 12 and abs(b - wb) <= 12:
            counts[name] += 1
for name, _, _, _ in wanted:
    print(name, counts[name])
