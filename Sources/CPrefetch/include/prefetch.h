#ifndef FRESHET_PREFETCH_H
#define FRESHET_PREFETCH_H

/// Asks the CPU to bring the cache line holding `address` into its caches for a read soon
/// (`__builtin_prefetch(address, 0, 3)`: x86_64 `prefetcht0`, ARMv8 `prfm pldl1keep`). A hint
/// only: it never faults, so any address is allowed, and it changes no value. Swift has no
/// prefetch of its own; the log tools' fold asks for the hash slots and entries of the records
/// several records ahead with it (docs/performance.md, "Issue 8 speed round 7 (fold side)").
static inline void freshet_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
