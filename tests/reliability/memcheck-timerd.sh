#!/bin/sh
# timerd under valgrind's memcheck, for test-memcheck: any memory error or leak at exit makes the
# exit status 99. The harness runs it as $TIMERD_BIN; $TIMERD_MEMCHECK_TARGET is the real timerd.
exec valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --track-origins=yes \
        "$TIMERD_MEMCHECK_TARGET" "$@"
