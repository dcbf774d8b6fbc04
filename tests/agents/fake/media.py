"""Strict media checks, as a provider decodes an attachment before the model sees it.

Every check reads the bytes to the end: a PNG's chunks, CRCs and the complete
zlib stream of its IDAT chunks (inflated to exactly the size the header
promises); a JPEG's segments up to EOI; a PDF's header, xref, trailer and page
tree. Any defect returns a short reason; a valid file returns None. Only the
standard library is used for this structural read; an independent decoder
(Pillow, libjpeg-turbo through simplejpeg for a JPEG's entropy-coded scans,
pypdf: ``decoders.py``, installed on first use) then decodes it in full.
"""

import re
import struct
import zlib

from . import decoders

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def sniff(data):
    if data.startswith(PNG_SIGNATURE):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith(b"%PDF-"):
        return "application/pdf"
    return None


def png_problem(data):
    if not data.startswith(PNG_SIGNATURE):
        return "not a PNG"
    pos, idat, header, seen_end = 8, [], None, False
    while pos < len(data):
        if pos + 8 > len(data):
            return "chunk header cut short"
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        crc = data[pos + 8 + length : pos + 12 + length]
        if len(body) != length or len(crc) != 4:
            return "chunk %r cut short" % kind
        if zlib.crc32(kind + body) != struct.unpack(">I", crc)[0]:
            return "CRC mismatch in %r" % kind
        if header is None and kind != b"IHDR":
            return "IHDR is not the first chunk"
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            seen_end = True
            break
        pos += 12 + length
    if header is None or not idat:
        return "no image data"
    if not seen_end:
        return "no IEND chunk"
    width, height, depth, color, _, _, interlace = header
    if width == 0 or height == 0 or color not in CHANNELS:
        return "bad IHDR"
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(b"".join(idat))
    except zlib.error as err:
        return "corrupt IDAT stream: %s" % err
    if not inflater.eof:
        return "IDAT stream incomplete"
    if interlace == 0:
        row = (width * CHANNELS[color] * depth + 7) // 8
        if len(raw) != height * (row + 1):
            return "IDAT holds %d bytes, %d expected" % (len(raw), height * (row + 1))
    return None


def jpeg_problem(data):
    if not data.startswith(b"\xff\xd8"):
        return "not a JPEG"
    pos, frame = 2, False
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return "segment marker expected at %d" % pos
        marker = data[pos + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if pos + 2 + length > len(data):
            return "segment cut short"
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            frame = True
        if marker == 0xDA:
            if not frame:
                return "scan before frame header"
            return None if data.rstrip(b"\x00").endswith(b"\xff\xd9") else "no EOI marker (truncated)"
        pos += 2 + length
    return "no scan (truncated)"


def pdf_problem(data):
    if not data.startswith(b"%PDF-"):
        return "no PDF header"
    tail = data[-2048:]
    if b"%%EOF" not in tail:
        return "no %%EOF (truncated)"
    found = re.findall(rb"startxref\s+(\d+)", tail)
    if not found:
        return "no startxref"
    offset = int(found[-1])
    if offset >= len(data):
        return "startxref points past the end"
    at = data[offset : offset + 64]
    if not (at.startswith(b"xref") or re.match(rb"\d+\s+\d+\s+obj", at)):
        return "startxref does not point at an xref"
    trailer = data[offset:]
    if b"/Root" not in trailer:
        return "trailer names no /Root"
    if not re.search(rb"/Type\s*/Pages", data) or not re.search(rb"/Type\s*/Page\b", data):
        return "no page tree"
    return None


def gif_problem(data):
    if data[:6] not in (b"GIF87a", b"GIF89a"):
        return "not a GIF"
    return None if data.endswith(b";") else "no trailer (truncated)"


def webp_problem(data):
    if not (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
        return "not a WebP"
    (size,) = struct.unpack("<I", data[4:8])
    return None if size + 8 <= len(data) else "RIFF cut short"


CHECKS = {
    "image/png": png_problem,
    "image/jpeg": jpeg_problem,
    "application/pdf": pdf_problem,
    "image/gif": gif_problem,
    "image/webp": webp_problem,
}


def problem(data, declared=None):
    """Why a provider would refuse these bytes, or None when it would take them."""
    kind = sniff(data)
    if kind is None:
        return "unrecognised bytes"
    if declared and declared != kind and not (declared == "image/jpg" and kind == "image/jpeg"):
        return "declared %s, bytes are %s" % (declared, kind)
    # The structural read first (its reasons name the defect), then an independent
    # decoder to the last byte: Pillow for images, pypdf for PDFs (fake/decoders.py).
    why = CHECKS[kind](data)
    if why:
        return why
    if kind == "application/pdf":
        why, _, encrypted = decoders.pdf_facts(data)
        return why
    return decoders.image_problem(data)


def dimensions(data):
    """(width, height) from a PNG's IHDR or a JPEG's frame header; None when unknown."""
    if data.startswith(PNG_SIGNATURE) and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data.startswith(b"\xff\xd8"):
        pos = 2
        while pos + 9 <= len(data) and data[pos] == 0xFF:
            marker = data[pos + 1]
            (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
                return width, height
            pos += 2 + length
    return None


def pdf_pages(data):
    """The page count pypdf reads, or None."""
    return decoders.pdf_facts(data)[1]


def pdf_encrypted(data):
    """pypdf finds the PDF encrypted."""
    return decoders.pdf_facts(data)[2]
