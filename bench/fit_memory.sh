#!/usr/bin/env bash
# Peak RSS and time of a fit (issue 37, item 8): `guard` on an 8100 x 4000 PNG,
# which Anthropic's 8000 px side limit makes it fit to 8000 x 3950, once
# smooth (a gradient: ~140 kB, the issue's case) and once noise (~97 MB of RGB
# that does not compress). A fit holds a few rows of a non-interlaced PNG, so
# its peak is the binary, the input and output bytes, and rows (README,
# Robustness); before, a whole-image Lanczos resize peaked near 740 MB.
#
#   bench/fit_memory.sh [BINARY]     (default: target/debug/session-doctor, built if missing)
#
# Prints one row per image: its size, the decision, peak RSS (kB) and seconds.
#
# Measured on 4 December 2026 (debug builds, a 2-core machine shared with 7 other builds,
# so the seconds are slow and noisy; the kB are not):
#   smooth  710476 bytes  before (Lanczos, whole image)  fitted  peak 705152 kB  625 s
#   smooth  710476 bytes  after  (rows, area average)    fitted  peak  18168 kB   89 s (301 s under load)
#   16-bit  8100x3200 RGBA16, 316596 bytes: before denied ("Memory limit exceeded", 17076 kB),
#           after fitted to 8000x3160, peak 18472 kB
#   noise   97233718 bytes  before (the issue's figure)                  peak 883 MB
#   noise   97233718 bytes  after   fitted to 2531x1248 (PNG tries, then JPEG)  peak 335180 kB  248 s
# Noise does not compress: the input, each PNG try's output (as large as its pixels) and
# the JPEG path's fitted image are what the 335 MB holds, not a decoded source image.
#
# The 9000 x 6000 JPEGs (issue 36, item 4), measured on 6 December 2026 (debug builds, same machine):
#   baseline     977508 bytes  before  denied ("too large to decode safely")  peak 179308 kB  17 s
#   baseline     977508 bytes  after   fitted to 4500x3000 (1/2 scale)        peak 179712 kB  60 s
#   progressive  484787 bytes  before  denied                                 peak 336308 kB  23 s
#   progressive  484787 bytes  after   fitted to 4500x3000 (1/2 scale)        peak 337312 kB  65 s
# Both peaks are the guard's deep check (zune-jpeg decodes the whole image, and a progressive
# one's coefficients too) that runs before any fit, as it did before: the fit's decode at
# 1/2 scale (4500 x 3000, at most 6 bytes a pixel: 81 MB) adds nothing to it.
set -euo pipefail
die() { echo "bench/fit_memory.sh: $*" >&2; exit 2; }
command -v python3 >/dev/null || die "python3 is needed to write the PNGs"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed (Debian: apt-get install time)"
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-}
if [ -z "$bin" ]; then
    cargo build --locked --quiet --manifest-path "$here/../Cargo.toml" || die "cargo build failed"
    bin="${CARGO_TARGET_DIR:-$here/../target}/debug/session-doctor"
fi
dir=${BENCH_DIR:-/tmp/session-doctor-bench}
mkdir -p "$dir"
for kind in smooth noise; do
    png="$dir/fit-$kind-8100x4000.png"
    [ -f "$png" ] || python3 - "$png" "$kind" <<'PY'
import os, struct, sys, zlib
path, kind = sys.argv[1], sys.argv[2]
w, h = 8100, 4000
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
z = zlib.compressobj(6)
data = []
for y in range(h):
    if kind == "noise":
        row = os.urandom(w * 3)
    else:
        row = bytes((x * 255 // w, y * 255 // h, 128)[i % 3] for x in range(w) for i in range(3)) if y == 0 else row0
    if y == 0:
        row0 = row
    data.append(z.compress(b"\0" + row))
data.append(z.flush())
with open(path, "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))
    f.write(chunk(b"IDAT", b"".join(data)) + chunk(b"IEND", b""))
PY
    cache=$(mktemp -d)
    out=$( { XDG_CACHE_HOME="$cache" /usr/bin/time -f "TIME %M %e" "$bin" guard --json "$png" >"$cache/out.json"; } 2>&1 | grep '^TIME' || true)
    decision=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["decision"])' "$cache/out.json")
    read -r _ kb secs <<<"$out"
    printf '%-7s %10s bytes  %-7s peak %8s kB  %6s s\n' "$kind" "$(stat -c %s "$png")" "$decision" "$kb" "$secs"
    rm -rf "$cache"
done
# A smooth 9000 x 6000 JPEG (issue 36, item 4), baseline and progressive, made
# with the round-trip suite's pinned Pillow (tests/agents/fake/decoders.py
# installs it on first use). Guard's own deep check decodes it whole first
# (zune-jpeg, 162 MB of RGB), so the peak is that check's; the fit adds a
# decode at 1/2 scale (the 8000 px side needs 9000 x 6000, over the budget).
for kind in baseline progressive; do
    jpg="$dir/fit-$kind-9000x6000.jpg"
    [ -f "$jpg" ] || python3 - "$jpg" "$kind" "$here/../tests/agents/fake" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
import decoders  # noqa: F401  (puts the pinned Pillow on the path)
from PIL import Image
w, h = 9000, 6000
gx = Image.linear_gradient("L").rotate(90).resize((w, h))
gy = Image.linear_gradient("L").resize((w, h))
Image.merge("RGB", (gx, gy, Image.new("L", (w, h), 128))).save(sys.argv[1], quality=80, progressive=sys.argv[2] == "progressive")
PY
    cache=$(mktemp -d)
    out=$( { XDG_CACHE_HOME="$cache" /usr/bin/time -f "TIME %M %e" "$bin" guard --json "$jpg" >"$cache/out.json"; } 2>&1 | grep '^TIME' || true)
    decision=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["decision"])' "$cache/out.json")
    read -r _ kb secs <<<"$out"
    printf '%-11s %10s bytes  %-7s peak %8s kB  %6s s\n' "$kind" "$(stat -c %s "$jpg")" "$decision" "$kb" "$secs"
    rm -rf "$cache"
done
