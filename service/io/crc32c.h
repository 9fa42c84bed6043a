/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of the journal's records. */

#include <stddef.h>
#include <stdint.h>

/* Continue `crc` (0 to start) over `size` bytes: crc32c(crc32c(0, a), b) == crc32c(0, a || b). */
uint32_t crc32c(uint32_t crc, const void *data, size_t size);
