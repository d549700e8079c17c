#!/bin/sh
# SPDX-License-Identifier: MIT
# libhrt.so exports exactly the HRT_EXTERN functions of include/hrt.h, each
# under the version node HRT_1.0 (src/libhrt.map), and nothing else: no
# internal hrt__ function, no unversioned symbol, no function of hrt.h left
# out.  Read with nm -D (binutils, part of build-essential).
set -u
. "$(dirname "$0")/lib.sh"
O=${O:-build}
scratch bad
so=$O/libhrt.so
sed -n 's/^HRT_EXTERN[^(]*[^A-Za-z0-9_(]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' include/hrt.h |
	sort -u >"$t/declared"
[ -s "$t/declared" ] || fail "include/hrt.h: no HRT_EXTERN function found"
nm -D --defined-only "$so" >"$t/nm" || fail "nm -D $so"
# The node's own symbol ("A HRT_1.0") aside, every line: T name@@HRT_1.0.
awk '!($2 == "A" && $3 == "HRT_1.0") && !($2 == "T" && $3 ~ /^[a-z_0-9]+@@HRT_1\.0$/)' "$t/nm" >"$t/bad"
[ ! -s "$t/bad" ] || fail "$so exports symbols outside HRT_1.0 or not functions"
ok
grep -q ' A HRT_1.0$' "$t/nm" || fail "$so defines no version node HRT_1.0"
ok
sed -n 's/.* T \(.*\)@@HRT_1\.0$/\1/p' "$t/nm" | sort >"$t/exported"
comm -3 "$t/declared" "$t/exported" | sed 's/^\t/exported, not in hrt.h: /;t;s/^/in hrt.h, not exported: /' >"$t/bad"
[ ! -s "$t/bad" ] || fail "$so and include/hrt.h differ"
ok
echo "test_exports: $n checks passed: $(wc -l <"$t/exported") functions, all of hrt.h, each @@HRT_1.0"
