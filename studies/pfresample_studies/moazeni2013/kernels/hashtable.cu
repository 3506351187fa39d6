// Moazeni (2013), chapter 4: the lock-free chained hash table and the parallel hash
// table PH[n] on the GPU (GPU_BASIC: n = 1; GPU_PH; GPU_BIG: n = 1 with n m buckets),
// one thread an operation of the batch (bulk execution, §4.4.2). The layout and the
// algorithm are those of studies/pfresample_studies/moazeni2013/native/hashtable.cpp (the
// CPU threads' code; its checker reads these arrays too): a pool of nodes linked by
// index, <Mark, Next> in one 32-bit word (mark in the left-most bit), heads[t * m + b].
// A node's key and next are written, then a fence, then the CAS that links it, so a
// thread that reads the index reads the key; loads of shared words are volatile.

#define HT_MARK 0x80000000u
#define HT_NIL 0x7FFFFFFFu

enum { HT_SEARCH = 0, HT_INSERT = 1, HT_DELETE = 2 };
enum { HT_FALSE = 0, HT_TRUE = 1, HT_POOL_FULL = 2 };
enum { HT_RESTARTS = 0, HT_CAS_FAILURES = 1, HT_STEPS = 2, HT_WASTED = 3, HT_STATS = 4 };

__device__ __forceinline__ unsigned ht_load(const unsigned* p) { return *(const volatile unsigned*)p; }

// The key's 4 float bytes, least significant first (order 0, LSB) or most significant
// first (order 1, MSB), as native/hashtable.cpp feeds them to the byte-wise hashes.
__device__ __forceinline__ unsigned ht_byte(unsigned bits, int i, int order) {
    return (bits >> (order ? 8 * (3 - i) : 8 * i)) & 0xFF;
}

__device__ unsigned ht_hash(float key, int kind, int order) {
    const unsigned bits = __float_as_uint(key);
    unsigned h = 0;
    if (kind == 0) {  // DEK
        h = 4;
        for (int i = 0; i < 4; ++i) h = ((h << 5) ^ (h >> 27)) ^ ht_byte(bits, i, order);
    } else if (kind == 1) {  // SDBM
        for (int i = 0; i < 4; ++i) h = ht_byte(bits, i, order) + (h << 6) + (h << 16) - h;
    } else if (kind == 2) {  // PJW
        for (int i = 0; i < 4; ++i) {
            h = (h << 4) + ht_byte(bits, i, order);
            const unsigned g = h & 0xF0000000u;
            if (g) h = (h ^ (g >> 24)) & ~g;
        }
    } else {  // murmur3 fmix32 of the whole word (no bytes, so no order)
        h = bits;
        h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
    }
    return h;
}

struct HtTable {
    unsigned* heads;
    float* keys;
    unsigned* next;
    unsigned* pool;
    unsigned capacity;
    int tables, buckets, hash, order;

    __device__ unsigned* head_of(float key) const {
        const unsigned long long scaled = (unsigned long long)((double)key * 1e6);
        const unsigned t = (unsigned)(scaled % (unsigned long long)tables);
        return heads + (unsigned long long)t * buckets + ht_hash(key, hash, order) % (unsigned)buckets;
    }

    __device__ bool find(unsigned* head, float key, unsigned*& prev, unsigned& cur,
                         unsigned& nxt, unsigned* st) const {
    try_again:
        prev = head;
        cur = ht_load(prev) & HT_NIL;
        while (true) {
            if (cur == HT_NIL) return false;
            ++st[HT_STEPS];
            const unsigned w = ht_load(next + cur);
            nxt = w & HT_NIL;
            const float ckey = *(const volatile float*)(keys + cur);
            if (ht_load(prev) != cur) {  // A
                ++st[HT_RESTARTS];
                goto try_again;
            }
            if (!(w & HT_MARK)) {
                if (ckey >= key) return ckey == key;
                prev = next + cur;
            } else if (atomicCAS(prev, cur, nxt) != cur) {
                ++st[HT_CAS_FAILURES];
                ++st[HT_RESTARTS];
                goto try_again;
            }
            cur = nxt;
        }
    }
};

// One operation of the batch (its result into *result, its counters into st).
__device__ void ht_operation(unsigned* heads, float* keys, unsigned* next, unsigned* pool,
                             unsigned capacity, int tables, int buckets, int hash, int order,
                             unsigned char op, float key, unsigned char* result_out,
                             unsigned* st) {
    HtTable t{heads, keys, next, pool, capacity, tables, buckets, hash, order};
    unsigned* head = t.head_of(key);
    unsigned *prev, cur, nxt;
    unsigned char result = HT_FALSE;
    if (op == HT_INSERT) {
        const unsigned node = atomicAdd(pool, 1u);
        if (node >= capacity) {
            result = HT_POOL_FULL;
        } else {
            keys[node] = key;
            while (true) {
                if (t.find(head, key, prev, cur, nxt, st)) {
                    ++st[HT_WASTED];
                    break;
                }
                next[node] = cur;
                __threadfence();  // the key and the link before the node is published
                if (atomicCAS(prev, cur, node) == cur) {  // B
                    result = HT_TRUE;
                    break;
                }
                ++st[HT_CAS_FAILURES];
            }
        }
    } else if (op == HT_DELETE) {
        while (true) {
            if (!t.find(head, key, prev, cur, nxt, st)) break;
            if (atomicCAS(next + cur, nxt, nxt | HT_MARK) != nxt) {  // C
                ++st[HT_CAS_FAILURES];
                continue;
            }
            if (atomicCAS(prev, cur, nxt) != cur) {  // D
                ++st[HT_CAS_FAILURES];
                t.find(head, key, prev, cur, nxt, st);
            }
            result = HT_TRUE;
            break;
        }
    } else {
        result = t.find(head, key, prev, cur, nxt, st) ? HT_TRUE : HT_FALSE;
    }
    *result_out = result;
}

extern "C" __global__ void ht_batch(unsigned* heads, float* keys, unsigned* next, unsigned* pool,
                                    unsigned capacity, int tables, int buckets, int hash,
                                    int order, const unsigned char* ops, const float* op_keys,
                                    long long count, unsigned char* results,
                                    unsigned long long* stats) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned st[HT_STATS] = {0, 0, 0, 0};
    if (i < count) ht_operation(heads, keys, next, pool, capacity, tables, buckets, hash,
                                order, ops[i], op_keys[i], results + i, st);
    // The counters summed over the warp first: one atomic a warp, not one a thread (a
    // batch's 2^18 threads adding to the same four words serialise on them). Every
    // thread of the warp takes part (blockDim is a multiple of 32).
    for (int k = 0; k < HT_STATS; ++k) {
        unsigned long long v = st[k];
        for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
        if ((threadIdx.x & 31) == 0 && v) atomicAdd(stats + k, v);
    }
}

// The hash of each key (kind, byte order): the tests set it beside the CPU's.
extern "C" __global__ void ht_hash_keys(const float* keys, long long n, int kind, int order,
                                        unsigned* out) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = ht_hash(keys[i], kind, order);
}

// delay_ns, launched before a timed batch's start event (hashtable_gpu.py)
#include "delay.cuh"
