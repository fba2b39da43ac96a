// CRC-32C for the log's record checksums (docs/log-format.md). The CPU instruction where there
// is one (x86_64 SSE4.2 `crc32`, ARMv8 `crc32c*`; three streams at once from 768 bytes up),
// chosen at run time; otherwise slicing-by-8
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
#define HARDWARE __attribute__((target("sse4.2")))

HARDWARE static inline uint64_t step8(uint64_t crc, uint64_t v) { return __builtin_ia32_crc32di(crc, v); }
HARDWARE static inline uint32_t step1(uint32_t crc, uint8_t b) { return __builtin_ia32_crc32qi(crc, b); }

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
#define HARDWARE __attribute__((target("crc")))

HARDWARE static inline uint64_t step8(uint64_t crc, uint64_t v) { return __builtin_arm_crc32cd((uint32_t)crc, v); }
HARDWARE static inline uint32_t step1(uint32_t crc, uint8_t b) { return __builtin_arm_crc32cb(crc, b); }

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

#if defined(HAVE_HARDWARE_PATH)
// Three streams at once. The CRC32 instruction takes 3 cycles, but a new one can start every
// cycle, so a single dependent chain uses a third of it. A block of 3 × LONG (or 3 × SHORT)
// bytes is checksummed as three independent streams — the second and third starting from 0 —
// which are then combined. For the raw register (no pre/post inversion) the checksum is linear
// over GF(2): crc(r, a‖b) = shift(crc(r, a), |b|) ⊕ crc(0, b), where shift(r, n) is r after n
// zero bytes. shift is a linear map of the 32 bits of r, so it is four table lookups (one per
// byte of r); the tables are built once from the images of the 32 one-bit registers.
#define LONG 8192
#define SHORT 256
static uint32_t shift_long[4][256], shift_short[4][256];

HARDWARE static void make_shift(uint32_t table[4][256], size_t zeros) {
    uint32_t image[32];
    for (int bit = 0; bit < 32; bit++) {
        uint64_t c = 1u << bit;
        for (size_t i = 0; i < zeros; i += 8) c = step8(c, 0);
        image[bit] = (uint32_t)c;
    }
    for (int k = 0; k < 4; k++) {
        for (uint32_t b = 0; b < 256; b++) {
            uint32_t v = 0;
            for (int j = 0; j < 8; j++) if (b & (1u << j)) v ^= image[8 * k + j];
            table[k][b] = v;
        }
    }
}

static inline uint32_t shift(uint32_t table[4][256], uint32_t crc) {
    return table[0][crc & 0xFF] ^ table[1][(crc >> 8) & 0xFF] ^ table[2][(crc >> 16) & 0xFF] ^ table[3][crc >> 24];
}

// `block` bytes from each of three adjacent parts at p, then combined (see above).
HARDWARE static inline uint32_t three_streams(uint32_t crc, const uint8_t *p, size_t block, uint32_t table[4][256]) {
    uint64_t c0 = crc, c1 = 0, c2 = 0;
    for (size_t i = 0; i < block; i += 8) {
        uint64_t v0, v1, v2;
        memcpy(&v0, p + i, 8);
        memcpy(&v1, p + block + i, 8);
        memcpy(&v2, p + 2 * block + i, 8);
        c0 = step8(c0, v0);
        c1 = step8(c1, v1);
        c2 = step8(c2, v2);
    }
    return shift(table, shift(table, (uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
}

HARDWARE static uint32_t crc_hardware(uint32_t crc, const uint8_t *p, size_t n) {
    while (n >= 3 * LONG) {
        crc = three_streams(crc, p, LONG, shift_long);
        p += 3 * LONG;
        n -= 3 * LONG;
    }
    while (n >= 3 * SHORT) {
        crc = three_streams(crc, p, SHORT, shift_short);
        p += 3 * SHORT;
        n -= 3 * SHORT;
    }
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = step8(c, v);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n-- > 0) c32 = step1(c32, *p++);
    return c32;
}
#endif

static int hardware = -1;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

static void run_detect(void) {
#if defined(HAVE_HARDWARE_PATH)
    hardware = detect();
    if (hardware) {
        make_shift(shift_long, LONG);
        make_shift(shift_short, SHORT);
    }
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
