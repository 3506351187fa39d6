// Moazeni (2013), chapter 4: the lock-free chained hash table (Michael's list-based set,
// Figs 20-22) and the parallel hash table PH[n] (§4.5, Table 4, Fig 24) on CPU threads --
// CPU_BASIC (n = 1) and CPU_PH, bulk execution (§4.4.2): a batch of operations shared
// among std::threads. pfresample_studies.moazeni2013.hashtable builds and calls it.
//
// Layout (§4.4.2, Fig 23): a preallocated pool of nodes linked by index; a node's
// <Mark, Next> is one 32-bit word, the mark in the left-most bit, so one CAS updates
// both; heads[table * m + bucket] holds <0, first>. Nodes are never reused within the
// table's life (DeleteNode frees nothing), so an index names one node for good and no
// CAS can succeed on a recycled node (no ABA).
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr uint32_t MARK = 0x80000000u;
constexpr uint32_t NIL = 0x7FFFFFFFu;
enum Op : uint8_t { SEARCH = 0, INSERT = 1, DELETE = 2 };
enum Result : uint8_t { FALSE = 0, TRUE = 1, POOL_FULL = 2 };
enum Hash : int { DEK = 0, SDBM = 1, PJW = 2, MIX = 3 };
// counters a thread keeps (stats[thread * STATS + i])
enum Stat : int { RESTARTS = 0, CAS_FAILURES = 1, STEPS = 2, WASTED = 3, STATS = 4 };

inline uint32_t idx(uint32_t w) { return w & NIL; }
inline bool marked(uint32_t w) { return (w & MARK) != 0; }

inline uint32_t load(uint32_t* p) { return std::atomic_ref<uint32_t>(*p).load(std::memory_order_acquire); }
inline bool cas(uint32_t* p, uint32_t expected, uint32_t desired) {
    return std::atomic_ref<uint32_t>(*p).compare_exchange_strong(
        expected, desired, std::memory_order_acq_rel, std::memory_order_acquire);
}

// The string hashes of the thesis's benchmarks on the key's 4 bytes (the float's bit
// pattern), fed least significant byte first (order 0, LSB) or most significant first
// (order 1, MSB): the thesis does not say how a float key becomes bytes, and the order
// decides how well DEK, SDBM and PJW spread keys that share their high bytes; and a
// well-mixing control (murmur3's fmix32 of the whole word: no bytes, so no order).
inline uint32_t key_byte(uint32_t bits, int i, int order) {
    return (bits >> (order ? 8 * (3 - i) : 8 * i)) & 0xFF;
}

uint32_t hash_key(float key, int kind, int order) {
    uint32_t bits;
    std::memcpy(&bits, &key, 4);
    uint32_t h = 0;
    switch (kind) {
        case DEK:  // Knuth, TAOCP vol. 3 §6.4
            h = 4;
            for (int i = 0; i < 4; ++i) h = ((h << 5) ^ (h >> 27)) ^ key_byte(bits, i, order);
            return h;
        case SDBM:
            for (int i = 0; i < 4; ++i) h = key_byte(bits, i, order) + (h << 6) + (h << 16) - h;
            return h;
        case PJW:
            for (int i = 0; i < 4; ++i) {
                h = (h << 4) + key_byte(bits, i, order);
                uint32_t g = h & 0xF0000000u;
                if (g) h = (h ^ (g >> 24)) & ~g;
            }
            return h;
        default:
            h = bits;
            h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
            return h;
    }
}

struct Table {
    uint32_t* heads;
    float* keys;
    uint32_t* next;
    uint32_t* pool;  // the next free node (atomic counter)
    uint32_t capacity;
    int tables, buckets, hash, order;

    // TA(k) = (k * 10^6) mod n (§4.6.1), the key scaled to an integer first.
    uint32_t* head_of(float key) const {
        uint64_t scaled = (uint64_t)((double)key * 1e6);
        uint32_t t = (uint32_t)(scaled % (uint64_t)tables);
        uint32_t b = hash_key(key, hash, order) % (uint32_t)buckets;
        return heads + (uint64_t)t * buckets + b;
    }

    // Fig 21's Find: the first node whose key >= key, its predecessor's word and the
    // node after it; starts over when *prev changed (line A) or an unlink CAS fails.
    bool find(uint32_t* head, float key, uint32_t*& prev, uint32_t& cur, uint32_t& nxt,
              uint64_t* st) const {
    try_again:
        prev = head;
        cur = idx(load(prev));
        while (true) {
            if (cur == NIL) return false;
            ++st[STEPS];
            uint32_t w = load(next + cur);
            nxt = idx(w);
            float ckey = keys[cur];
            if (load(prev) != cur) {  // A: *prev != <0, cur>
                ++st[RESTARTS];
                goto try_again;
            }
            if (!marked(w)) {
                if (ckey >= key) return ckey == key;
                prev = next + cur;
            } else if (!cas(prev, cur, nxt)) {  // unlink a marked node
                ++st[CAS_FAILURES];
                ++st[RESTARTS];
                goto try_again;
            }
            cur = nxt;
        }
    }

    uint8_t insert(float key, uint64_t* st) {
        uint32_t node = std::atomic_ref<uint32_t>(*pool).fetch_add(1, std::memory_order_relaxed);
        if (node >= capacity) return POOL_FULL;
        keys[node] = key;
        uint32_t* head = head_of(key);
        uint32_t *prev, cur, nxt;
        while (true) {
            if (find(head, key, prev, cur, nxt, st)) {
                ++st[WASTED];  // allocated before the search, as Fig 20's HashInsert
                return FALSE;
            }
            std::atomic_ref<uint32_t>(next[node]).store(cur, std::memory_order_relaxed);
            if (cas(prev, cur, node)) return TRUE;  // B
            ++st[CAS_FAILURES];
        }
    }

    uint8_t search(float key, uint64_t* st) const {
        uint32_t *prev, cur, nxt;
        return find(head_of(key), key, prev, cur, nxt, st) ? TRUE : FALSE;
    }

    uint8_t remove(float key, uint64_t* st) {
        uint32_t* head = head_of(key);
        uint32_t *prev, cur, nxt;
        while (true) {
            if (!find(head, key, prev, cur, nxt, st)) return FALSE;
            if (!cas(next + cur, nxt, nxt | MARK)) {  // C
                ++st[CAS_FAILURES];
                continue;
            }
            if (!cas(prev, cur, nxt)) {  // D; else Find unlinks it
                ++st[CAS_FAILURES];
                find(head, key, prev, cur, nxt, st);
            }
            return TRUE;
        }
    }
};

}  // namespace

extern "C" {

// One batch of `count` operations (ops[i] on keys[i]) by `threads` threads, each a
// contiguous share (bulk execution); results[i] is 0/1, or 2 where the pool was full.
// stats: threads x 4 counters (restarts, CAS failures, nodes visited, nodes wasted).
int ht_batch(uint32_t* heads, float* keys, uint32_t* next, uint32_t* pool, uint32_t capacity,
             int tables, int buckets, int hash, int order, const uint8_t* ops,
             const float* op_keys, int64_t count, uint8_t* results, int threads,
             uint64_t* stats) {
    Table t{heads, keys, next, pool, capacity, tables, buckets, hash, order};
    auto work = [&](int id) {
        uint64_t* st = stats + (int64_t)id * STATS;
        int64_t lo = count * id / threads, hi = count * (id + 1) / threads;
        for (int64_t i = lo; i < hi; ++i) {
            switch (ops[i]) {
                case INSERT: results[i] = t.insert(op_keys[i], st); break;
                case DELETE: results[i] = t.remove(op_keys[i], st); break;
                default: results[i] = t.search(op_keys[i], st); break;
            }
        }
    };
    if (threads <= 1) {
        work(0);
        return 0;
    }
    std::vector<std::thread> pool_threads;
    for (int id = 0; id < threads; ++id) pool_threads.emplace_back(work, id);
    for (auto& th : pool_threads) th.join();
    return 0;
}

// The checker's walk (no other thread running): every list from its head. Writes the
// unmarked keys into out (at most out_size) and returns their count, or a negative
// code: -1 a node reached twice (a cycle or a shared node), -2 unmarked keys not
// strictly increasing in a list, -3 a node in a list its key does not hash to, -4 an
// index past the pool, -5 out too small.
int64_t ht_collect(const uint32_t* heads, const float* keys, const uint32_t* next,
                   uint32_t used, int tables, int buckets, int hash, int order, float* out,
                   int64_t out_size, uint8_t* seen) {
    Table t{const_cast<uint32_t*>(heads), const_cast<float*>(keys),
            const_cast<uint32_t*>(next), nullptr, used, tables, buckets, hash, order};
    std::memset(seen, 0, used);
    int64_t n = 0;
    for (int64_t h = 0; h < (int64_t)tables * buckets; ++h) {
        uint32_t cur = idx(heads[h]);
        bool have_last = false;
        float last = 0;
        while (cur != NIL) {
            if (cur >= used) return -4;
            if (seen[cur]) return -1;
            seen[cur] = 1;
            if (t.head_of(keys[cur]) != heads + h) return -3;
            if (!marked(next[cur])) {
                if (have_last && !(keys[cur] > last)) return -2;
                last = keys[cur];
                have_last = true;
                if (n >= out_size) return -5;
                out[n++] = keys[cur];
            }
            cur = idx(next[cur]);
        }
    }
    return n;
}

// The hash of each key (kind, byte order) as the table computes it: the tests set it
// beside the NumPy reference (hashtable.hash_keys) and the CUDA kernel's.
void ht_hash_keys(const float* keys, int64_t n, int kind, int order, uint32_t* out) {
    for (int64_t i = 0; i < n; ++i) out[i] = hash_key(keys[i], kind, order);
}

}  // extern "C"
