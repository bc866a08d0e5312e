"""What a WebM file holds, read as little as that takes (no decoder is needed): its EBML header,
its frames (each SimpleBlock or BlockGroup, in the Segment's Clusters, which a live recorder's
MediaRecorder writes with unknown sizes) and the pixel size its video track declares; and its
frames decoded by Debian's ``ffmpeg`` (which scripts/test installs), to compare and to look at."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import attrs

SAVED = re.compile(r"Saved to (/\S+) \(([\d,]+) bytes\)")
RECORDED = re.compile(r"Recorded ([\d.]+) s of the tab: (\d+)x(\d+) pixels, ([\d,]+) frames, ([\d,]+) bytes")

EBML_HEADER = b"\x1a\x45\xdf\xa3"
_ENTERED = {0x18538067, 0x1F43B675, 0x1654AE6B, 0xAE, 0xE0}  # Segment, Cluster, Tracks, TrackEntry, Video
_BLOCKS = {0xA3, 0xA0}  # SimpleBlock, BlockGroup
_WIDTH, _HEIGHT = 0xB0, 0xBA


@attrs.frozen
class WebmFacts:
    frames: list[bytes]
    width: int
    height: int


def _vint(data: bytes, at: int, marker: bool) -> tuple[int, int, bool]:
    first = data[at]
    length = next(n for n in range(1, 9) if first & (0x80 >> (n - 1)))
    value = first if marker else first & (0xFF >> length)
    ones = value == 0xFF >> length
    for byte in data[at + 1 : at + length]:
        value = value * 256 + byte
        ones = ones and byte == 0xFF
    return value, length, ones and not marker


def webm_facts(data: bytes) -> WebmFacts:
    """The frames (each block's bytes), width and height of a WebM; AssertionError if it is none."""
    assert data[:4] == EBML_HEADER, data[:16]
    frames: list[bytes] = []
    size = {_WIDTH: 0, _HEIGHT: 0}
    at = 0
    while at < len(data):
        element, id_length, _ = _vint(data, at, True)
        length, size_length, unknown = _vint(data, at + id_length, False)
        body = at + id_length + size_length
        if element in _ENTERED:
            at = body
            continue
        if element in _BLOCKS:
            frames.append(data[body : body + length])
        if element in size:
            size[element] = int.from_bytes(data[body : body + length], "big")
        if unknown:
            break
        at = body + length
    return WebmFacts(frames, size[_WIDTH], size[_HEIGHT])


def _ffmpeg() -> str:
    found = shutil.which("ffmpeg")
    assert found, "the video tests decode frames with Debian's ffmpeg (scripts/test installs it)"
    return found


def frame_png(video: Path, seconds: float, out: Path) -> Path:
    """The frame shown at ``seconds``, as a PNG, decoded by Debian's ffmpeg."""
    ffmpeg = _ffmpeg()
    subprocess.run(
        [ffmpeg, "-loglevel", "error", "-y", "-ss", f"{seconds:.2f}", "-i", str(video), "-frames:v", "1", str(out)],
        check=True,
        timeout=60,
    )
    return out


def decoded_pixels(video: Path, width: int, height: int) -> list[bytes]:
    """Every frame decoded to raw RGB bytes by Debian's ffmpeg."""
    ffmpeg = _ffmpeg()
    raw = subprocess.run(
        [
            ffmpeg,
            "-loglevel",
            "error",
            "-i",
            str(video),
            "-fps_mode",
            "passthrough",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    ).stdout
    frame = width * height * 3
    return [raw[i : i + frame] for i in range(0, len(raw) - frame + 1, frame)]


def saved_video(answer: str, output: Path | None = None) -> tuple[Path, dict[str, float]]:
    """The WebM the broker wrote (the client's, 0600) and what the answer says it holds."""
    found, recorded = SAVED.search(answer), RECORDED.search(answer)
    assert found and recorded, answer
    path = Path(found.group(1))
    assert (output is None or path.is_relative_to(output)) and path.suffix == ".webm", path
    assert path.stat().st_mode & 0o777 == 0o600
    seconds, width, height, frames, size = (float(group.replace(",", "")) for group in recorded.groups())
    return path, {"seconds": seconds, "width": width, "height": height, "frames": frames, "bytes": size}


def all_text(result: object) -> str:
    return "\n".join(block.text for block in getattr(result, "content", []) if getattr(block, "type", "") == "text")


def mean_colour(frame: bytes, width: int, box: tuple[int, int, int, int]) -> tuple[float, float, float]:
    """The mean colour of the box (left, top, right, bottom) of an RGB frame."""
    left, top, right, bottom = box
    sums = [0, 0, 0]
    for y in range(top, bottom):
        row = frame[(y * width + left) * 3 : (y * width + right) * 3]
        for channel in range(3):
            sums[channel] += sum(row[channel::3])
    count = (right - left) * (bottom - top)
    return sums[0] / count, sums[1] / count, sums[2] / count
