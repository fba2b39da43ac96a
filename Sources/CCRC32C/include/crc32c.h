#ifndef FRESHET_CRC32C_H
#define FRESHET_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78; RFC 3720 §B.4), continuing from
/// `crc`, the result for the bytes before `data` (0 for none):
/// `freshet_crc32c(0, "123456789", 9) == 0xE3069283`. Uses the CPU's CRC32 instruction
/// (x86_64 SSE4.2, ARMv8 CRC) when it has one, else a table, 8 bytes at a time.
uint32_t freshet_crc32c(uint32_t crc, const void *data, size_t length);

/// The same checksum without the CPU instruction (slicing-by-8 tables); for tests.
uint32_t freshet_crc32c_portable(uint32_t crc, const void *data, size_t length);

/// 1 when `freshet_crc32c` uses the CPU instruction on this machine, else 0.
int freshet_crc32c_hardware(void);

#endif
