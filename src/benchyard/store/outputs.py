"""An attempt's outputs stored once: stdout, stderr and the answer in one zlib-compressed blob
(the `outputs` column). The answer is most often the start of stdout, and then it is stored as
that many characters of it; the trajectory's copies refer to them the same way
(runner/trajectory.py), so that a 100 KB output costs its compressed size once."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass

REF_MIN_CHARS = 64  # a shorter copy is stored as it is: a reference would save nothing
COMPRESS_LEVEL = 6
MIN_WINDOW_BITS, MAX_WINDOW_BITS = 9, 15  # zlib's range: 512 bytes to 32 KiB
LOOKAHEAD_BYTES = 262  # the end of its window zlib keeps for look-ahead (MIN_LOOKAHEAD)


@dataclass(frozen=True)
class Outputs:
    stdout: str | None = None
    stderr: str | None = None
    answer: str | None = None


def prefix_of(source: str | None, text: str) -> bool:
    """Whether `text` is long enough to be worth a reference and the start of `source`."""
    return source is not None and len(text) >= REF_MIN_CHARS and source.startswith(text)


def compress(data: bytes, level: int = COMPRESS_LEVEL) -> bytes:
    """zlib's compression of `data`, with a window no larger than `data` can use: zlib.compress
    sets up a 32 KiB one for any input, which for the few hundred bytes of most of an attempt's
    blobs costs several times the compressing (120 us against 15). A window that reaches back
    to the start of the data loses nothing, so the output is as small; zlib.decompress reads it
    as any other."""
    needed = (len(data) + LOOKAHEAD_BYTES).bit_length()
    window_bits = max(MIN_WINDOW_BITS, min(MAX_WINDOW_BITS, needed))
    compressor = zlib.compressobj(level, zlib.DEFLATED, window_bits)
    return compressor.compress(data) + compressor.flush()


def encode(outputs: Outputs) -> bytes:
    answer: str | int | None = outputs.answer
    if outputs.answer is not None and prefix_of(outputs.stdout, outputs.answer):
        answer = len(outputs.answer)  # the first characters of stdout
    payload = json.dumps([outputs.stdout, outputs.stderr, answer], ensure_ascii=False)
    return compress(payload.encode("utf-8", "surrogatepass"))


def decode(blob: bytes) -> Outputs:
    stdout, stderr, answer = json.loads(zlib.decompress(blob).decode("utf-8", "surrogatepass"))
    if isinstance(answer, int):
        answer = stdout[:answer]
    return Outputs(stdout, stderr, answer)
