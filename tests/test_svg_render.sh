#!/bin/sh
# SPDX-License-Identifier: MIT
# test_svg_render.sh - every SVG the hrt tool writes (demo, sim, replay
# --svg) rendered by headless Chromium: each is shown as an <img> on a
# magenta page larger than the picture, and the screenshot must show a
# non-magenta box of exactly the declared size (pt converted at 96 dpi)
# that is not blank (enough pixels that are neither white nor magenta).
# Needs HRT (the tool; make test sets it); run from the repository root.
HRT=${HRT:-build/hrt}
case "$HRT" in /*) ;; *) HRT=$(pwd)/$HRT ;; esac
repo=$(pwd)
. "$repo/tests/lib.sh"
need chromium "SVG rendering" chromium
need python3 "SVG rendering" python3
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || fail "cd $tmp"
"$HRT" demo >demo.txt || fail "hrt demo"
"$HRT" sim --short --svg sim.svg >sim.txt || fail "hrt sim"
"$HRT" replay --svg replay.svg "$repo/data/trace.hrt.xz" >replay.txt 2>&1 ||
	fail "hrt replay --svg"
svgs=0
for svg in *.svg; do
	svgs=$((svgs + 1))
	size=$(python3 - "$svg" <<'PY'
import re, sys
head = open(sys.argv[1], encoding="utf-8").read(4000)
m = re.search(r'<svg\b[^>]*?\bwidth="([\d.]+)(pt|px)?"[^>]*?\bheight="([\d.]+)(pt|px)?"', head, re.S)
if not m:
    sys.exit("no width/height on the svg element")
k = lambda v, u: round(float(v) * (4 / 3 if u == "pt" else 1))
print(k(m.group(1), m.group(2)), k(m.group(3), m.group(4)))
PY
) || fail "$svg: $size"
	set -- $size
	w=$1 h=$2
	printf '<html><body style="margin:0;background:#ff00ff"><img src="%s"></body></html>\n' \
		"$svg" >"$svg.html"
	rm -f "$svg.png"
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--screenshot="$tmp/$svg.png" --window-size=$((w + 40)),$((h + 40)) \
		"file://$tmp/$svg.html" >"$svg.log" 2>&1
	fail_log=$svg.log
	[ -s "$svg.png" ] || fail "$svg: no screenshot"
	fail_log=
	python3 - "$svg.png" "$w" "$h" <<'PY' || fail "$svg: rendering"
import struct, sys, zlib
path, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, typ = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if typ == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif typ == b"IDAT":
        idat += body
    pos += 12 + n
W, H, depth, ctype = hdr[0], hdr[1], hdr[2], hdr[3]
bpp = {2: 3, 6: 4}.get(ctype)
if depth != 8 or not bpp:
    sys.exit(f"{path}: unsupported PNG (depth {depth}, colour type {ctype})")
raw, stride, rows, prev = zlib.decompress(idat), W * bpp, [], bytearray(W * bpp)
for y in range(H):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
x0, y0, x1, y1, ink = W, H, -1, -1, 0
for y, line in enumerate(rows):
    for x in range(W):
        r, g, b = line[x * bpp:x * bpp + 3]
        if (r, g, b) == (255, 0, 255):
            continue
        x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
        ink += (r, g, b) != (255, 255, 255)
bw, bh = x1 - x0 + 1, y1 - y0 + 1
name = path[:-4]
if x1 < 0:
    sys.exit(f"{name}: nothing rendered")
if abs(bw - w) > 1 or abs(bh - h) > 1:
    sys.exit(f"{name}: rendered {bw}x{bh}, declared {w}x{h}")
if ink < bw * bh // 500:
    sys.exit(f"{name}: blank ({ink} drawn pixels of {bw * bh})")
print(f"ok {name}: {bw}x{bh} as declared, {ink} drawn pixels")
PY
	ok
done
# demo-timeline, sim, replay, and demo-tree where Graphviz is installed
want=3
command -v dot >/dev/null 2>&1 && want=4
[ "$svgs" -eq "$want" ] || fail "$svgs SVG files written, expected $want:" *
echo "test_svg_render: $n checks passed, $svgs SVG files rendered"
