/* Moazeni (2013), chapter 4: the best CPU code we can write for the chapter's workload
 * (a concurrent set of float32 keys in (0, 1): batches of searches, inserts and deletes,
 * §4.4.2's bulk execution), on every core, and the bounds it is held to.
 * pfresample_studies.moazeni2013.hashtable_best builds and calls it.
 *
 * The table: open addressing with linear probing (Knuth, TAOCP vol. 3 §6.4, Algorithm
 * L) over 2^b 32-bit slots. A key's home is murmur3's finaliser (fmix32) of its bits
 * mod 2^b, and its probe sequence runs from the first slot of the home's cache line
 * (16 slots) onward, a line at a time. A slot is EMPTY (0), a key's bits (present), or
 * the key's bits with the sign bit set (the key deleted: a tombstone that still names
 * its key; a key in (0, 1) never has the sign bit). One word a slot, so one CAS changes
 * a slot's whole state. The lock-free rules (a linear-probing set whose slots are never
 * reused, as Folly's AtomicHashArray leaves an erased key's slot marked; the facts, not
 * the code):
 *   - a slot only goes EMPTY -> k (insert's CAS), k -> k|MARK (delete's CAS) and
 *     k|MARK -> k (insert of a deleted key, its CAS); it never holds another key and
 *     never becomes EMPTY again. So a key owns at most one slot for the table's life,
 *     the first slot of its probe sequence that was EMPTY or its own when it claimed
 *     it, and every slot before that one holds another key for good.
 *   - search(k) walks the sequence: k -> true; k|MARK or EMPTY -> false (the key is
 *     absent at the moment of that read); another key -> the next slot.
 *   - insert(k) walks the same way: k -> false; EMPTY or k|MARK -> CAS it to k: done
 *     (true), or, where the CAS fails, the same slot is read again (another insert of k
 *     may have won it: false; another key may have: walk on).
 *   - delete(k): k -> CAS to k|MARK: true, or read the slot again where it fails;
 *     k|MARK or EMPTY -> false.
 * No node pool, no pointers, no ABA (a slot's key never changes); deleted keys keep
 * their slots, as the thesis's pool keeps its nodes (DeleteNode frees nothing), so the
 * caller sizes the table for the preload plus every insert (BestHashSet.reserve).
 *
 * Speed: the slots are 4 bytes, 16 a cache line; at load <= 1/2 a key's line nearly
 * always ends its walk, so an operation is one random cache-line access, and one vector
 * compare (AVX-512, else AVX2, else a loop) finds the lane that decides it, with no
 * data-dependent branch on the common path. A thread's operations are independent of
 * each other, so each thread prefetches the home line of the operation PREFETCH places
 * ahead (with write intent for inserts and deletes): the memory system serves many
 * lines at once instead of one latency an operation.
 *
 * Threads: one OpenMP parallel region runs every run of a batch (the caller drops the
 * first, a warm-up);
 * each run starts after a barrier (the threads exist and wait: no thread is created
 * inside the clock), its time runs from the first thread's start to the last thread's
 * end (the barrier after the run), by omp_get_wtime. Between runs (outside the clock)
 * the table is restored from the caller's snapshot, so every run starts from the same
 * state. Thread t takes the t-th contiguous share of the batch (bulk execution).
 *
 * The bounds (hb_bound, the same keys, threads, shares and prefetching, no table
 * logic): GATHER, one 4-byte read at each key's home slot (what a search costs at
 * least); CAS, a read and a compare-and-swap at each key's home slot (what an insert
 * or a delete costs at least), on an array of the table's size. */
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#define EMPTY 0u
#define MARK 0x80000000u
#define PREFETCH 16 /* operations ahead: the memory-level parallelism a thread asks for */
#define MAX_THREADS 1024
#define LINE 16 /* slots a 64-byte cache line */

enum { SEARCH = 0, INSERT = 1, DELETE = 2 };
enum { FALSE = 0, TRUE = 1, FULL = 2 };
/* counters a thread keeps (stats[thread * STATS + i]) */
enum { LINES = 0, CAS_FAILURES = 1, CLAIMED = 2, FULLS = 3, STATS = 4 };
/* the tests' negative controls (0 in use): 1, a search stops at any tombstone (wrong
 * where a key sits past a deleted key's slot); 2, a delete empties its slot (breaks
 * the probe path of every key placed past it) */
enum { FLAW_NONE = 0, FLAW_SEARCH_STOPS_AT_TOMBSTONE = 1, FLAW_DELETE_EMPTIES = 2 };

/* murmur3's 32-bit finaliser (fmix32): every input bit moves every output bit */
static inline uint32_t hb_hash(uint32_t x) {
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

static inline uint32_t hb_load(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

static inline int hb_cas(uint32_t *p, uint32_t expected, uint32_t desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

/* The lanes of the line at p (16 slots, 64 bytes aligned) that end k's walk: k, k|MARK,
 * EMPTY and, with flaw 1, any tombstone. One vector compare where the CPU has one; a
 * vector load is only a hint (its lanes may be stale): each candidate lane is read
 * again atomically before it decides anything. */
static inline uint32_t hb_match(const uint32_t *p, uint32_t k, int flaw) {
#if defined(__AVX512F__)
    __m512i v = _mm512_load_si512((const void *)p);
    __mmask16 m = _mm512_cmpeq_epi32_mask(v, _mm512_set1_epi32((int)k)) |
                  _mm512_cmpeq_epi32_mask(v, _mm512_set1_epi32((int)(k | MARK))) |
                  _mm512_cmpeq_epi32_mask(v, _mm512_setzero_si512());
    if (flaw == FLAW_SEARCH_STOPS_AT_TOMBSTONE)
        m |= _mm512_test_epi32_mask(v, _mm512_set1_epi32((int)MARK));
    return (uint32_t)m;
#elif defined(__AVX2__)
    uint32_t m = 0;
    for (int h = 0; h < 2; ++h) {
        __m256i v = _mm256_load_si256((const __m256i *)(p + 8 * h));
        __m256i e = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi32(v, _mm256_set1_epi32((int)k)),
                            _mm256_cmpeq_epi32(v, _mm256_set1_epi32((int)(k | MARK)))),
            _mm256_cmpeq_epi32(v, _mm256_setzero_si256()));
        if (flaw == FLAW_SEARCH_STOPS_AT_TOMBSTONE)
            e = _mm256_or_si256(e, _mm256_srai_epi32(v, 31));
        m |= (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(e)) << (8 * h);
    }
    return m;
#else
    uint32_t m = 0;
    for (int j = 0; j < LINE; ++j) {
        uint32_t s = p[j];
        int end = s == k || s == (k | MARK) || s == EMPTY;
        if (flaw == FLAW_SEARCH_STOPS_AT_TOMBSTONE) end |= (s & MARK) != 0;
        m |= (uint32_t)end << j;
    }
    return m;
#endif
}

/* The walk of the header's rules, one line at a time from the key's home line
 * (linear probing whose probe sequence starts at the line's first slot): the first
 * lane, in probe order, whose atomic read ends the walk decides the operation. A lane
 * the vector read saw as another key holds that key for good; a lane it saw EMPTY may
 * hold another key by now (read again: the walk goes on). Returns the op's result;
 * at most the whole table is walked (FULL, for an insert, where it was). */
static inline uint8_t hb_op(uint32_t *slots, uint32_t mask, int op, uint32_t k, int flaw,
                            uint64_t *st) {
    uint32_t g = hb_hash(k) & mask & ~(uint32_t)(LINE - 1);
    uint32_t dead = flaw == FLAW_DELETE_EMPTIES ? EMPTY : (k | MARK);
    for (uint64_t n = 0; n <= mask; n += LINE, g = (g + LINE) & mask) {
        uint32_t m = hb_match(slots + g, k, flaw);
        ++st[LINES];
        while (m) {
            uint32_t *p = slots + g + __builtin_ctz(m);
            uint32_t s = hb_load(p);
            if (s == k) {
                if (op != DELETE) return op == SEARCH ? TRUE : FALSE;
                if (hb_cas(p, k, dead)) return TRUE;
                ++st[CAS_FAILURES];
                continue; /* the same slot again: a racing delete or insert decides */
            }
            if (s == EMPTY || s == (k | MARK)) {
                if (op != INSERT) return FALSE;
                if (hb_cas(p, s, k)) {
                    st[CLAIMED] += (s == EMPTY);
                    return TRUE;
                }
                ++st[CAS_FAILURES];
                continue;
            }
            if (flaw == FLAW_SEARCH_STOPS_AT_TOMBSTONE && op == SEARCH && (s & MARK))
                return FALSE;
            m &= m - 1; /* another key took this slot since the vector read */
        }
    }
    if (op == INSERT) {
        ++st[FULLS];
        return FULL;
    }
    return FALSE;
}

/* One thread's share [lo, hi) of a batch, in index order; the home line of the
 * operation PREFETCH places ahead is prefetched before each operation runs. (Grouping a
 * share by kind first, which bulk execution allows since a batch's operations have no
 * order among them, saved 5-10 % at 33-50 % search and cost 15 % at 90 % on an EPYC
 * core: not kept.) */
static void hb_share(uint32_t *slots, uint32_t mask, const uint8_t *ops, const uint32_t *keys,
                     int64_t lo, int64_t hi, uint8_t *results, int flaw, uint64_t *st) {
    for (int64_t i = lo; i < hi; ++i) {
        int64_t j = i + PREFETCH;
        if (j < hi) {
            const uint32_t *line = slots + (hb_hash(keys[j]) & mask & ~(uint32_t)(LINE - 1));
            if (ops[j] == SEARCH) __builtin_prefetch(line, 0, 3);
            else __builtin_prefetch(line, 1, 3);
        }
        results[i] = hb_op(slots, mask, ops[i], keys[i], flaw, st);
    }
}

/* The bounds' share: GATHER sums the home slots' words (returned, so that no read is
 * dropped); CAS reads each home slot and swaps it for its value plus one. */
static uint64_t hb_bound_share(uint32_t *arr, uint32_t mask, const uint32_t *keys, int64_t lo,
                               int64_t hi, int kind) {
    uint64_t sum = 0;
    for (int64_t i = lo; i < hi; ++i) {
        int64_t j = i + PREFETCH;
        if (j < hi) {
            const uint32_t *line = arr + (hb_hash(keys[j]) & mask);
            if (kind) __builtin_prefetch(line, 1, 3);
            else __builtin_prefetch(line, 0, 3);
        }
        uint32_t *p = arr + (hb_hash(keys[i]) & mask);
        uint32_t s = hb_load(p);
        sum += s;
        if (kind) sum += (uint64_t)hb_cas(p, s, s + 1);
    }
    return sum;
}

/* The timed runner of both entry points: `runs` runs of a batch (kind < 0: the table;
 * 0, 1: a bound) in one parallel region, seconds[r] each; snapshot (2^b words, or NULL)
 * restores the slots before every run. Returns the threads that ran, -1 where OpenMP
 * gave fewer than asked, -2 for bad arguments. */
static int hb_runner(uint32_t *slots, int log2, const uint32_t *snapshot, const uint8_t *ops,
                     const uint32_t *keys, int64_t n, uint8_t *results, int threads, int runs,
                     double *seconds, uint64_t *stats, uint64_t *sums, int kind, int flaw) {
    if (threads < 1 || threads > MAX_THREADS || log2 < 4 || log2 > 31 || runs < 1 || n < 0 ||
        n > INT32_MAX)
        return -2;
    uint32_t mask = (uint32_t)((1ull << log2) - 1);
    int64_t size = (int64_t)mask + 1;
    double starts[MAX_THREADS];
    int got = threads;
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), T = omp_get_num_threads();
#pragma omp single
        got = T;
        int64_t lo = n * t / T, hi = n * (t + 1) / T;
        if (T == threads) {
            for (int r = 0; r < runs; ++r) {
                if (snapshot) {
#pragma omp for schedule(static)
                    for (int64_t j = 0; j < size; ++j) slots[j] = snapshot[j];
                }
                uint64_t st[STATS] = {0, 0, 0, 0};
#pragma omp barrier
                starts[t] = omp_get_wtime();
                uint64_t sum = 0;
                if (kind < 0) hb_share(slots, mask, ops, keys, lo, hi, results, flaw, st);
                else sum = hb_bound_share(slots, mask, keys, lo, hi, kind);
#pragma omp barrier
#pragma omp master
                {
                    double end = omp_get_wtime(), first = starts[0];
                    for (int q = 1; q < T; ++q) first = starts[q] < first ? starts[q] : first;
                    seconds[r] = end - first;
                }
                if (stats) memcpy(stats + (int64_t)t * STATS, st, sizeof st);
                if (sums) sums[t] = sum;
#pragma omp barrier
            }
        }
    }
    return got == threads ? got : -1;
}

/* A batch of n operations (ops[i] on keys[i], the float32 keys' bits) on `threads`
 * threads, `runs` times (each from `snapshot` where it is not NULL): results[i] 0, 1 or
 * 2 (FULL), seconds[r] the runs' times, stats (threads x 4: slots read, failed CASes,
 * slots claimed from EMPTY, inserts that found the table full) of the last run. */
int hb_batch(uint32_t *slots, int log2, const uint32_t *snapshot, const uint8_t *ops,
             const uint32_t *keys, int64_t n, uint8_t *results, int threads, int runs,
             double *seconds, uint64_t *stats, int flaw) {
    return hb_runner(slots, log2, snapshot, ops, keys, n, results, threads, runs, seconds, stats,
                     NULL, -1, flaw);
}

/* A bound (kind 0 GATHER, 1 CAS) on the keys' home slots of arr (2^log2 words), timed as
 * hb_batch; sums[t] thread t's sum of the words it read (the checksum of GATHER). */
int hb_bound(uint32_t *arr, int log2, const uint32_t *keys, int64_t n, int kind, int threads,
             int runs, double *seconds, uint64_t *sums) {
    if (kind != 0 && kind != 1) return -2;
    return hb_runner(arr, log2, NULL, NULL, keys, n, NULL, threads, runs, seconds, NULL, sums,
                     kind, 0);
}

/* home slot of each key (the tests compare it with NumPy's fmix32) */
void hb_homes(const uint32_t *keys, int64_t n, int log2, uint32_t *out) {
    uint32_t mask = (uint32_t)((1ull << log2) - 1);
    for (int64_t i = 0; i < n; ++i) out[i] = hb_hash(keys[i]) & mask;
}
