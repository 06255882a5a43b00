/* A fast non-cryptographic hash for keys and comparisons (never for anything an adversary
 * could exploit by collision: callers compare the bytes, or only share a bucket). */
#ifndef PADDOCK_COMMON_HASH_H
#define PADDOCK_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

/* 64-bit FNV-1a of n bytes. */
uint64_t hash_fnv1a(const void *data, size_t n);

#endif
