/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * TZif zone data from a hostile file. Beyond not crashing: a refusal is -EINVAL or -ENOMEM with
 * a typed reason; a zone that parsed answers offsets within ±26 h, and every local time it
 * resolves maps back to itself (instants) or lies in the gap it names.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "calendar/tzif.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
        fprintf(stderr, "fuzz-tzif: %s\n", what);
        abort();
}

static void check_zone(const struct tz_zone *zone)
{
        /* Instants from 1900 to 2200, a little over 3 days apart, and the far future. */
        for (int64_t t = -2208988800; t < 7258118400; t += 277777) {
                struct tz_local local = tz_zone_local(zone, t);
                if (local.utoff > TZ_UTOFF_MAX || local.utoff < -TZ_UTOFF_MAX)
                        fail("an offset beyond 26 h");
                int64_t instants[2], gap_end;
                int64_t wall = t + local.utoff;
                unsigned n = tz_zone_resolve(zone, wall, instants, &gap_end);
                if (n == 0)
                        fail("the wall time of a real instant does not resolve");
                for (unsigned i = 0; i < n; i++)
                        if (instants[i] + tz_zone_local(zone, instants[i]).utoff != wall)
                                fail("a resolved instant has another wall time");
        }
        struct tz_transition tr;
        int64_t t = 0;
        for (int i = 0; i < 100 && tz_zone_next_transition(zone, t, &tr); i++) {
                if (tr.at <= t)
                        fail("transitions do not move forwards");
                t = tr.at;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct tz_zone *zone;
        enum tz_error error;
        int r = tz_zone_parse_tzif(data, size, &zone, &error);
        if (r < 0) {
                if ((r != -EINVAL && r != -ENOMEM) || error == TZ_E_NONE || error >= TZ_E_MAX)
                        fail("an undocumented error");
                return 0;
        }
        check_zone(zone);
        tz_zone_free(zone);
        return 0;
}
