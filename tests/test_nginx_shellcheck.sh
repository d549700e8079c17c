#!/bin/sh
# SPDX-License-Identifier: MIT
# The nginx scripts (contrib/nginx, bench/nginx) and their tests are
# clean by shellcheck (lib.sh followed).
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
scratch err
need shellcheck "shellcheck of the nginx scripts" shellcheck
expect 0 "shellcheck" shellcheck -x contrib/nginx/build.sh contrib/nginx/test.sh bench/nginx/run.sh \
	tests/test_nginx_scripts.sh tests/test_nginx_shellcheck.sh
echo "$n checks"
