"""Broken and hostile zips, built in memory (not a test module)."""

import io
import struct
import zipfile

BEIR_FILES = {
    "ds/corpus.jsonl": '{"_id": "d1", "title": "T", "text": "hello"}\n',
    "ds/queries.jsonl": '{"_id": "q1", "text": "hello there"}\n',
    "ds/qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
}


def beir_zip(files: dict[str, str] | None = None, *, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, text in (files or BEIR_FILES).items():
            archive.writestr(name, text)
    return buffer.getvalue()


def _patch_headers(data: bytes, local_offset: int, central_offset: int, value: int) -> bytes:
    """Set a 2-byte field of every local and central directory header."""
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", local_offset), (b"PK\x01\x02", central_offset)):
        at = out.find(signature)
        while at >= 0:
            out[at + offset: at + offset + 2] = struct.pack("<H", value)
            at = out.find(signature, at + 4)
    return bytes(out)


def bad_crc() -> bytes:
    data = beir_zip(method=zipfile.ZIP_STORED)
    return data.replace(b"hello there", b"HELLO there", 1)


def unsupported_compression() -> bytes:
    return _patch_headers(beir_zip(), 8, 10, 98)  # 98 = PPMd, which Python cannot read


def encryption_flag() -> bytes:
    return _patch_headers(beir_zip(), 6, 8, 0x1)


def not_a_zip() -> bytes:
    return b"PK\x03\x04 this is not really a zip" * 10


def zip_bomb(size: int = 64 * 1024 * 1024) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("ds/corpus.jsonl", "w", force_zip64=True) as out:
            chunk = b" " * (1024 * 1024)
            for _ in range(size // len(chunk)):
                out.write(chunk)
    return buffer.getvalue()


#: kind -> (builder, words the error message must hold)
BROKEN = {
    "bad CRC": (bad_crc, "is damaged: Bad CRC-32"),
    "unsupported compression": (unsupported_compression, "compression method 98"),
    "encryption flag": (encryption_flag, "is encrypted"),
    "not a zip": (not_a_zip, "not a zip file"),
    "zip bomb": (zip_bomb, "refused as a zip bomb"),
}
