/*
 * CRC-32C (Castagnoli), the checksum of every record of the journal, the
 * snapshot (recfile.h) and run files (run.h). Pure logic, no I/O.
 */
#ifndef HOSTRANGE_CRC32C_H
#define HOSTRANGE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C (Castagnoli) of buf, continuing from crc (0 to start). */
uint32_t hrr_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
