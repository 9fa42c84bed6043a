#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The examples as a user builds them: `meson install` of the build into a temporary DESTDIR, then
# each example compiled with plain gcc, -Wall -Wextra -Werror and `pkg-config --cflags --libs
# libtimerd` finding the installed library there, and run against the installed timerd.
# Usage: build-installed.sh MESON BUILD_DIR EXAMPLES_DIR SANITIZE NAME=[ARGUMENT]...
set -eu
meson=$1
build=$2
examples=$3
sanitize=$4
shift 4

fail() { echo "FAIL: $*"; exit 1; }
dir=$(mktemp -d /tmp/timerd-examples.XXXXXX)
trap 'rm -rf "$dir"' EXIT
dest=$dir/dest

"$meson" install -C "$build" --destdir "$dest" --no-rebuild --quiet >"$dir/install.log" 2>&1 ||
        fail "meson install: $(cat "$dir/install.log")"
pc=$(find "$dest" -name libtimerd.pc)
[ -n "$pc" ] || fail "meson install did not install libtimerd.pc"
timerd=$(find "$dest" -path '*/sbin/timerd')
[ -n "$timerd" ] || fail "meson install did not install timerd"
# The .pc names the prefix; the sysroot puts the DESTDIR in front of its -I and -L.
PKG_CONFIG_PATH=$(dirname "$pc")
PKG_CONFIG_SYSROOT_DIR=$dest
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
flags=$(pkg-config --cflags --libs libtimerd) || fail "pkg-config does not find libtimerd"
libdir=$(dirname "$PKG_CONFIG_PATH") # the .pc is in LIBDIR/pkgconfig
# A sanitized libtimerd needs its programs linked with the sanitizer runtime.
sanitizer=""
[ "$sanitize" = none ] || sanitizer="-fsanitize=$sanitize"

for example in "$@"; do
        name=${example%%=*}
        argument=${example#*=}
        echo "== $name: gcc -Wall -Wextra -Werror $name.c $flags $sanitizer"
        # shellcheck disable=SC2086 # the flags are words, as in $(pkg-config ...)
        gcc -Wall -Wextra -Werror $sanitizer -o "$dir/$name" "$examples/$name.c" $flags ||
                fail "$name.c does not build against the installed library"
        # shellcheck disable=SC2086 # no argument is no word
        LD_LIBRARY_PATH="$libdir" "$examples/run-with-timerd.sh" "$timerd" "$dir/$name" \
                $argument || fail "$name, built against the installed library, failed"
done
echo "all examples build and run against the installed library"
