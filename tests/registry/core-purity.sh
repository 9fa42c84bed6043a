#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The pure core makes no system call and reads no clock: every symbol its library leaves undefined
# is its own, base/'s or calendar/'s, or a libc memory, string or sorting function (or the assert,
# fortify, sanitizer and PIC helpers the build adds).
# Usage: core-purity.sh CORE.a BASE.a CALENDAR.a
set -eu
core=$1
shift
defined=$(nm --defined-only "$core" "$@" | awk 'NF == 3 { print $3 }' | sort -u)
undefined=$(nm -u "$core" | awk 'NF == 2 { print $2 }' | sort -u)
allowed='^(_GLOBAL_OFFSET_TABLE_|qsort|malloc|calloc|realloc|reallocarray|free|mem[a-z]*|str[a-z]*|__assert_fail|__stack_chk_fail|__[a-z_]*_chk|__(a|ub|l)san_.*|__sanitizer_.*)$'
impure=$(printf '%s\n' "$undefined" | grep -vxF -e "$defined" | grep -vE "$allowed" || true)
if [ -n "$impure" ]; then
        echo "the core calls outside base/, calendar/ and libc's memory, string and sorting functions:" >&2
        printf '  %s\n' $impure >&2
        exit 1
fi
echo "pure: $(printf '%s\n' "$undefined" | grep -cvxF -e "$defined") outside symbols, all allowed"
