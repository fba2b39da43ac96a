// CRC-32C for the log's record checksums (docs/log-format.md). The CPU instruction where there
// is one (x86_64 SSE4.2 `crc32`, ARMv8 `crc32c*`), chosen at run time; otherwise slicing-by-8
// (Intel's "Slicing-by-8" tables: eight table lookups per 8 bytes instead of one per byte).
#include "crc32c.h"
#include <pthread.h>
#include <string.h>

#define POLY 0x82F63B78u

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = table[0][n];
        for (int k = 1; k < 8; k++) {
            c = table[0][c & 0xFF] ^ (c >> 8);
            table[k][n] = c;
        }
    }
}

static uint32_t crc_tables(uint32_t crc, const uint8_t *p, size_t n) {
    pthread_once(&table_once, make_table);
    while (n > 0 && ((uintptr_t)p & 7) != 0) {
        crc = table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap64(v);
#endif
        uint32_t lo = (uint32_t)v ^ crc;
        uint32_t hi = (uint32_t)(v >> 32);
        crc = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^ table[5][(lo >> 16) & 0xFF] ^ table[4][lo >> 24] ^
              table[3][hi & 0xFF] ^ table[2][(hi >> 8) & 0xFF] ^ table[1][(hi >> 16) & 0xFF] ^ table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0) crc = table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
#include <cpuid.h>

__attribute__((target("sse4.2")))
static uint32_t crc_hardware(uint32_t crc, const uint8_t *p, size_t n) {
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n-- > 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}

static int detect(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c & (1u << 20)) != 0; // CPUID.01H:ECX.SSE4_2[bit 20]
}
#define HAVE_HARDWARE_PATH 1

#elif defined(__aarch64__)
#if defined(__linux__)
#include <sys/auxv.h>
#endif

__attribute__((target("crc")))
static uint32_t crc_hardware(uint32_t crc, const uint8_t *p, size_t n) {
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        crc = __builtin_arm_crc32cd(crc, v);
        p += 8;
        n -= 8;
    }
    while (n-- > 0) crc = __builtin_arm_crc32cb(crc, *p++);
    return crc;
}

static int detect(void) {
#if defined(__APPLE__)
    return 1; // every Apple arm64 CPU has the ARMv8 CRC32 extension
#elif defined(__linux__)
    return (getauxval(AT_HWCAP) & (1ul << 7)) != 0; // HWCAP_CRC32
#else
    return 0;
#endif
}
#define HAVE_HARDWARE_PATH 1
#endif

static int hardware = -1;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

static void run_detect(void) {
#if defined(HAVE_HARDWARE_PATH)
    hardware = detect();
#else
    hardware = 0;
#endif
}

int freshet_crc32c_hardware(void) {
    pthread_once(&detect_once, run_detect);
    return hardware;
}

uint32_t freshet_crc32c_portable(uint32_t crc, const void *data, size_t length) {
    return ~crc_tables(~crc, (const uint8_t *)data, length);
}

uint32_t freshet_crc32c(uint32_t crc, const void *data, size_t length) {
#if defined(HAVE_HARDWARE_PATH)
    if (freshet_crc32c_hardware()) return ~crc_hardware(~crc, (const uint8_t *)data, length);
#endif
    return freshet_crc32c_portable(crc, data, length);
}
